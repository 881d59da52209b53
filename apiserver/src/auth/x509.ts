/**
 * x509 client-certificate authentication (apiserver authentication/request/x509): the TLS layer
 * has already verified the chain against --client-ca-file; the subject's CN is the user and each O
 * a group. Requests without a verified peer certificate get no opinion.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ApiError } from '@mk8s/api';
import type { Authenticator, UserInfo } from './authentication.js';

export const AUTHENTICATED_GROUP = 'system:authenticated';

export class X509Authenticator implements Authenticator {
  readonly name = 'x509';
  constructor(private readonly now: () => number = Date.now) {}

  authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const sock = req.socket as Partial<TLSSocket>;
    if (typeof sock.getPeerCertificate !== 'function') return Promise.resolve(undefined);
    const peer = this.peer(sock as TLSSocket);
    if (peer === 'none') return Promise.resolve(undefined);
    // Presented but not verified (requestCert without rejectUnauthorized), or expired since the
    // handshake on a long-lived connection: upstream answers 401.
    const t = this.now();
    if (peer === 'unverified' || t < peer.from || t > peer.to) return Promise.reject(new ApiError('Unauthorized', 'Unauthorized'));
    return Promise.resolve(peer.user);
  }

  /**
   * What the connection's certificate says, worked out once per TLS connection: the certificate
   * and the handshake's verdict cannot change on it, and getPeerCertificate() builds a new object
   * (with the whole certificate parsed) on every call.
   */
  private peer(sock: TLSSocket): Peer {
    let p = this.byConnection.get(sock);
    if (p) return p;
    const cert = sock.getPeerCertificate();
    if (!cert || Object.keys(cert).length === 0) p = 'none';
    else if (!sock.authorized) p = 'unverified';
    else p = { user: userFromSubject(cert.subject as unknown as Record<string, string | string[] | undefined>), from: Date.parse(cert.valid_from), to: Date.parse(cert.valid_to) };
    this.byConnection.set(sock, p);
    return p;
  }

  private readonly byConnection = new WeakMap<TLSSocket, Peer>();
}

type Peer = 'none' | 'unverified' | { user: UserInfo | undefined; from: number; to: number };

/** CN → username, O → groups (+ system:authenticated). */
export function userFromSubject(subject: Record<string, string | string[] | undefined> | undefined): UserInfo | undefined {
  const cn = subject?.['CN'];
  const username = Array.isArray(cn) ? cn[0] : cn;
  if (!username) return undefined;
  const o = subject?.['O'];
  const orgs = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return { username, groups: [...orgs, AUTHENTICATED_GROUP] };
}
