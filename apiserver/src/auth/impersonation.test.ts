import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { buildImpersonationRequests, impersonate, impersonationAttributes, impersonationForbidden } from './impersonation.js';
import type { AuthorizationAttributes, Authorizer } from './authorization.js';
import type { UserInfo } from './authentication.js';

const h = (o: Record<string, string[]>) => new Map(Object.entries(o));
const req = (headers: Record<string, string[]>): IncomingMessage => {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) flat[k] = v.join(', ');
  return { headers: flat, headersDistinct: { ...headers } } as unknown as IncomingMessage;
};
const ME: UserInfo = { username: 'me', groups: ['system:authenticated'] };
/** Allows only what `allowed` lists as `<resource>[/<sub>]:<ns>:<name>`; records every question. */
function fakeAuthorizer(allowed: string[]): Authorizer & { asked: string[] } {
  const asked: string[] = [];
  return {
    name: 'Fake', asked,
    authorize: async (a: AuthorizationAttributes) => {
      const k = `${a.verb} ${a.apiGroup}/${a.resource}${a.subresource ? `/${a.subresource}` : ''}:${a.namespace ?? ''}:${a.name}`;
      asked.push(k);
      return { decision: allowed.includes(k) ? 'Allow' : 'NoOpinion' };
    },
  };
}

test('impersonation requests and the attributes checked for each (upstream resources and groups)', () => {
  const reqs = buildImpersonationRequests(h({
    'impersonate-user': ['system:serviceaccount:ns1:sa1'], 'impersonate-group': ['g1', 'g2'],
    'impersonate-extra-scopes': ['a', 'b'], 'impersonate-extra-example.com%2fteam': ['x'], 'impersonate-uid': ['u-1'],
  }));
  assert.deepEqual(reqs.map((r) => impersonationAttributes(ME, r)).map((a) => [a.apiGroup, a.resource, a.subresource ?? '', a.namespace ?? '', a.name]), [
    ['', 'serviceaccounts', '', 'ns1', 'sa1'],
    ['', 'groups', '', '', 'g1'],
    ['', 'groups', '', '', 'g2'],
    ['authentication.k8s.io', 'userextras', 'scopes', '', 'a'],
    ['authentication.k8s.io', 'userextras', 'scopes', '', 'b'],
    ['authentication.k8s.io', 'userextras', 'example.com/team', '', 'x'],
    ['authentication.k8s.io', 'uids', '', '', 'u-1'],
  ]);
  assert.ok(reqs.map((r) => impersonationAttributes(ME, r)).every((a) => a.verb === 'impersonate' && a.resourceRequest));
  assert.deepEqual(buildImpersonationRequests(h({ 'impersonate-user': ['alice'] })), [{ kind: 'User', name: 'alice' }]);
  // A malformed service account name is a plain user, as upstream's SplitUsername fails.
  assert.deepEqual(buildImpersonationRequests(h({ 'impersonate-user': ['system:serviceaccount:only-ns'] })), [{ kind: 'User', name: 'system:serviceaccount:only-ns' }]);
  for (const bad of [{ 'impersonate-group': ['g'] }, { 'impersonate-uid': ['u'] }, { 'impersonate-extra-k': ['v'] }]) {
    assert.throws(() => buildImpersonationRequests(h(bad)), (e: Error & { reason?: string }) => e.reason === 'InternalError' && /without impersonating a user/.test(e.message));
  }
});

test("403 messages are upstream's", () => {
  const [user, sa, extra] = buildImpersonationRequests(h({ 'impersonate-user': ['x'] }))
    .concat(buildImpersonationRequests(h({ 'impersonate-user': ['system:serviceaccount:default:default'], 'impersonate-extra-scopes': ['s'] })));
  const y: UserInfo = { username: 'y', groups: [] };
  assert.equal(impersonationForbidden(impersonationAttributes(y, user!), '').message,
    'users "x" is forbidden: User "y" cannot impersonate resource "users" in API group "" at the cluster scope');
  assert.equal(impersonationForbidden(impersonationAttributes(y, sa!), '').message,
    'serviceaccounts "default" is forbidden: User "y" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"');
  const e = impersonationForbidden(impersonationAttributes(y, extra!), '');
  assert.equal(e.message, 'userextras.authentication.k8s.io "s" is forbidden: User "y" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope');
  assert.equal(e.reason, 'Forbidden');
  assert.equal(e.code, 403);
});

test('the impersonated identity: groups as upstream, headers removed, first refusal wins', async () => {
  const all = fakeAuthorizer(['impersonate /users::alice', 'impersonate /groups::devs', 'impersonate /serviceaccounts:ns1:sa1',
    'impersonate /users::system:anonymous', 'impersonate authentication.k8s.io/uids::u-9', 'impersonate authentication.k8s.io/userextras/scopes::read',
    'impersonate /groups::system:unauthenticated']);
  assert.equal(await impersonate(req({}), ME, [all]), undefined);
  const r = req({ 'impersonate-user': ['alice'], 'impersonate-group': ['devs'], 'impersonate-uid': ['u-9'], 'impersonate-extra-scopes': ['read'] });
  assert.deepEqual(await impersonate(r, ME, [all]), { username: 'alice', uid: 'u-9', groups: ['devs', 'system:authenticated'], extra: { scopes: ['read'] } });
  assert.deepEqual(Object.keys(r.headers), [], 'impersonation headers are removed');
  assert.deepEqual(await impersonate(req({ 'impersonate-user': ['alice'] }), ME, [all]), { username: 'alice', groups: ['system:authenticated'] });
  assert.deepEqual(await impersonate(req({ 'impersonate-user': ['system:serviceaccount:ns1:sa1'] }), ME, [all]),
    { username: 'system:serviceaccount:ns1:sa1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'] });
  assert.deepEqual(await impersonate(req({ 'impersonate-user': ['system:serviceaccount:ns1:sa1'], 'impersonate-group': ['devs'] }), ME, [all]),
    { username: 'system:serviceaccount:ns1:sa1', groups: ['devs', 'system:authenticated'] });
  assert.deepEqual(await impersonate(req({ 'impersonate-user': ['system:anonymous'] }), ME, [all]), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  assert.deepEqual(await impersonate(req({ 'impersonate-user': ['alice'], 'impersonate-group': ['system:unauthenticated'] }), ME, [all]),
    { username: 'alice', groups: ['system:unauthenticated'] });
  const some = fakeAuthorizer(['impersonate /users::alice']);
  await assert.rejects(impersonate(req({ 'impersonate-user': ['alice'], 'impersonate-group': ['system:masters', 'devs'] }), ME, [some]),
    (e: Error) => e.message === 'groups "system:masters" is forbidden: User "me" cannot impersonate resource "groups" in API group "" at the cluster scope');
  assert.deepEqual(some.asked, ['impersonate /users::alice', 'impersonate /groups::system:masters']);
});
