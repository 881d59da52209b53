/**
 * Delegated authentication and authorization, as an extension apiserver does (upstream
 * k8s.io/apiserver pkg/server/options DelegatingAuthenticationOptions / DelegatingAuthorizationOptions):
 *
 * - **front proxy**: a client certificate signed by the requestheader client CA with a CN in the
 *   allowed names (empty: any) → the user in `X-Remote-User`, groups `X-Remote-Group`, extra
 *   `X-Remote-Extra-<key>` (the aggregator's proxied requests);
 * - **client certificate** signed by the client CA → CN and O;
 * - **bearer token** → a TokenReview, answers cached 10 s (upstream's delegated token cache);
 * - otherwise anonymous (`system:anonymous`, `system:unauthenticated`), left to authorization.
 *
 * Authorization: `/healthz`, `/livez`, `/readyz` are always allowed (upstream AlwaysAllowPaths);
 * everything else is a SubjectAccessReview, answers cached 10 s either way.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Attributes } from './api.js';

export interface UserInfo { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> }

export interface RequestHeaderConfig {
  /** PEM of the CA(s) that sign front proxies' client certificates. */
  clientCA: string;
  /** @default [] (any CN) */
  allowedNames?: readonly string[];
  /** @default ['X-Remote-User'] */
  usernameHeaders?: readonly string[];
  /** @default ['X-Remote-Group'] */
  groupHeaders?: readonly string[];
  /** @default ['X-Remote-Extra-'] */
  extraHeaderPrefixes?: readonly string[];
}

type TokenReviewAnswer = { status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } } };
type SarAnswer = { status?: { allowed?: boolean; denied?: boolean; reason?: string } };

export interface DelegatedAuthOptions {
  requestHeader?: RequestHeaderConfig;
  /** PEM of the CA whose client certificates identify users directly (--client-ca-file). */
  clientCA?: string;
  /** POSTs a TokenReview; resolves with the answered object. */
  tokenReview(body: unknown): Promise<TokenReviewAnswer>;
  /** POSTs a SubjectAccessReview; resolves with the answered object. */
  subjectAccessReview(body: unknown): Promise<SarAnswer>;
  now(): number;
  /** @default 10000 */
  cacheTtlMs?: number;
}

/** The verified peer certificate chain of the request, leaf first, as DER. */
export type PeerChain = readonly Buffer[];

export interface AuthDecision { allowed: boolean; reason?: string }

export const ALWAYS_ALLOW_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz']);

const ANONYMOUS: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

function splitCas(pem: string | undefined): X509Certificate[] {
  return (pem ?? '').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)?.map((p) => new X509Certificate(p)) ?? [];
}

function subject(cert: X509Certificate): { cn: string; o: string[] } {
  const lines = cert.subject.split('\n');
  return { cn: lines.find((l) => l.startsWith('CN='))?.slice(3) ?? '', o: lines.filter((l) => l.startsWith('O=')).map((l) => l.slice(2)) };
}

const headerValues = (h: IncomingHttpHeaders, name: string): string[] => {
  const v = h[name.toLowerCase()];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean);
};

export class DelegatedAuth {
  private readonly proxyCas: X509Certificate[];
  private readonly clientCas: X509Certificate[];
  private readonly tokens = new Map<string, { user: UserInfo | undefined; until: number }>();
  private readonly decisions = new Map<string, { d: AuthDecision; until: number }>();

  constructor(private readonly o: DelegatedAuthOptions) {
    this.proxyCas = splitCas(o.requestHeader?.clientCA);
    this.clientCas = splitCas(o.clientCA);
  }

