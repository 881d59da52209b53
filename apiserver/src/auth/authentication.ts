/**
 * Authentication: who is calling (apiserver authentication/authenticator). The security issue
 * adds client-certificate and token authenticators; until then every request is anonymous-allowed.
 */
import type { IncomingMessage } from 'node:http';

/** The caller, as authorization and admission see it (user.Info). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/**
 * Authenticator identifies the caller of one request. Called once per request, concurrently.
 * Resolves undefined when it has no opinion (the next authenticator is tried); rejects with an
 * ApiError Unauthorized when credentials were presented but are invalid.
 */
export interface Authenticator {
  readonly name: string;
  authenticate(req: IncomingMessage): Promise<UserInfo | undefined>;
}

export const ANONYMOUS_USER: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

/** Treats every caller as system:anonymous (upstream --anonymous-auth). */
export class AnonymousAuthenticator implements Authenticator {
  readonly name = 'Anonymous';
  authenticate(): Promise<UserInfo | undefined> { return Promise.resolve(ANONYMOUS_USER); }
}

/** Tries each authenticator in order; the first that answers wins. */
export async function authenticate(chain: readonly Authenticator[], req: IncomingMessage): Promise<UserInfo | undefined> {
  for (const a of chain) {
    const user = await a.authenticate(req);
    if (user) return user;
  }
  return undefined;
}
