/**
 * Impersonation (upstream apiserver/pkg/endpoints/filters/impersonation.go): a caller acts as
 * another identity with `Impersonate-User`, `Impersonate-Group` (repeatable), `Impersonate-Uid`
 * and `Impersonate-Extra-<key>` (repeatable; the key lower-cased and percent-decoded). Each
 * requested part is authorized for the CALLER with verb `impersonate` on: `users` (a plain user
 * name), `serviceaccounts` in the namespace (a `system:serviceaccount:<ns>:<name>` user), `groups`,
 * `uids.authentication.k8s.io` and `userextras.authentication.k8s.io/<key>`, named by the value.
 * The first refusal is a 403 with upstream's message; the request then runs as the impersonated
 * identity through authorization, admission and audit. Groups as upstream: a service account gets
 * its fixed groups when none are given; a non-anonymous user always gets `system:authenticated`
 * (unless `system:authenticated` or `system:unauthenticated` was asked for), `system:anonymous`
 * gets `system:unauthenticated`. Groups, extra or uid without a user: 500 as upstream's
 * InternalError ("requested ... without impersonating a user").
 */
import type { IncomingMessage } from 'node:http';
import { ApiError } from '@mk8s/api';
import { forbidden } from '../admission/plugins/namespace-lifecycle.js';
import type { UserInfo } from './authentication.js';
import { distinctHeaders } from './distinct-headers.js';
import { authorize, type AuthorizationAttributes, type Authorizer } from './authorization.js';

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA = 'impersonate-extra-';
const SA_PREFIX = 'system:serviceaccount:';
const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** What the request asks to impersonate, one authorization check each (in upstream's order). */
export interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'Uid' | 'UserExtra';
  name: string;
  namespace?: string;
  /** UserExtra: the extra key. */
  key?: string;
}

/** The impersonation headers of a request, each value separately (Node joins repeated headers otherwise). */
export function impersonationHeaders(req: IncomingMessage): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, v] of Object.entries(distinctHeaders(req))) {
    if (!name.startsWith('impersonate-') || v === undefined) continue;
    out.set(name, [...v]);
  }
  return out;
}

/** Upstream's buildImpersonationRequests; throws InternalError for groups/extra/uid without a user. */
export function buildImpersonationRequests(headers: Map<string, string[]>): ImpersonationRequest[] {
  const out: ImpersonationRequest[] = [];
  const user = headers.get(USER)?.[0] ?? '';
  if (user) {
    const sa = splitServiceAccount(user);
    out.push(sa ? { kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace } : { kind: 'User', name: user });
  }
  for (const g of headers.get(GROUP) ?? []) out.push({ kind: 'Group', name: g });
  for (const [h, values] of headers) {
    if (!h.startsWith(EXTRA)) continue;
    const key = unescapeKey(h.slice(EXTRA.length)).toLowerCase();
    for (const v of values) out.push({ kind: 'UserExtra', name: v, key });
  }
  const uid = headers.get(UID)?.[0] ?? '';
  if (uid) out.push({ kind: 'Uid', name: uid });
  if (!user && out.length > 0) {
    const asked = out.map((r) => (r.kind === 'UserExtra' ? `${r.kind} ${r.key}=${r.name}` : `${r.kind} ${r.name}`)).join(', ');
    throw new ApiError('InternalError', `Internal error occurred: requested [${asked}] without impersonating a user`);
  }
  return out;
}

function splitServiceAccount(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(SA_PREFIX)) return undefined;
  const parts = user.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

function unescapeKey(k: string): string {
  try { return decodeURIComponent(k); } catch { return k; }
}

/** The authorization attributes of one impersonation request. */
export function impersonationAttributes(requestor: UserInfo, r: ImpersonationRequest): AuthorizationAttributes {
  const base = { user: requestor, verb: 'impersonate', resourceRequest: true, name: r.name };
  switch (r.kind) {
    case 'User': return { ...base, apiGroup: '', resource: 'users' };
    case 'ServiceAccount': return { ...base, apiGroup: '', resource: 'serviceaccounts', namespace: r.namespace ?? '' };
    case 'Group': return { ...base, apiGroup: '', resource: 'groups' };
    case 'Uid': return { ...base, apiGroup: AUTHENTICATION_GROUP, resource: 'uids' };
    case 'UserExtra': return { ...base, apiGroup: AUTHENTICATION_GROUP, resource: 'userextras', subresource: r.key ?? '' };
  }
}

/** responsewriters.Forbidden for impersonation attributes: `users "x" is forbidden: User "y" cannot impersonate resource "users" in API group "" at the cluster scope`. */
export function impersonationForbidden(a: AuthorizationAttributes, reason: string): ApiError {
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource!;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource!;
  return forbidden(qualified, a.name ?? '', `User "${a.user.username}" cannot impersonate resource "${res}" in API group "${a.apiGroup ?? ''}"${scope}${reason ? `: ${reason}` : ''}`);
}

/**
 * The identity a request runs as: undefined when it impersonates no one, else the impersonated
 * user (after every part was authorized for requestor). Throws ApiError Forbidden / InternalError.
 * Removes the impersonation headers from req, so nothing downstream (proxies) passes them on.
 */
export async function impersonate(req: IncomingMessage, requestor: UserInfo, authorizers: readonly Authorizer[]): Promise<UserInfo | undefined> {
  const headers = impersonationHeaders(req);
  if (headers.size === 0) return undefined;
  const requests = buildImpersonationRequests(headers);
  for (const h of headers.keys()) delete req.headers[h];
  if (requests.length === 0) return undefined;
  const groupsSpecified = headers.has(GROUP);
  let username = '';
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    const attrs = impersonationAttributes(requestor, r);
    const decision = await authorize(authorizers, attrs);
    if (!decision.allowed) throw impersonationForbidden(attrs, decision.reason);
    switch (r.kind) {
      case 'ServiceAccount':
        username = `${SA_PREFIX}${r.namespace}:${r.name}`;
        if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace}`];
        break;
      case 'User': username = r.name; break;
      case 'Group': groups.push(r.name); break;
      case 'Uid': uid = r.name; break;
      case 'UserExtra': (extra[r.key!] ??= []).push(r.name); break;
    }
  }
  if (username !== 'system:anonymous') {
    if (!groups.includes('system:authenticated') && !groups.includes('system:unauthenticated')) groups.push('system:authenticated');
  } else if (!groups.includes('system:unauthenticated')) groups.push('system:unauthenticated');
  return { username, groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
}