  private issuedBy(leaf: X509Certificate, cas: readonly X509Certificate[]): boolean {
    const nowMs = this.o.now();
    if (Date.parse(leaf.validFrom) > nowMs || Date.parse(leaf.validTo) < nowMs) return false;
    return cas.some((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
  }

  /** Who made the request; undefined when credentials were presented and rejected (401). */
  async authenticate(headers: IncomingHttpHeaders, peer: PeerChain): Promise<UserInfo | undefined> {
    const leafDer = peer[0];
    const leaf = leafDer ? new X509Certificate(leafDer) : undefined;
    const rh = this.o.requestHeader;
    if (leaf && rh && this.issuedBy(leaf, this.proxyCas)) {
      const allowed = rh.allowedNames ?? [];
      const { cn } = subject(leaf);
      if (allowed.length === 0 || allowed.includes(cn)) {
        const username = (rh.usernameHeaders ?? ['X-Remote-User']).map((h) => headerValues(headers, h)[0]).find(Boolean);
        if (username) {
          const groups = (rh.groupHeaders ?? ['X-Remote-Group']).flatMap((h) => headerValues(headers, h));
          const extra: Record<string, string[]> = {};
          for (const prefix of rh.extraHeaderPrefixes ?? ['X-Remote-Extra-']) {
            const p = prefix.toLowerCase();
            for (const [k, v] of Object.entries(headers)) {
              if (!k.startsWith(p) || v === undefined) continue;
              const key = decodeURIComponent(k.slice(p.length));
              extra[key] = [...(extra[key] ?? []), ...(Array.isArray(v) ? v : [v])];
            }
          }
          return { username, groups, ...(Object.keys(extra).length ? { extra } : {}) };
        }
      }
    }
    if (leaf && this.issuedBy(leaf, this.clientCas)) {
      const { cn, o } = subject(leaf);
      return { username: cn, groups: [...o, 'system:authenticated'] };
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(headers.authorization ?? ''))?.[1];
    if (bearer) return this.authenticateToken(bearer);
    return ANONYMOUS;
  }

  private async authenticateToken(token: string): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = this.tokens.get(key);
    const now = this.o.now();
    if (hit && hit.until > now) return hit.user;
    const res = await this.o.tokenReview({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    const u = res.status?.authenticated === true ? res.status.user : undefined;
    const user: UserInfo | undefined = u?.username
      ? { username: u.username, groups: u.groups ?? [], ...(u.uid ? { uid: u.uid } : {}), ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}) }
      : undefined;
    if (this.tokens.size > 10_000) this.tokens.clear();
    this.tokens.set(key, { user, until: now + (this.o.cacheTtlMs ?? 10_000) });
    return user;
  }

  /** May user do attrs? */
  async authorize(user: UserInfo, attrs: Attributes): Promise<AuthDecision> {
    if (attrs.kind === 'nonResource' && ALWAYS_ALLOW_PATHS.has(attrs.path)) return { allowed: true };
    if (user.groups.includes('system:masters')) return { allowed: true };
    const key = JSON.stringify([user.username, [...user.groups].sort(), user.extra ?? {}, attrs]);
    const now = this.o.now();
    const hit = this.decisions.get(key);
    if (hit && hit.until > now) return hit.d;
    const { kind: _kind, ...rest } = attrs;
    const res = await this.o.subjectAccessReview({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: {
        user: user.username, groups: user.groups, ...(user.uid ? { uid: user.uid } : {}), ...(user.extra ? { extra: user.extra } : {}),
        ...(attrs.kind === 'resource' ? { resourceAttributes: rest } : { nonResourceAttributes: rest }),
      },
    });
    const d: AuthDecision = { allowed: res.status?.allowed === true && res.status?.denied !== true, ...(res.status?.reason ? { reason: res.status.reason } : {}) };
    if (this.decisions.size > 10_000) this.decisions.clear();
    this.decisions.set(key, { d, until: now + (this.o.cacheTtlMs ?? 10_000) });
    return d;
  }
}

/** Upstream's Forbidden message for attrs (authorization.ForbiddenMessage shape). */
export function forbiddenMessage(user: UserInfo, a: Attributes): string {
  if (a.kind === 'nonResource') return `forbidden: User "${user.username}" cannot ${a.verb} path "${a.path}"`;
  const what = `User "${user.username}" cannot ${a.verb} resource "${a.resource}" in API group "${a.group}"`;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return `${a.resource}.${a.group}${a.name ? ` "${a.name}"` : ''} is forbidden: ${what}${scope}`;
}
