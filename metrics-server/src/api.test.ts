import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attributesFor, goDuration, route, serve, usageList, type ApiSources, type MetaLike } from './api.js';
import type { MetricsBatch, MetricsPoint } from './decode.js';
import { MetricsStorage } from './storage.js';

const T = 1_700_000_000_000;
const pt = (timestampMs: number, cpuSeconds: number, memoryBytes: number): MetricsPoint => ({ startTimeMs: 0, timestampMs, cumulativeCpuNs: Math.round(cpuSeconds * 1e9), memoryBytes });

for (const tc of [
  { path: '/apis', want: { kind: 'root' } },
  { path: '/apis/metrics.k8s.io', want: { kind: 'group' } },
  { path: '/apis/metrics.k8s.io/v1beta1/', want: { kind: 'version' } },
  { path: '/apis/metrics.k8s.io/v1beta1/nodes', want: { kind: 'nodes' } },
  { path: '/apis/metrics.k8s.io/v1beta1/nodes/node-1', want: { kind: 'nodes', name: 'node-1' } },
  { path: '/apis/metrics.k8s.io/v1beta1/pods', want: { kind: 'pods', namespace: '' } },
  { path: '/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods', want: { kind: 'pods', namespace: 'kube-system' } },
  { path: '/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods/coredns-1', want: { kind: 'pods', namespace: 'kube-system', name: 'coredns-1' } },
  { path: '/apis/metrics.k8s.io/v1beta1/namespaces/kube-system', want: undefined },
  { path: '/apis/metrics.k8s.io/v1/nodes', want: undefined },
  { path: '/api/v1/nodes', want: undefined },
]) test(`route ${tc.path}`, () => assert.deepEqual(route(tc.path), tc.want));

for (const tc of [
  { m: 'GET', path: '/apis/metrics.k8s.io/v1beta1/nodes', watch: false, want: { kind: 'resource', verb: 'list', group: 'metrics.k8s.io', version: 'v1beta1', resource: 'nodes', namespace: '', name: '' } },
  { m: 'GET', path: '/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/b', watch: false, want: { kind: 'resource', verb: 'get', group: 'metrics.k8s.io', version: 'v1beta1', resource: 'pods', namespace: 'a', name: 'b' } },
  { m: 'GET', path: '/apis/metrics.k8s.io/v1beta1/pods', watch: true, want: { kind: 'resource', verb: 'watch', group: 'metrics.k8s.io', version: 'v1beta1', resource: 'pods', namespace: '', name: '' } },
  { m: 'GET', path: '/apis/metrics.k8s.io/v1beta1', watch: false, want: { kind: 'nonResource', verb: 'get', path: '/apis/metrics.k8s.io/v1beta1' } },
  { m: 'GET', path: '/metrics', watch: false, want: { kind: 'nonResource', verb: 'get', path: '/metrics' } },
]) test(`attributesFor ${tc.m} ${tc.path}${tc.watch ? ' watch' : ''}`, () => assert.deepEqual(attributesFor(tc.m, tc.path, route(tc.path), tc.watch), tc.want));

for (const [ms, want] of [[15_000, '15s'], [15_037, '15.037s'], [14_500, '14.5s'], [500, '500ms'], [60_000, '1m0s'], [90_250, '1m30.25s'], [3_600_000, '1h0m0s'], [0, '0s']] as const) {
  test(`goDuration(${ms}) = ${want}`, () => assert.equal(goDuration(ms), want));
}

for (const tc of [
  { cpu: 123_456_789, mem: 12_582_912, want: { cpu: '123456789n', memory: '12Mi' } },
  { cpu: 2_000_000, mem: 12_451_840, want: { cpu: '2m', memory: '12160Ki' } },
  { cpu: 1_500_000, mem: 1000, want: { cpu: '1500u', memory: '1k' } },
  { cpu: 1_000_000_000, mem: 12_345_678, want: { cpu: '1', memory: '12345678' } },
  { cpu: 0, mem: 0, want: { cpu: '0', memory: '0' } },
]) test(`usageList(${tc.cpu}n, ${tc.mem}B) as upstream's quantities`, () => assert.deepEqual(usageList({ cpuNanoCores: tc.cpu, memoryBytes: tc.mem }), tc.want));

