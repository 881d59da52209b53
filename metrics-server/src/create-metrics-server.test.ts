import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import { FakeClientset } from '@mk8s/client/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import { createMetricsServer } from './create-metrics-server.js';
import { FakeKubeletClient, kubeletResourceMetrics, type FakeContainer } from './testing/index.js';

const node = (name: string, ip: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } }, status: { addresses: [{ type: 'Hostname', address: name }, { type: 'InternalIP', address: ip }] } });
const pod = (ns: string, name: string, labels: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: ns, name, labels }, spec: { containers: [{ name: 'c' }] } });

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 10_000; i++) { if (cond()) return; await new Promise((r) => setImmediate(r)); }
  assert.fail(`timed out waiting for ${what}`);
}

function fixture() {
  const clock = new FakeClock();
  const client = new FakeClientset({ clock, objects: [node('node-1', '10.240.0.2'), node('node-2', '10.240.0.3'), pod('kube-system', 'coredns-1', { 'k8s-app': 'kube-dns' }), pod('default', 'web', { app: 'web' })] });
  // Delegated authn/authz answered as the apiserver would: one token per user, and RBAC for one of them.
  client.prependReactor('create', 'tokenreviews', (a) => {
    const token = (a.object as { spec: { token: string } }).spec.token;
    const users: Record<string, string> = { 'reader-token': 'reader', 'nobody-token': 'nobody' };
    return { handled: true, result: { ...(a.object as object), status: users[token] ? { authenticated: true, user: { username: users[token], groups: ['system:authenticated'] } } : { authenticated: false } } };
  });
  client.prependReactor('create', 'subjectaccessreviews', (a) => {
    const spec = (a.object as { spec: { user: string; resourceAttributes?: { group: string } } }).spec;
    const allowed = spec.user === 'reader' && (spec.resourceAttributes?.group === 'metrics.k8s.io' || !spec.resourceAttributes);
    return { handled: true, result: { ...(a.object as object), status: { allowed, ...(allowed ? {} : { reason: '' }) } } };
  });
  const kubelets = new FakeKubeletClient();
  const ms = createMetricsServer({ client, kubeletClient: kubelets, tls: { cert: '', key: '' }, securePort: -1, clock, resolutionMs: 15_000 });
  return { clock, client, kubelets, ms };
}

const containers = (k: number): FakeContainer[] => [
  { namespace: 'kube-system', pod: 'coredns-1', container: 'coredns', cpuSeconds: 10 + 0.15 * k, memoryBytes: 20 << 20 },
  { namespace: 'default', pod: 'web', container: 'c', cpuSeconds: 5 + 15 * k, memoryBytes: (64 << 20) + k * 4096 },
];

