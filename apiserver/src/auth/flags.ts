/**
 * The apiserver's security flags → ApiServerConfig fields. Every flag absent keeps today's
 * behaviour (plain HTTP, anonymous, AlwaysAllow).
 */
import type { SecurityConfig } from './security.js';
import { parseAuthorizationModes } from './security.js';
import type { TlsServingOptions } from './secure-serving.js';

/** Flag names this module reads (each also as MK8S_<FLAG> through env). */
export const SECURITY_FLAGS = ['tls-cert-file', 'tls-private-key-file', 'client-ca-file', 'token-auth-file', 'service-account-key-file',
  'service-account-issuer', 'service-account-signing-key-file', 'authorization-mode', 'anonymous-auth'] as const;

export function securityFromFlags(flag: (name: string) => string | string[] | undefined, env: (name: string) => string | undefined = () => undefined): { security?: SecurityConfig; tls?: TlsServingOptions } {
  const one = (k: string): string | undefined => { const v = flag(k); return (Array.isArray(v) ? v[0] : v) ?? env(k); };
  const many = (k: string): string[] => { const v = flag(k); const list = v === undefined ? (env(k) ? [env(k)!] : []) : Array.isArray(v) ? v : [v]; return list.flatMap((x) => x.split(',')).map((x) => x.trim()).filter((x) => x); };
  const out: { security?: SecurityConfig; tls?: TlsServingOptions } = {};
  const cert = one('tls-cert-file'); const key = one('tls-private-key-file'); const ca = one('client-ca-file');
  if ((cert === undefined) !== (key === undefined)) throw new Error('--tls-cert-file and --tls-private-key-file go together');
  if (cert && key) out.tls = { certFile: cert, keyFile: key, ...(ca ? { clientCAFile: ca } : {}) };
  if (ca && !out.tls) throw new Error('--client-ca-file needs --tls-cert-file/--tls-private-key-file');
  const security: SecurityConfig = {};
  if (ca) security.clientCAFile = ca;
  const tokens = one('token-auth-file'); if (tokens) security.tokenAuthFile = tokens;
  const saKeys = many('service-account-key-file'); if (saKeys.length) security.serviceAccountKeyFiles = saKeys;
  const issuer = one('service-account-issuer'); if (issuer) security.serviceAccountIssuer = issuer;
  const signing = one('service-account-signing-key-file'); if (signing) security.serviceAccountSigningKeyFile = signing;
  const modes = one('authorization-mode'); if (modes) security.authorizationModes = parseAuthorizationModes(modes);
  const anon = one('anonymous-auth');
  if (anon !== undefined) {
    if (anon !== 'true' && anon !== 'false') throw new Error(`invalid --anonymous-auth ${anon}`);
    security.anonymousAuth = anon === 'true';
  }
  if (Object.keys(security).length > 0) out.security = security;
  return out;
}
