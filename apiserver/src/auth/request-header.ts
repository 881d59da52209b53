/**
 * Requestheader authentication (upstream authentication/request/headerrequest): a front proxy
 * (the aggregator of another apiserver) presents a client certificate signed by
 * --requestheader-client-ca-file with a CN in --requestheader-allowed-names (empty: any CN), and
 * asserts the user in X-Remote-User, groups in X-Remote-Group, extra in X-Remote-Extra-<key>.
 * The certificate is verified here, not by the TLS layer (which trusts --client-ca-file): only the
 * leaf signed directly by one of the bundle's CAs is accepted. Without a verified proxy certificate
 * or without a username header: no opinion.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Authenticator, UserInfo } from './authentication.js';
import { AUTHENTICATED_GROUP } from './x509.js';
import type { RequestHeaderConfig } from '../bootstrap/extension-apiserver-authentication.js';
import { distinctHeaders, type DistinctHeaders } from './distinct-headers.js';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

export class RequestHeaderAuthenticator implements Authenticator {
  readonly name = 'requestheader';
  private readonly cas: X509Certificate[];
  constructor(private readonly cfg: RequestHeaderConfig, private readonly now: () => number = Date.now) {
    this.cas = (cfg.clientCA.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((p) => new X509Certificate(p));
  }

  authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    // Without a username header there is no opinion whatever the certificate: decided first, so the
    // ordinary request (every client but a front proxy) pays no certificate parsing.
    const user = userFromHeaders(distinctHeaders(req), this.cfg);
    if (!user) return Promise.resolve(undefined);
    const sock = req.socket as Partial<TLSSocket>;
    if (typeof sock.getPeerCertificate !== 'function') return Promise.resolve(undefined);
    return Promise.resolve(this.verifiedPeer(sock as TLSSocket) ? user : undefined);
  }

  /** The peer certificate's checks, made once per connection (its certificate cannot change); the validity window each time. */
  private verifiedPeer(sock: TLSSocket): boolean {
    let v = this.byConnection.get(sock);
    if (!v) {
      const raw = sock.getPeerCertificate()?.raw;
      const leaf = raw ? new X509Certificate(raw) : undefined;
      v = leaf && this.verified(leaf) ? { from: Date.parse(leaf.validFrom), to: Date.parse(leaf.validTo) } : { from: Infinity, to: -Infinity };
      this.byConnection.set(sock, v);
    }
    const t = this.now();
    return t >= v.from && t <= v.to;
  }

  private readonly byConnection = new WeakMap<TLSSocket, { from: number; to: number }>();

  private verified(leaf: X509Certificate): boolean {
    if (!this.cas.some((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey))) return false;
    // As upstream's verifier (ExtKeyUsageClientAuth): a serving certificate of the same CA is no proxy.
    const eku = leaf.keyUsage;
    if (eku?.length && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) return false;
    if (this.cfg.allowedNames.length === 0) return true;
    const cn = /^CN=(.*)$/m.exec(leaf.subject)?.[1];
    return cn !== undefined && this.cfg.allowedNames.includes(cn);
  }
}

/**
 * The user the (already trusted) proxy asserts, or undefined without a username header. Pure;
 * never throws, whatever the headers (none at all, a single string where a list was expected).
 */
export function userFromHeaders(headers: DistinctHeaders | Readonly<Record<string, string | readonly string[] | undefined>> | undefined, cfg: Pick<RequestHeaderConfig, 'usernameHeaders' | 'groupHeaders' | 'extraHeadersPrefixes'>): UserInfo | undefined {
  if (!headers) return undefined;
  const asList = (v: string | readonly string[] | undefined): string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : [...v]);
  const values = (h: string) => asList(headers[h.toLowerCase()]);
  const username = cfg.usernameHeaders.map((h) => values(h)[0]).find((v) => v !== undefined && v !== '');
  if (!username) return undefined;
  // As upstream's AuthenticatedGroupAdder: every authenticated user is in system:authenticated.
  const groups = cfg.groupHeaders.flatMap(values);
  if (!groups.includes(AUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  const extra: Record<string, string[]> = {};
  for (const prefix of cfg.extraHeadersPrefixes.map((p) => p.toLowerCase())) {
    for (const [name, raw] of Object.entries(headers)) {
      const vs = asList(raw);
      if (!name.startsWith(prefix) || name.length === prefix.length || vs.length === 0) continue;
      let key = name.slice(prefix.length);
      try { key = decodeURIComponent(key); } catch { /* kept as sent */ }
      (extra[key] ??= []).push(...vs);
    }
  }
  return { username, groups, ...(Object.keys(extra).length ? { extra } : {}) };
}
