/**
 * Anonymous access limited to the public health and version paths: every other unauthenticated
 * request gets 401 (upstream with --anonymous-auth restricted to /healthz, /livez, /readyz, /version,
 * the paths system:public-info-viewer grants).
 */
import type { IncomingMessage } from 'node:http';
import { ANONYMOUS_USER, type Authenticator, type UserInfo } from './authentication.js';

export const PUBLIC_PATHS: readonly string[] = ['/healthz', '/livez', '/readyz', '/version'];

export function isPublicPath(url: string): boolean {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(/\/+$/, '');
  return PUBLIC_PATHS.some((p) => path === p || path.startsWith(`${p}/`));
}

export class PublicPathsAnonymousAuthenticator implements Authenticator {
  readonly name = 'anonymous-public';
  authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    return Promise.resolve(isPublicPath(req.url ?? '/') ? ANONYMOUS_USER : undefined);
  }
}
