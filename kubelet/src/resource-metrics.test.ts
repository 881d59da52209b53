import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatFloat, renderResourceMetrics } from './resource-metrics.js';
import type { Summary } from './stats-summary.js';

test('formatFloat writes floats as Go strconv g -1 (the Prometheus text encoder)', () => {
  const cases: [number, string][] = [
    [0, '0'], [1, '1'], [2.316354, '2.316354'], [123456, '123456'], [12288000, '1.2288e+07'], [1684237492.5, '1.6842374925e+09'],
    [0.0001, '0.0001'], [0.00001, '1e-05'], [1e21, '1e+21'], [NaN, 'NaN'], [Infinity, '+Inf'], [67108864, '6.7108864e+07'],
  ];
  for (const [f, want] of cases) assert.equal(formatFloat(f), want, String(f));
});

test('renderResourceMetrics: upstream families, sorted, labels sorted, explicit timestamps', () => {
  const t = 1_700_000_000_123;
  const s: Summary = {
    node: { nodeName: 'n1', startTimeMs: 0, cpu: { timeMs: t, usageCoreNanoSeconds: 1.5e12 }, memory: { timeMs: t, workingSetBytes: 2048 * 1024 * 1024 } },
    pods: [{
      podRef: { name: 'web', namespace: 'ns', uid: 'u1' }, startTimeMs: 1_699_999_000_000,
      containers: [{ name: 'app', startTimeMs: 1_699_999_001_000, cpu: { timeMs: t, usageCoreNanoSeconds: 2_316_354_000 }, memory: { timeMs: t, workingSetBytes: 12288000 } },
        { name: 'no-figures', startTimeMs: 0 }],
      cpu: { timeMs: t, usageCoreNanoSeconds: 2_400_000_000 }, memory: { timeMs: t, workingSetBytes: 13_000_000 },
    }],
  };
  assert.equal(renderResourceMetrics(s, 0), `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
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
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="ns",pod="web"} 1.3e+07 1700000000123
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
# HELP scrape_error [ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 0
`);
});

test('label values are escaped', () => {
  const s: Summary = { node: { nodeName: 'n', startTimeMs: 0 }, pods: [{ podRef: { name: 'a"b\\c', namespace: 'n', uid: 'u' }, startTimeMs: 0, containers: [], memory: { timeMs: 1, workingSetBytes: 1 } }] };
  assert.match(renderResourceMetrics(s, 0), /^pod_memory_working_set_bytes\{namespace="n",pod="a\\"b\\\\c"\} 1 1$/m);
});
