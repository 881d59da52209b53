import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inClusterRestConfig } from './in-cluster.js';

const files: Record<string, string> = { '/sa/token': 'tok\n', '/sa/ca.crt': 'PEM', '/sa/namespace': 'kube-system' };
const readFile = (p: string) => { const f = files[p]; if (f === undefined) throw new Error(`ENOENT ${p}`); return f; };

test('in-cluster config: the Service host and port, the mounted token, CA and namespace', () => {
  assert.deepEqual(inClusterRestConfig({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, readFile, dir: '/sa' }),
    { server: 'https://10.96.0.1:443', namespace: 'kube-system', token: 'tok', ca: 'PEM' });
  assert.equal(inClusterRestConfig({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, readFile, dir: '/sa' }).server, 'https://[fd00::1]:443');
});

test('in-cluster config outside a pod fails as client-go does', () => {
  assert.throws(() => inClusterRestConfig({ env: {}, readFile, dir: '/sa' }), /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined/);
  assert.throws(() => inClusterRestConfig({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, readFile, dir: '/none' }), /ENOENT/);
});
