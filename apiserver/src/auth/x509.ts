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
  authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const sock = req.socket as Partial<TLSSocket>;
    if (typeof sock.getPeerCertificate !== 'function') return Promise.resolve(undefined);
    const cert = sock.getPeerCertificate();
    if (!cert || Object.keys(cert).length === 0) return Promise.resolve(undefined);
    // Presented but not verified (requestCert without rejectUnauthorized): upstream answers 401.
    if (!sock.authorized) return Promise.reject(new ApiError('Unauthorized', 'Unauthorized'));
    return Promise.resolve(userFromSubject(cert.subject as unknown as Record<string, string | string[] | undefined>));
  }
}

/** CN → username, O → groups (+ system:authenticated). */
export function userFromSubject(subject: Record<string, string | string[] | undefined> | undefined): UserInfo | undefined {
  const cn = subject?.['CN'];
  const username = Array.isArray(cn) ? cn[0] : cn;
  if (!username) return undefined;
  const o = subject?.['O'];
  const orgs = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return { username, groups: [...orgs, AUTHENTICATED_GROUP] };
}
