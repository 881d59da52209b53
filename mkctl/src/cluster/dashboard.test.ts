import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dashboardAdminObjects, dashboardLoginUrl } from './dashboard.js';
import { parseObjectArg } from '../dashboard/command.js';

test('the login URL carries the token in the fragment only', () => {
  const u = new URL(dashboardLoginUrl('https://127.0.0.1:8443', 'abc.def-ghi'));
  assert.equal(u.pathname, '/');
  assert.equal(u.search, '');
  assert.equal(new URLSearchParams(u.hash.slice(1)).get('token'), 'abc.def-ghi');
});

test('with an object, the login URL opens its chain view', () => {
  const u = new URL(dashboardLoginUrl('https://127.0.0.1:8443/', 't', { kind: 'Deployment', namespace: 'default', name: 'web' }));
  assert.equal(new URLSearchParams(u.hash.slice(1)).get('next'), '/chain/Deployment/default/web');
  const node = new URL(dashboardLoginUrl('https://h', 't', { kind: 'Node', name: 'node-1' }));
  assert.equal(new URLSearchParams(node.hash.slice(1)).get('next'), '/chain/Node/_/node-1');
});

test('KIND/NAME resolves kubectl words to the kind; cluster-scoped kinds take no namespace', () => {
  assert.deepEqual(parseObjectArg('deploy/web', 'prod'), { kind: 'Deployment', namespace: 'prod', name: 'web' });
  assert.deepEqual(parseObjectArg('pods/p-1', 'default'), { kind: 'Pod', namespace: 'default', name: 'p-1' });
  assert.deepEqual(parseObjectArg('node/node-1', 'default'), { kind: 'Node', name: 'node-1' });
  assert.throws(() => parseObjectArg('web', 'default'), /KIND\/NAME/);
});

test('the admin login ServiceAccount is bound to cluster-admin', () => {
  const [sa, crb] = dashboardAdminObjects();
  assert.equal(sa!.kind, 'ServiceAccount');
  assert.deepEqual((crb as unknown as { roleRef: { name: string } }).roleRef.name, 'cluster-admin');
  assert.deepEqual((crb as unknown as { subjects: unknown[] }).subjects, [{ kind: 'ServiceAccount', name: 'mk8s-dashboard-admin', namespace: 'kube-system' }]);
});
