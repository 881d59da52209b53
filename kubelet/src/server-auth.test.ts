import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { kubeletAuth, requestAttributes, tokenReviewAuthenticator, webhookAuthorizer } from './server-auth.js';

test('request attributes follow upstream: verb from the method, subresource from the path', () => {
  const cases: [string, string, string, string][] = [
    ['GET', '/stats/summary', 'get', 'stats'],
    ['GET', '/metrics', 'get', 'metrics'],
    ['GET', '/logs/', 'get', 'log'],
    ['POST', '/checkpoint/ns/p/c', 'create', 'checkpoint'],
    ['GET', '/containerLogs/ns/p/c', 'get', 'proxy'],
    ['POST', '/exec/ns/p/c', 'create', 'proxy'],
    ['GET', '/statsfoo', 'get', 'proxy'],
    ['GET', '/healthz', 'get', 'proxy'],
    ['GET', '/spec/', 'get', 'spec'],
    ['GET', '/spec', 'get', 'spec'],
    ['GET', '/metrics/resource', 'get', 'metrics'],
    ['GET', '/stats', 'get', 'stats'],
    ['GET', '/pods', 'get', 'proxy'],
    ['GET', '/configz', 'get', 'proxy'],
    ['PUT', '/run/ns/p/c', 'update', 'proxy'],
    ['DELETE', '/pods', 'delete', 'proxy'],
    ['PATCH', '/pods', 'patch', 'proxy'],
    ['HEAD', '/healthz', 'get', 'proxy'],
  ];
  for (const [method, path, verb, subresource] of cases) {
    assert.deepEqual(requestAttributes('n1', method, path), { verb, resource: 'nodes', subresource, name: 'n1' }, `${method} ${path}`);
  }
});

test('the webhook authorizer sends a SubjectAccessReview and caches allowed 5 min, denied 30 s', async () => {
  let now = 0;
  const sent: unknown[] = [];
  let allow = true;
  const authz = webhookAuthorizer({ now: () => now, review: async (sar) => { sent.push(sar); return { status: { allowed: allow } }; } });
  const admin = { name: 'kube-apiserver-kubelet-client', groups: ['system:masters'] };
  const attrs = { verb: 'get', resource: 'nodes' as const, subresource: 'proxy', name: 'n1' };
  assert.deepEqual(await authz(admin, attrs), { allowed: true });
  assert.deepEqual(sent[0], {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
    spec: { user: admin.name, groups: admin.groups, resourceAttributes: { verb: 'get', group: '', version: 'v1', resource: 'nodes', subresource: 'proxy', name: 'n1' } },
  });
  allow = false;
  now = 299_000;
  assert.equal((await authz(admin, attrs)).allowed, true, 'cached');
  assert.equal(sent.length, 1);
  now = 301_000;
  assert.equal((await authz(admin, attrs)).allowed, false, 'expired, asked again');
  now = 320_000;
  allow = true;
  assert.equal((await authz(admin, attrs)).allowed, false, 'denial cached');
  now = 332_000;
  assert.equal((await authz(admin, attrs)).allowed, true);
  assert.equal(sent.length, 3);
});

const plainReq = (headers: Record<string, string> = {}, url = '/pods', method = 'GET') => ({ headers, url, method, socket: {} }) as unknown as IncomingMessage;

test('bearer tokens: TokenReview answers who; an unknown token is 401, never anonymous; results cached 2 min by hash', async () => {
  let now = 0;
  const sent: unknown[] = [];
  const authn = tokenReviewAuthenticator({ now: () => now, review: async (tr) => {
    sent.push(tr);
    const token = (tr as { spec: { token: string } }).spec.token;
    return token === 'good' ? { status: { authenticated: true, user: { username: 'system:serviceaccount:kube-system:metrics-server', uid: 'u1', groups: ['system:serviceaccounts'] } } } : { status: { authenticated: false } };
  } });
  const asked: unknown[] = [];
  const check = kubeletAuth({ nodeName: 'n1', anonymousAuth: true, authenticateToken: authn, authorize: async (user, attrs) => { asked.push([user, attrs]); return { allowed: user.name.endsWith('metrics-server') && attrs.subresource === 'metrics' }; } });
  assert.deepEqual(await check(plainReq({ authorization: 'Bearer good' }, '/metrics/resource')), { user: { name: 'system:serviceaccount:kube-system:metrics-server', uid: 'u1', groups: ['system:serviceaccounts'] } });
  assert.deepEqual(sent[0], { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'good' } });
  const denied = await check(plainReq({ authorization: 'Bearer good' }, '/pods'));
  assert.deepEqual(denied, { refusal: { code: 403, reason: 'Forbidden', message: 'Forbidden (user=system:serviceaccount:kube-system:metrics-server, verb=get, resource=nodes, subresource=proxy)' } });
  // Even with anonymous allowed, a bad token is refused.
  assert.deepEqual(await check(plainReq({ authorization: 'Bearer bad' })), { refusal: { code: 401, reason: 'Unauthorized', message: 'Unauthorized' } });
  assert.equal(sent.length, 2, 'good was cached');
  now = 121_000;
  await check(plainReq({ authorization: 'Bearer good' }, '/metrics'));
  assert.equal(sent.length, 3, 'expired after 2 min');
  // Without a token authenticator a bearer token is a 401; a failing TokenReview call is a 401.
  assert.equal((await kubeletAuth({ nodeName: 'n1', anonymousAuth: true })(plainReq({ authorization: 'Bearer good' })) as { refusal: { code: number } }).refusal.code, 401);
  const broken = kubeletAuth({ nodeName: 'n1', authenticateToken: async () => { throw new Error('apiserver down'); } });
  assert.equal((await broken(plainReq({ authorization: 'Bearer good' })) as { refusal: { code: number } }).refusal.code, 401);
  assert.equal((await kubeletAuth({ nodeName: 'n1' })(plainReq()) as { refusal: { code: number } }).refusal.code, 401, 'anonymous off: 401');
});
