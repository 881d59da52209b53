import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestAttributes, webhookAuthorizer } from './server-auth.js';

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