function sources(): ApiSources {
  const storage = new MetricsStorage(15_000);
  const b = (t: number, k: number): MetricsBatch => ({
    nodes: new Map([['node-1', pt(t, 100 * k, 1 << 30)], ['node-2', pt(t, 50 * k, 1 << 29)]]),
    pods: new Map([
      ['kube-system/coredns-1', { containers: new Map([['coredns', pt(t, 1 * k, 20 << 20)]]) }],
      ['default/web', { containers: new Map([['a', pt(t, 2 * k, 4 << 20)], ['b', pt(t, 3 * k, 8 << 20)]]) }],
    ]),
  });
  storage.store(b(T, 1));
  storage.store(b(T + 15_000, 1.15));
  const nodes: MetaLike[] = [
    { metadata: { name: 'node-2', labels: { 'kubernetes.io/hostname': 'node-2' } } },
    { metadata: { name: 'node-1', labels: { 'kubernetes.io/hostname': 'node-1', role: 'a' } } },
    { metadata: { name: 'node-3' } }, // never scraped
  ];
  const pods: MetaLike[] = [
    { metadata: { name: 'coredns-1', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } } },
    { metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } } },
    { metadata: { name: 'pending', namespace: 'default' } },
  ];
  return { storage, listNodes: () => nodes, listPods: (ns) => pods.filter((p) => !ns || p.metadata.namespace === ns), now: () => T + 16_000 };
}
const q = (s = '') => new URLSearchParams(s);
const names = (body: unknown) => (body as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);

test('NodeMetricsList: every node with two points, sorted, with labels, usage, timestamp and window', () => {
  const r = serve('GET', route('/apis/metrics.k8s.io/v1beta1/nodes'), q(), sources());
  assert.equal(r.code, 200);
  const body = r.body as { kind: string; apiVersion: string; items: Record<string, unknown>[] };
  assert.equal(body.kind, 'NodeMetricsList');
  assert.equal(body.apiVersion, 'metrics.k8s.io/v1beta1');
  assert.deepEqual(body.items[0], {
    kind: 'NodeMetrics', apiVersion: 'metrics.k8s.io/v1beta1',
    metadata: { name: 'node-1', creationTimestamp: '2023-11-14T22:13:36Z', labels: { 'kubernetes.io/hostname': 'node-1', role: 'a' } },
    timestamp: '2023-11-14T22:13:35Z', window: '15s', usage: { cpu: '1', memory: '1Gi' },
  });
  assert.deepEqual(names(body), ['node-1', 'node-2']);
});

for (const tc of [
  { name: 'label selector', query: 'labelSelector=role%3Da', want: ['node-1'] },
  { name: 'label selector !', query: 'labelSelector=!role', want: ['node-2'] },
  { name: 'field selector metadata.name', query: 'fieldSelector=metadata.name%3Dnode-2', want: ['node-2'] },
  { name: 'field selector !=', query: 'fieldSelector=metadata.name!%3Dnode-2', want: ['node-1'] },
]) test(`NodeMetricsList ${tc.name}`, () => assert.deepEqual(names(serve('GET', route('/apis/metrics.k8s.io/v1beta1/nodes'), q(tc.query), sources()).body), tc.want));

test('PodMetricsList: all namespaces, one namespace, label and field selectors', () => {
  const s = sources();
  const all = serve('GET', route('/apis/metrics.k8s.io/v1beta1/pods'), q(), s);
  assert.deepEqual(names(all.body), ['web', 'coredns-1']);
  const web = (all.body as { items: Record<string, unknown>[] }).items[0]!;
  assert.deepEqual(web, {
    kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1',
    metadata: { name: 'web', namespace: 'default', creationTimestamp: '2023-11-14T22:13:36Z', labels: { app: 'web' } },
    timestamp: '2023-11-14T22:13:35Z', window: '15s',
    containers: [{ name: 'a', usage: { cpu: '20m', memory: '4Mi' } }, { name: 'b', usage: { cpu: '30m', memory: '8Mi' } }],
  });
  assert.deepEqual(names(serve('GET', route('/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods'), q(), s).body), ['coredns-1']);
  assert.deepEqual(names(serve('GET', route('/apis/metrics.k8s.io/v1beta1/pods'), q('labelSelector=k8s-app%3Dkube-dns'), s).body), ['coredns-1']);
  assert.deepEqual(names(serve('GET', route('/apis/metrics.k8s.io/v1beta1/pods'), q('fieldSelector=metadata.namespace%3Ddefault'), s).body), ['web']);
});

