/**
 * Authorization: may this caller do this (apiserver authorization/authorizer). The security issue
 * adds RBAC and Node authorizers; this issue allows everything.
 */
import type { UserInfo } from './authentication.js';

/** What a request wants to do (authorizer.Attributes). */
export interface AuthorizationAttributes {
  user: UserInfo;
  verb: string;
  resourceRequest: boolean;
  /** Resource requests only. */
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Non-resource requests only. */
  path?: string;
}

export type Decision = 'Allow' | 'Deny' | 'NoOpinion';

/**
 * Authorizer decides one request. Called concurrently; must not mutate attrs. 'NoOpinion' passes
 * the request to the next authorizer; if none allows, the request is Forbidden.
 */
export interface Authorizer {
  readonly name: string;
  authorize(attrs: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }>;
}

/** Allows every request (upstream --authorization-mode=AlwaysAllow). */
export class AlwaysAllowAuthorizer implements Authorizer {
  readonly name = 'AlwaysAllow';
  authorize(): Promise<{ decision: Decision }> { return Promise.resolve({ decision: 'Allow' }); }
}

/** Runs the chain; the first Allow or Deny wins. With none, the NoOpinion reasons are joined (upstream's union). */
export async function authorize(chain: readonly Authorizer[], attrs: AuthorizationAttributes): Promise<{ allowed: boolean; reason: string }> {
  const reasons: string[] = [];
  for (const a of chain) {
    const r = await a.authorize(attrs);
    if (r.decision === 'Allow') return { allowed: true, reason: r.reason ?? '' };
    if (r.decision === 'Deny') return { allowed: false, reason: r.reason ?? '' };
    if (r.reason) reasons.push(r.reason);
  }
  return { allowed: false, reason: reasons.join('\n') };
}
