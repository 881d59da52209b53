/**
 * ServiceAccount tokens (apiserver serviceaccount/jwt.go + the bound-token validator): RS256 JWTs
 * signed with the --service-account-key-file key, carrying audience, expiry and the pod and
 * ServiceAccount they are bound to. A token is refused once its pod or ServiceAccount is gone (or
 * replaced by a same-named object with another uid).
 */
import type { IncomingMessage } from 'node:http';
import { createHash, createPrivateKey, createPublicKey, createSign, createVerify, randomUUID, type KeyObject } from 'node:crypto';
import { ApiError, type KubeObject } from '@mk8s/api';
import type { Clock } from '@mk8s/component-base';
import type { Authenticator, UserInfo } from './authentication.js';
import { bearerToken } from './token-file.js';
import { AUTHENTICATED_GROUP } from './x509.js';

/** Upstream's default issuer and audience (--service-account-issuer / --api-audiences). */
export const DEFAULT_SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const SA_USER_PREFIX = 'system:serviceaccount:';
export const SA_GROUP = 'system:serviceaccounts';

export interface ServiceAccountClaims {
  iss: string;
  /** Token id (upstream ServiceAccountTokenJTI), surfaced as the credential-id user extra. */
  jti?: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  'kubernetes.io': {
    namespace: string;
    serviceaccount: { name: string; uid: string };
    pod?: { name: string; uid: string };
    secret?: { name: string; uid: string };
    /** The node of the bound pod (ServiceAccountTokenPodNodeInfo). */
    node?: { name: string; uid?: string };
    /** Extended tokens (exp pushed to a year for old clients): when the token would have expired. */
    warnafter?: number;
  };
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** Signs bound ServiceAccount tokens (the TokenRequest API and the kubelet's projected volume use this). */
export class ServiceAccountTokenIssuer {
  private readonly key: KeyObject;
  private readonly kid: string;
  constructor(private readonly o: { privateKeyPem: string; clock: Clock; issuer?: string }) {
    this.key = createPrivateKey(o.privateKeyPem);
    // Upstream's key id: the SHA-256 of the public key's DER, base64url.
    this.kid = b64url(createHash('sha256').update(createPublicKey(this.key).export({ type: 'spki', format: 'der' })).digest());
  }

  /** The iss claim of the tokens issued. */
  get issuer(): string { return this.o.issuer ?? DEFAULT_SA_ISSUER; }

  /** A token for sa (and pod, when bound), valid for expirationSeconds (@default 3600). */
  issue(sa: KubeObject, o: {
    pod?: KubeObject; secret?: KubeObject; node?: { name: string; uid?: string }; audiences?: string[]; expirationSeconds?: number;
    /** Seconds after which a (lifetime-extended) token counts as stale (the warnafter claim). */
    warnAfterSeconds?: number;
  } = {}): string {
    const now = Math.floor(this.o.clock.now() / 1000);
    const ns = sa.metadata.namespace ?? '';
    const claims: ServiceAccountClaims = {
      iss: this.o.issuer ?? DEFAULT_SA_ISSUER,
      sub: `${SA_USER_PREFIX}${ns}:${sa.metadata.name}`,
      aud: o.audiences ?? [this.o.issuer ?? DEFAULT_SA_ISSUER],
      exp: now + (o.expirationSeconds ?? 3600), iat: now, nbf: now, jti: randomUUID(),
      'kubernetes.io': {
        namespace: ns,
        serviceaccount: { name: sa.metadata.name, uid: sa.metadata.uid ?? '' },
        ...(o.pod ? { pod: { name: o.pod.metadata.name, uid: o.pod.metadata.uid ?? '' } } : {}),
        ...(o.secret ? { secret: { name: o.secret.metadata.name, uid: o.secret.metadata.uid ?? '' } } : {}),
        ...(o.node ? { node: o.node } : {}),
        ...(o.warnAfterSeconds !== undefined ? { warnafter: now + o.warnAfterSeconds } : {}),
      },
    };
    const head = b64url(JSON.stringify({ alg: 'RS256', kid: this.kid, typ: 'JWT' }));
    const body = b64url(JSON.stringify(claims));
    const sig = createSign('RSA-SHA256').update(`${head}.${body}`).sign(this.key);
    return `${head}.${body}.${b64url(sig)}`;
  }
}

export interface ServiceAccountAuthenticatorOptions {
  /** PEM public key(s) (or private keys, whose public half is used) that may have signed tokens. */
  publicKeyPems: string[];
  clock: Clock;
  /** Accepted issuer. @default DEFAULT_SA_ISSUER */
  issuer?: string;
  /** The token's aud must include one of these. @default [issuer] */
  audiences?: string[];
  /** Current objects by namespace/name; undefined when not found. */
  getServiceAccount(namespace: string, name: string): Promise<KubeObject | undefined>;
  getPod(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Needed to check Secret-bound tokens; without it they are refused. */
  getSecret?(namespace: string, name: string): Promise<KubeObject | undefined>;
}

const unauthorized = () => new ApiError('Unauthorized', 'Unauthorized');

export class ServiceAccountAuthenticator implements Authenticator {
  readonly name = 'serviceaccount';
  private readonly keys: KeyObject[];
  constructor(private readonly o: ServiceAccountAuthenticatorOptions) {
    this.keys = o.publicKeyPems.map((p) => createPublicKey(p));
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const token = bearerToken(req);
    if (!token) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    let header: { alg?: unknown }; let claims: Partial<ServiceAccountClaims>;
    try {
      header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as { alg?: unknown };
      claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Partial<ServiceAccountClaims>;
    } catch { return undefined; }
    const issuer = this.o.issuer ?? DEFAULT_SA_ISSUER;
    // Not ours (another issuer's JWT): no opinion, as upstream's issuer check does.
    if (typeof claims !== 'object' || claims === null || claims.iss !== issuer) return undefined;
    if (header.alg !== 'RS256') throw unauthorized();
    const signed = `${parts[0]}.${parts[1]}`;
    const sig = Buffer.from(parts[2]!, 'base64url');
    if (!this.keys.some((k) => createVerify('RSA-SHA256').update(signed).verify(k, sig))) throw unauthorized();
    const now = Math.floor(this.o.clock.now() / 1000);
    if (typeof claims.exp !== 'number' || now >= claims.exp) throw unauthorized();
    if (typeof claims.nbf === 'number' && now < claims.nbf) throw unauthorized();
    const aud = Array.isArray(claims.aud) ? claims.aud : typeof claims.aud === 'string' ? [claims.aud] : [];
    const accepted = this.o.audiences ?? [issuer];
    if (!aud.some((a) => accepted.includes(a))) throw unauthorized();
    const k = claims['kubernetes.io'];
    if (!k || typeof k.namespace !== 'string' || !k.serviceaccount || typeof k.serviceaccount.name !== 'string') throw unauthorized();
    if (claims.sub !== `${SA_USER_PREFIX}${k.namespace}:${k.serviceaccount.name}`) throw unauthorized();
    const sa = await this.o.getServiceAccount(k.namespace, k.serviceaccount.name);
    if (!sa || sa.metadata.uid !== k.serviceaccount.uid || sa.metadata.deletionTimestamp) throw unauthorized();
    const extra: Record<string, string[]> = {};
    if (k.pod) {
      const pod = await this.o.getPod(k.namespace, k.pod.name);
      if (!pod || pod.metadata.uid !== k.pod.uid || pod.metadata.deletionTimestamp) throw unauthorized();
      extra['authentication.kubernetes.io/pod-name'] = [k.pod.name];
      extra['authentication.kubernetes.io/pod-uid'] = [k.pod.uid];
      const nodeName = (pod['spec'] as { nodeName?: string } | undefined)?.nodeName;
      if (nodeName) extra['authentication.kubernetes.io/node-name'] = [nodeName];
      if (k.node?.uid) extra['authentication.kubernetes.io/node-uid'] = [k.node.uid];
    }
    if (typeof claims.jti === 'string' && claims.jti) extra['authentication.kubernetes.io/credential-id'] = [`JTI=${claims.jti}`];
    if (k.secret) {
      const secret = await this.o.getSecret?.(k.namespace, k.secret.name);
      if (!secret || secret.metadata.uid !== k.secret.uid || secret.metadata.deletionTimestamp) throw unauthorized();
    }
    return {
      username: claims.sub, uid: k.serviceaccount.uid,
      groups: [SA_GROUP, `${SA_GROUP}:${k.namespace}`, AUTHENTICATED_GROUP],
      extra,
    };
  }
}
