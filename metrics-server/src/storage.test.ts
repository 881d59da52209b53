import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MetricsBatch, MetricsPoint } from './decode.js';
import { MetricsStorage, resourceUsage } from './storage.js';

const T = 1_700_000_000_000;
const RES = 15_000;
const pt = (timestampMs: number, cpuSeconds: number, memoryBytes = 1024, startTimeMs = 0): MetricsPoint => ({ startTimeMs, timestampMs, cumulativeCpuNs: Math.round(cpuSeconds * 1e9), memoryBytes });
const batch = (nodes: Record<string, MetricsPoint>, pods: Record<string, Record<string, MetricsPoint>> = {}): MetricsBatch => ({
  nodes: new Map(Object.entries(nodes)),
  pods: new Map(Object.entries(pods).map(([k, cs]) => [k, { containers: new Map(Object.entries(cs)) }])),
});

for (const tc of [
  { name: 'one core over 15 s', last: pt(T + 15_000, 25), prev: pt(T, 10), want: { cpuNanoCores: 1_000_000_000, memoryBytes: 1024, timestampMs: T + 15_000, windowMs: 15_000 } },
  { name: 'quarter core over 10 s', last: pt(T + 10_000, 12.5), prev: pt(T, 10), want: { cpuNanoCores: 250_000_000, memoryBytes: 1024, timestampMs: T + 10_000, windowMs: 10_000 } },
  { name: 'idle', last: pt(T + 15_000, 10), prev: pt(T, 10), want: { cpuNanoCores: 0, memoryBytes: 1024, timestampMs: T + 15_000, windowMs: 15_000 } },
  { name: 'counter decreased (reset)', last: pt(T + 15_000, 1), prev: pt(T, 10), want: undefined },
  { name: 'same timestamp', last: pt(T, 11), prev: pt(T, 10), want: undefined },
]) test(`resourceUsage: ${tc.name}`, () => assert.deepEqual(resourceUsage(tc.last, tc.prev), tc.want));

test('a node has usage only from its second point on, and the rate is between the last two', () => {
  const s = new MetricsStorage(RES);
  s.store(batch({ n: pt(T, 100) }));
  assert.equal(s.nodeUsage('n'), undefined);
  assert.equal(s.ready(), false);
  s.store(batch({ n: pt(T + 15_000, 115) }));
  assert.equal(s.nodeUsage('n')?.cpuNanoCores, 1e9);
  assert.equal(s.ready(), true);
  s.store(batch({ n: pt(T + 30_000, 122.5, 2048) }));
  assert.deepEqual(s.nodeUsage('n'), { name: 'n', cpuNanoCores: 5e8, memoryBytes: 2048, timestampMs: T + 30_000, windowMs: 15_000 });
});

test('a repeated reading (same timestamp) keeps the previous point', () => {
  const s = new MetricsStorage(RES);
  s.store(batch({ n: pt(T, 100) }));
  s.store(batch({ n: pt(T + 15_000, 115) }));
  s.store(batch({ n: pt(T + 15_000, 115) }));
  assert.equal(s.nodeUsage('n')?.cpuNanoCores, 1e9);
});

test('a node missing from a round loses its metrics until read twice again', () => {
  const s = new MetricsStorage(RES);
  s.store(batch({ n: pt(T, 100), m: pt(T, 1) }));
  s.store(batch({ n: pt(T + 15_000, 115), m: pt(T + 15_000, 2) }));
  s.store(batch({ m: pt(T + 30_000, 3) }));
  assert.equal(s.nodeUsage('n'), undefined);
  assert.ok(s.nodeUsage('m'));
  s.store(batch({ n: pt(T + 45_000, 130), m: pt(T + 45_000, 4) }));
  assert.equal(s.nodeUsage('n'), undefined);
});

test('a pod is served only when every container has two points; timestamp and window of the earliest', () => {
  const s = new MetricsStorage(RES);
  s.store(batch({}, { 'ns/p': { a: pt(T, 1) } }));
  s.store(batch({}, { 'ns/p': { a: pt(T + 15_000, 2, 4096), b: pt(T + 15_000, 1) } }));
  assert.equal(s.podUsage('ns', 'p'), undefined, 'b has one point');
  s.store(batch({}, { 'ns/p': { a: pt(T + 30_000, 3, 4096), b: pt(T + 29_000, 1.5) } }));
  assert.deepEqual(s.podUsage('ns', 'p'), {
    namespace: 'ns', name: 'p', timestampMs: T + 29_000, windowMs: 14_000,
    containers: [{ name: 'a', cpuNanoCores: 66_666_666, memoryBytes: 4096 }, { name: 'b', cpuNanoCores: 35_714_285, memoryBytes: 1024 }],
  });
  assert.deepEqual(s.points(), { node: 0, container: 2 });
});

test('a restarted container drops its previous point', () => {
  const s = new MetricsStorage(RES);
  s.store(batch({}, { 'ns/p': { a: pt(T, 50, 1024, T - 3_600_000) } }));
  s.store(batch({}, { 'ns/p': { a: pt(T + 15_000, 60, 1024, T - 3_600_000) } }));
  assert.ok(s.podUsage('ns', 'p'));
  // restarted at T+20s: its counter starts again from zero; no rate across the restart
  s.store(batch({}, { 'ns/p': { a: pt(T + 60_000, 0.5, 1024, T + 20_000) } }));
  assert.equal(s.podUsage('ns', 'p'), undefined);
  s.store(batch({}, { 'ns/p': { a: pt(T + 75_000, 1.5, 1024, T + 20_000) } }));
  assert.equal(s.podUsage('ns', 'p')?.containers[0]?.cpuNanoCores, 66_666_666);
});

test('a fresh container (started 10 s to one resolution ago) shows at its first reading, from its start', () => {
  const s = new MetricsStorage(RES);
  s.store(batch({}, { 'ns/p': { a: pt(T + 12_000, 3, 1024, T) } }));
  assert.deepEqual(s.podUsage('ns', 'p'), { namespace: 'ns', name: 'p', timestampMs: T + 12_000, windowMs: 12_000, containers: [{ name: 'a', cpuNanoCores: 250_000_000, memoryBytes: 1024 }] });
  // started only 5 s before: too short a window, waits for a second reading
  const s2 = new MetricsStorage(RES);
  s2.store(batch({}, { 'ns/p': { a: pt(T + 5_000, 3, 1024, T) } }));
  assert.equal(s2.podUsage('ns', 'p'), undefined);
});

test('a pod gone from a round is gone from the storage', () => {
  const s = new MetricsStorage(RES);
  s.store(batch({}, { 'ns/p': { a: pt(T, 1) } }));
  s.store(batch({}, { 'ns/p': { a: pt(T + 15_000, 2) } }));
  s.store(batch({}, {}));
  assert.equal(s.podUsage('ns', 'p'), undefined);
  assert.deepEqual(s.points(), { node: 0, container: 0 });
});