test('scrapes every node at its InternalIP:10250 each resolution; figures between the last two points', async () => {
  const f = fixture();
  const ac = new AbortController();
  const T = f.clock.now();
  f.kubelets.texts.set('node-1', kubeletResourceMetrics({ cpuSeconds: 1000, memoryBytes: 1 << 30, timestampMs: T, containers: containers(0) }));
  f.kubelets.texts.set('node-2', kubeletResourceMetrics({ cpuSeconds: 500, memoryBytes: 1 << 29, timestampMs: T, containers: [] }));
  const done = f.ms.run(ac.signal);
  await f.ms.ready;
  await until(() => f.kubelets.calls.length === 2, 'first round');
  assert.deepEqual(f.kubelets.calls.map((c) => `${c.node} ${c.address}:${c.port}`).sort(), ['node-1 10.240.0.2:10250', 'node-2 10.240.0.3:10250']);
  const get = (url: string, token = 'reader-token') => f.ms.handle({ method: 'GET', url, headers: { authorization: `Bearer ${token}` }, peer: [] });
  // one point: nothing to serve yet, not ready
  assert.deepEqual(JSON.parse((await get('/apis/metrics.k8s.io/v1beta1/nodes')).body).items, []);
  assert.equal((await f.ms.handle({ method: 'GET', url: '/readyz', headers: {}, peer: [] })).code, 500);

  f.kubelets.texts.set('node-1', kubeletResourceMetrics({ cpuSeconds: 1003, memoryBytes: 1 << 30, timestampMs: T + 15_000, containers: containers(1) }));
  f.kubelets.texts.set('node-2', kubeletResourceMetrics({ cpuSeconds: 515, memoryBytes: 1 << 29, timestampMs: T + 15_000, containers: [] }));
  await until(() => f.clock.pending() > 0, 'the loop waiting');
  f.clock.step(15_000);
  await until(() => f.kubelets.calls.length === 4, 'second round');
  await until(() => f.ms.storage.ready(), 'storage');
  const nodes = JSON.parse((await get('/apis/metrics.k8s.io/v1beta1/nodes')).body) as { items: { metadata: { name: string }; usage: { cpu: string; memory: string }; window: string }[] };
  assert.deepEqual(nodes.items.map((n) => [n.metadata.name, n.usage.cpu, n.usage.memory, n.window]), [['node-1', '200m', '1Gi', '15s'], ['node-2', '1', '512Mi', '15s']]);
  const pods = JSON.parse((await get('/apis/metrics.k8s.io/v1beta1/pods')).body) as { items: { metadata: { namespace: string; name: string; labels: Record<string, string> }; containers: { name: string; usage: { cpu: string; memory: string } }[] }[] };
  assert.deepEqual(pods.items.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p.containers.map((c) => `${c.name}=${c.usage.cpu},${c.usage.memory}`).join(' ')]),
    [['default/web', 'c=1,65540Ki'], ['kube-system/coredns-1', 'coredns=10m,20Mi']]);
  assert.deepEqual(pods.items[1]?.metadata.labels, { 'k8s-app': 'kube-dns' });
  assert.equal((await f.ms.handle({ method: 'GET', url: '/readyz', headers: {}, peer: [] })).code, 200);

  // a node that stops answering drops out of the next round
  f.kubelets.texts.delete('node-2');
  f.kubelets.texts.set('node-1', kubeletResourceMetrics({ cpuSeconds: 1006, memoryBytes: 1 << 30, timestampMs: T + 30_000, containers: containers(2) }));
  await until(() => f.clock.pending() > 0, 'the loop waiting');
  f.clock.step(15_000);
  await until(() => f.kubelets.calls.length === 6, 'third round');
  await until(() => JSON.parse(f.ms.storage.nodeUsage('node-2') ? '1' : '0') === 0, 'node-2 dropped');
  assert.deepEqual((JSON.parse((await get('/apis/metrics.k8s.io/v1beta1/nodes')).body) as { items: { metadata: { name: string } }[] }).items.map((n) => n.metadata.name), ['node-1']);
  ac.abort();
  await done;
});

test('delegated authn/authz: 401 for a rejected token, 403 without RBAC, health anonymous, /metrics authorized', async () => {
  const f = fixture();
  const ac = new AbortController();
  const done = f.ms.run(ac.signal);
  await f.ms.ready;
  const get = (url: string, headers: Record<string, string> = {}) => f.ms.handle({ method: 'GET', url, headers, peer: [] });
  const bad = await get('/apis/metrics.k8s.io/v1beta1/nodes', { authorization: 'Bearer wrong' });
  assert.equal(bad.code, 401);
  assert.equal(JSON.parse(bad.body).reason, 'Unauthorized');
  const denied = await get('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { authorization: 'Bearer nobody-token' });
  assert.equal(denied.code, 403);
  assert.deepEqual(JSON.parse(denied.body), {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403,
    message: 'pods.metrics.k8s.io is forbidden: User "nobody" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "default"',
    details: { group: 'metrics.k8s.io', kind: 'pods' },
  });
  assert.equal((await get('/apis/metrics.k8s.io/v1beta1/nodes')).code, 403, 'anonymous is authorized like anyone (and denied here)');
  assert.equal((await get('/healthz')).code, 200);
  assert.equal((await get('/livez')).code, 200);
  assert.match((await get('/readyz?verbose')).body, /\[\+\]metric-informer-sync ok\n\[-\]metric-storage-ready failed/);
  assert.equal((await get('/metrics')).code, 403);
  const m = await get('/metrics', { authorization: 'Bearer reader-token' });
  assert.equal(m.code, 200);
  assert.match(m.body, /^apiserver_request_total\{verb="list",resource="pods",code="403"\} 1$/m);
  assert.match(m.body, /^metrics_server_kubelet_request_total\{success="false"\} 2$/m);
  // SARs are cached: a repeated request makes no second review
  const before = f.client.actions().filter((a) => a.resource === 'subjectaccessreviews').length;
  await get('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { authorization: 'Bearer nobody-token' });
  assert.equal(f.client.actions().filter((a) => a.resource === 'subjectaccessreviews').length, before);
  ac.abort();
  await done;
});