test('get of one node / pod; NotFound as upstream words it', () => {
  const s = sources();
  assert.equal((serve('GET', route('/apis/metrics.k8s.io/v1beta1/nodes/node-2'), q(), s).body as { usage: { cpu: string } }).usage.cpu, '500m');
  assert.equal(serve('GET', route('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web'), q(), s).code, 200);
  for (const [path, msg] of [
    ['/apis/metrics.k8s.io/v1beta1/nodes/node-3', 'nodemetrics.metrics.k8s.io "node-3" not found'],
    ['/apis/metrics.k8s.io/v1beta1/nodes/nope', 'nodemetrics.metrics.k8s.io "nope" not found'],
    ['/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/pending', 'podmetrics.metrics.k8s.io "default/pending" not found'],
  ] as const) {
    const r = serve('GET', route(path), q(), s);
    assert.equal(r.code, 404);
    assert.deepEqual({ reason: (r.body as { reason: string }).reason, message: (r.body as { message: string }).message }, { reason: 'NotFound', message: msg });
  }
});

test('bad input is a Status: malformed selector 400, unknown path 404, POST 405', () => {
  const s = sources();
  const bad = serve('GET', route('/apis/metrics.k8s.io/v1beta1/nodes'), q('labelSelector=a%20in%20('), s);
  assert.equal(bad.code, 400);
  assert.equal((bad.body as { kind: string; reason: string }).reason, 'BadRequest');
  assert.equal(serve('GET', route('/apis/metrics.k8s.io/v1beta1/x'), q(), s).code, 404);
  assert.equal(serve('POST', route('/apis/metrics.k8s.io/v1beta1/nodes'), q(), s).code, 405);
});

test('discovery documents', () => {
  const s = sources();
  const v = serve('GET', route('/apis/metrics.k8s.io/v1beta1'), q(), s).body as { kind: string; groupVersion: string; resources: { name: string; kind: string; namespaced: boolean; verbs: string[] }[] };
  assert.equal(v.kind, 'APIResourceList');
  assert.equal(v.groupVersion, 'metrics.k8s.io/v1beta1');
  assert.deepEqual(v.resources.map((r) => [r.name, r.kind, r.namespaced, r.verbs.join(',')]), [['nodes', 'NodeMetrics', false, 'get,list'], ['pods', 'PodMetrics', true, 'get,list']]);
  assert.equal((serve('GET', route('/apis/metrics.k8s.io'), q(), s).body as { preferredVersion: { version: string } }).preferredVersion.version, 'v1beta1');
});

test('cpuQuantity / memoryQuantity agree with the exact Quantity formatter', async () => {
  const { formatQuantity, formatBytes } = await import('@mk8s/api');
  const { cpuQuantity, memoryQuantity } = await import('./api.js');
  for (const n of [0, 1, 999, 1000, 1500, 1_000_000, 1_500_000, 2_000_000_000, 2_500_000_000, 123_456_789, 10 ** 12, 2 ** 53 + 2]) {
    assert.equal(cpuQuantity(n), formatQuantity({ num: BigInt(n), den: 1_000_000_000n, format: 'DecimalSI' }), `${n}n`);
  }
  for (const b of [0, 1, 1000, 1023, 1024, 1025, 4096, 12_451_840, 1 << 30, 3 * 2 ** 40, 2 ** 53 + 2, 12_345_678]) {
    assert.equal(memoryQuantity(b), formatBytes(b, 'BinarySI'), `${b}B`);
  }
});
