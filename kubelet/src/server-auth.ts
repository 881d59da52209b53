/**
 * Authentication and authorization of the kubelet API (upstream pkg/kubelet/server/auth.go and
 * the kubelet's --anonymous-auth, --client-ca-file, --authentication-token-webhook and
 * --authorization-mode): x509 client certificates signed by the --client-ca-file CA (CN → user,
 * O → groups), else a bearer token the apiserver vouches for through a TokenReview (cached 2 min as
 * upstream's --authentication-token-webhook-cache-ttl), anonymous refused with 401 (an invalid
 * token too), and every request mapped to a `nodes/<subresource>` check that the apiserver answers
 * through a SubjectAccessReview (mode Webhook), cached as upstream (allowed 5 min, denied 30 s).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

export interface KubeletUser { name: string; groups: string[]; uid?: string; extra?: Record<string, string[]> }

/** Resolves the user a bearer token belongs to, undefined when the apiserver does not vouch for it. A throw is a 401 too. */
export type KubeletTokenAuthenticator = (token: string) => Promise<KubeletUser | undefined>;

/** What one request asks for, as a SubjectAccessReview's resourceAttributes. */
export interface KubeletRequestAttributes { verb: string; resource: 'nodes'; subresource: string; name: string }

export interface AuthDecision { allowed: boolean; reason?: string }

/** Answers whether user may do attrs. Called concurrently; a throw refuses the request with 403. */
export type KubeletAuthorizer = (user: KubeletUser, attrs: KubeletRequestAttributes) => Promise<AuthDecision>;

/** A refusal to send as a Status: 401 or 403. */
export interface AuthRefusal { code: 401 | 403; reason: 'Unauthorized' | 'Forbidden'; message: string }

export interface KubeletAuthOptions {
  nodeName: string;
  /** Let requests without a verified client certificate in as system:anonymous. @default false */
  anonymousAuth?: boolean;
  /** @default AlwaysAllow */
  authorize?: KubeletAuthorizer;
  /** Bearer tokens (--authentication-token-webhook). @default none: a bearer token alone is a 401 */
  authenticateToken?: KubeletTokenAuthenticator;
}

/** The user a TLS client certificate names, or undefined when none was presented or it did not verify. */
export function userFromSocket(req: IncomingMessage): KubeletUser | undefined {
  const sock = req.socket as Partial<TLSSocket>;
  if (!sock.authorized || typeof sock.getPeerCertificate !== 'function') return undefined;
  const cert = sock.getPeerCertificate();
  const cn = cert?.subject?.CN;
  if (!cn) return undefined;
  const o = cert.subject.O as string | string[] | undefined;
  return { name: Array.isArray(cn) ? cn[0]! : cn, groups: o === undefined ? [] : Array.isArray(o) ? o : [o] };
}

/** upstream GetRequestAttributes: verb from the method, subresource from the path (proxy by default). */
export function requestAttributes(nodeName: string, method: string, path: string): KubeletRequestAttributes {
  const verb = ({ GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[method.toUpperCase()] ?? '';
  const under = (p: string) => path === p || path.startsWith(`${p}/`);
  const subresource = under('/stats') ? 'stats' : under('/metrics') ? 'metrics' : under('/logs') ? 'log'
    : under('/checkpoint') ? 'checkpoint' : under('/spec') ? 'spec' : 'proxy';
  return { verb, resource: 'nodes', subresource, name: nodeName };
}

/** Builds the check run before every request and upgrade; resolves the user, or a refusal. */
export function kubeletAuth(o: KubeletAuthOptions): (req: IncomingMessage) => Promise<{ user: KubeletUser } | { refusal: AuthRefusal }> {
  return async (req) => {
    const unauthorized = { refusal: { code: 401 as const, reason: 'Unauthorized' as const, message: 'Unauthorized' } };
    let user = userFromSocket(req);
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!user && bearer) {
      // A token presented and not vouched for is a 401, never anonymous (upstream's union authenticator).
      if (!o.authenticateToken) return unauthorized;
      try { user = await o.authenticateToken(bearer); } catch { return unauthorized; }
      if (!user) return unauthorized;
    }
    if (!user) {
      if (!o.anonymousAuth) return unauthorized;
      user = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
    }
    const path = new URL(req.url ?? '/', 'https://kubelet').pathname;
    const attrs = requestAttributes(o.nodeName, req.method ?? 'GET', path);
    let d: AuthDecision;
    try { d = o.authorize ? await o.authorize(user, attrs) : { allowed: true }; } catch (err) {
      d = { allowed: false, reason: `authorization error: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (d.allowed) return { user };
    return { refusal: { code: 403, reason: 'Forbidden', message: `Forbidden (user=${user.name}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource})` } };
  };
}

export interface WebhookAuthorizerOptions {
  /** Sends one SubjectAccessReview and returns the answered object (the kubelet's apiserver client). */
  review: (sar: unknown) => Promise<{ status?: { allowed?: boolean; denied?: boolean; reason?: string } }>;
  /** @default 300000 (upstream --authorization-webhook-cache-authorized-ttl 5m) */
  allowedTtlMs?: number;
  /** @default 30000 (upstream --authorization-webhook-cache-unauthorized-ttl 30s) */
  deniedTtlMs?: number;
  now?: () => number;
}

/** Authorization mode Webhook: asks the apiserver with a SubjectAccessReview, caching answers. */
export function webhookAuthorizer(o: WebhookAuthorizerOptions): KubeletAuthorizer {
  const cache = new Map<string, { d: AuthDecision; until: number }>();
  const now = o.now ?? Date.now;
  return async (user, attrs) => {
    const key = JSON.stringify([user.name, [...user.groups].sort(), attrs.verb, attrs.subresource, attrs.name]);
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.d;
    const res = await o.review({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user: user.name, groups: user.groups, ...(user.uid ? { uid: user.uid } : {}), ...(user.extra ? { extra: user.extra } : {}), resourceAttributes: { verb: attrs.verb, group: '', version: 'v1', resource: attrs.resource, subresource: attrs.subresource, name: attrs.name } },
    });
    const d: AuthDecision = { allowed: res.status?.allowed === true && res.status?.denied !== true, ...(res.status?.reason ? { reason: res.status.reason } : {}) };
    if (cache.size > 10_000) cache.clear();
    cache.set(key, { d, until: now() + (d.allowed ? o.allowedTtlMs ?? 300_000 : o.deniedTtlMs ?? 30_000) });
    return d;
  };
}

export interface TokenReviewAuthenticatorOptions {
  /** Sends one TokenReview and returns the answered object (the kubelet's apiserver client). */
  review: (tr: unknown) => Promise<{ status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } } }>;
  /** @default 120000 (upstream --authentication-token-webhook-cache-ttl 2m; answers either way) */
  ttlMs?: number;
  now?: () => number;
}

/** --authentication-token-webhook: asks the apiserver who a bearer token is (TokenReview), caching answers by the token's hash. */
export function tokenReviewAuthenticator(o: TokenReviewAuthenticatorOptions): KubeletTokenAuthenticator {
  const cache = new Map<string, { user: KubeletUser | undefined; until: number }>();
  const now = o.now ?? Date.now;
  return async (token) => {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.user;
    const res = await o.review({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    const u = res.status?.authenticated === true ? res.status.user : undefined;
    const user: KubeletUser | undefined = u?.username
      ? { name: u.username, groups: u.groups ?? [], ...(u.uid ? { uid: u.uid } : {}), ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}) }
      : undefined;
    if (cache.size > 10_000) cache.clear();
    cache.set(key, { user, until: now() + (o.ttlMs ?? 120_000) });
    return user;
  };
}
