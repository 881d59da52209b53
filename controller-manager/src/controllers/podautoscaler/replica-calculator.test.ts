import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@mk8s/api';
import { defaultCalculatorOptions, plainMetricReplicas, resourceReplicas } from './replica-calculator.js';
import type { PodMetricsInfo } from './metrics-client.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const pod = (name: string, o: { phase?: string; ready?: boolean; startedAgoMs?: number; readySinceAgoMs?: number; request?: string; deleting?: boolean } = {}): Pod => ({
  metadata: { name, ...(o.deleting ? { deletionTimestamp: iso(NOW) } : {}) },
  spec: { containers: [{ name: 'c', resources: { requests: { cpu: o.request ?? '100m' } } }] },
  status: { phase: o.phase ?? 'Running', startTime: iso(NOW - (o.startedAgoMs ?? 3_600_000)),
    conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: iso(NOW - (o.readySinceAgoMs ?? 3_000_000)) }] },
});
const m = (v: Record<string, number>, at = NOW - 1000): PodMetricsInfo => new Map(Object.entries(v).map(([k, value]) => [k, { value, timestampMs: at, windowMs: 15_000 }]));
const o = defaultCalculatorOptions(NOW);

for (const tc of [
  { name: 'scale up by the usage ratio', current: 2, pods: [pod('a'), pod('b')], metrics: { a: 100, b: 100 }, target: 50, want: 4, util: 100 },
  { name: 'scale down by the usage ratio', current: 4, pods: ['a', 'b', 'c', 'd'].map((n) => pod(n)), metrics: { a: 10, b: 10, c: 10, d: 10 }, target: 50, want: 1, util: 10 },
  { name: 'within tolerance keeps the count', current: 3, pods: [pod('a'), pod('b'), pod('c')], metrics: { a: 54, b: 54, c: 54 }, target: 50, want: 3, util: 54 },
  { name: 'just past tolerance moves', current: 3, pods: [pod('a'), pod('b'), pod('c')], metrics: { a: 56, b: 56, c: 56 }, target: 50, want: 4, util: 56 },
  // Scale-down with a pod missing metrics: it counts as 100 % of its request, so the step is smaller.
  { name: 'missing pod on a scale-down counts as 100 %', current: 3, pods: [pod('a'), pod('b'), pod('c')], metrics: { a: 10, b: 10 }, target: 50, want: 3, util: 10 },
  // Scale-up with a missing pod: it counts as 0 %.
  { name: 'missing pod on a scale-up counts as 0 %', current: 3, pods: [pod('a'), pod('b'), pod('c')], metrics: { a: 150, b: 150 }, target: 50, want: 6, util: 150 },
  { name: 'an unready pod on a scale-up counts as 0 %', current: 2, pods: [pod('a'), pod('b', { ready: false, startedAgoMs: 10_000, readySinceAgoMs: 5_000 })], metrics: { a: 100, b: 100 }, target: 50, want: 2, util: 100 },
  { name: 'pending pods are unready; deleting ones ignored', current: 3, pods: [pod('a'), pod('b', { phase: 'Pending' }), pod('c', { deleting: true })], metrics: { a: 100, c: 100 }, target: 50, want: 3, util: 100 },
  // b's sample is younger than a window since it became ready: left out, so a alone (40 %) asks for 1.
  { name: 'a cpu sample taken before a full window since readiness is not trusted', current: 2,
    pods: [pod('a'), pod('b', { startedAgoMs: 60_000, readySinceAgoMs: 10_000 })], metrics: { a: 40, b: 200 }, target: 50, want: 1, util: 40 },
]) {
  test(`resourceReplicas: ${tc.name}`, () => {
    const r = resourceReplicas(tc.current, tc.target, 'cpu', '', tc.pods, m(tc.metrics), o);
    assert.equal(r.replicas, tc.want);
    assert.equal(r.utilization, tc.util);
  });
}

test('resourceReplicas: errors as upstream words them', () => {
  assert.throws(() => resourceReplicas(1, 50, 'cpu', '', [], m({}), o), /no pods returned by selector while calculating replica count/);
  assert.throws(() => resourceReplicas(1, 50, 'cpu', '', [pod('a', { phase: 'Pending' })], m({ a: 1 }), o), /did not receive metrics for targeted pods \(pods might be unready\)/);
  const noRequest = { ...pod('a'), spec: { containers: [{ name: 'c' }] } } as Pod;
  assert.throws(() => resourceReplicas(1, 50, 'cpu', '', [noRequest], m({ a: 1 }), o), /missing request for cpu in container c of Pod a/);
});

for (const tc of [
  { name: 'average value scale up', current: 2, metrics: { a: 200_000, b: 200_000 }, target: 100_000, want: 4 },
  { name: 'average value within tolerance', current: 2, metrics: { a: 105_000, b: 105_000 }, target: 100_000, want: 2 },
  { name: 'average value scale down', current: 2, metrics: { a: 10_000, b: 10_000 }, target: 100_000, want: 1 },
]) {
  test(`plainMetricReplicas: ${tc.name}`, () => {
    assert.equal(plainMetricReplicas(tc.current, tc.target, 'memory', [pod('a'), pod('b')], m(tc.metrics), o).replicas, tc.want);
  });
}
