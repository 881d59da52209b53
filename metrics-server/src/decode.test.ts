import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBatch, mergeBatches } from './decode.js';
import { kubeletResourceMetrics } from './testing/index.js';

const T = 1_700_000_000_000;

test('decodeBatch reads the node and every container, in ns and bytes', () => {
  const text = kubeletResourceMetrics({ cpuSeconds: 100.5, memoryBytes: 2_000_000_000, timestampMs: T, containers: [
    { namespace: 'kube-system', pod: 'coredns-1', container: 'coredns', cpuSeconds: 1.25, memoryBytes: 12_582_912, startTimeSeconds: 1_699_999_000 },
    { namespace: 'default', pod: 'web', container: 'a', cpuSeconds: 2, memoryBytes: 4096 },
    { namespace: 'default', pod: 'web', container: 'b', cpuSeconds: 3, memoryBytes: 8192 },
  ] });
  const b = decodeBatch(text, T + 999, 'node-1');
  assert.deepEqual(b.nodes.get('node-1'), { startTimeMs: 0, timestampMs: T, cumulativeCpuNs: 100.5e9, memoryBytes: 2_000_000_000 });
  assert.deepEqual(b.pods.get('kube-system/coredns-1')?.containers.get('coredns'), { startTimeMs: 1_699_999_000_000, timestampMs: T, cumulativeCpuNs: 1.25e9, memoryBytes: 12_582_912 });
  assert.deepEqual([...b.pods.get('default/web')!.containers.keys()], ['a', 'b']);
});

test('decodeBatch: a sample without timestamp takes the scrape time', () => {
  const b = decodeBatch('node_cpu_usage_seconds_total 5\nnode_memory_working_set_bytes 10\n', T, 'n');
  assert.equal(b.nodes.get('n')?.timestampMs, T);
});

for (const tc of [
  { name: 'node without memory', text: 'node_cpu_usage_seconds_total 5 1\n', nodes: 0, pods: 0 },
  { name: 'node with zero cpu', text: 'node_cpu_usage_seconds_total 0 1\nnode_memory_working_set_bytes 10 1\n', nodes: 0, pods: 0 },
  { name: 'container without cpu', text: 'container_memory_working_set_bytes{container="c",namespace="n",pod="p"} 10 1\n', nodes: 0, pods: 0 },
  { name: 'container missing its pod label', text: 'container_cpu_usage_seconds_total{container="c",namespace="n"} 1 1\ncontainer_memory_working_set_bytes{container="c",namespace="n"} 10 1\n', nodes: 0, pods: 0 },
  { name: 'unrelated series only', text: 'scrape_error 0\npod_cpu_usage_seconds_total{namespace="n",pod="p"} 1 1\n', nodes: 0, pods: 0 },
]) test(`decodeBatch drops an incomplete point: ${tc.name}`, () => {
  const b = decodeBatch(tc.text, T, 'n');
  assert.equal(b.nodes.size, tc.nodes);
  assert.equal(b.pods.size, tc.pods);
});

test('decodeBatch throws on malformed text (the node is left out of the round)', () => {
  assert.throws(() => decodeBatch('node_cpu_usage_seconds_total{ 1', T, 'n'));
});

test('mergeBatches keeps the first of duplicate keys', () => {
  const a = decodeBatch('node_cpu_usage_seconds_total 1 1\nnode_memory_working_set_bytes 1 1\n', T, 'n1');
  const b = decodeBatch('node_cpu_usage_seconds_total 2 1\nnode_memory_working_set_bytes 2 1\n', T, 'n2');
  const m = mergeBatches([a, b, a]);
  assert.deepEqual([...m.nodes.keys()], ['n1', 'n2']);
});

test('decodeBatch reads the kubelet\'s own rendering (Go float format, families sorted, start time without timestamp)', () => {
  const text = `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="ns",pod="web"} 2.316354 1700000000123
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 1.2288e+07 1700000000123
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="app",namespace="ns",pod="web"} 1.699999001e+09
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 1500 1700000000123
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 2.147483648e+09 1700000000123
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 2.4 1700000000123
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`;
  const b = decodeBatch(text, 0, 'n1');
  assert.deepEqual(b.nodes.get('n1'), { startTimeMs: 0, timestampMs: 1700000000123, cumulativeCpuNs: 1.5e12, memoryBytes: 2147483648 });
  assert.deepEqual(b.pods.get('ns/web')?.containers.get('app'), { startTimeMs: 1699999001000, timestampMs: 1700000000123, cumulativeCpuNs: 2316354000, memoryBytes: 12288000 });
});
