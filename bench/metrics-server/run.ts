/**
 * bench/metrics-server: the cost of one metrics-server round for N nodes × M pods (2 containers
 * each), in-process, as ratios to the raw floor measured in the same run on the same text:
 *  1. parse: our Prometheus text parser over every node's /metrics/resource text ÷ the floor
 *     (split into lines, skip comments, read the value after the last space: the least work that
 *     touches every sample);
 *  2. scrape round: decode every node's text into points + merge + store (two points kept, rates
 *     ready) ÷ the floor;
 *  3. serve: one NodeMetricsList and one PodMetricsList of all pods (rates, quantities, JSON) ÷
 *     JSON.stringify of the same number of plain objects of the same shape, pre-built (the floor of
 *     answering with that many items);
 *  4. heap held by the storage for N × M pods (after GC).
 * The kubelet HTTPS round trip is left out (it is the kubelet's cost, and the same for upstream).
 * Run: node --expose-gc --conditions=@mk8s/source --import tsx bench/metrics-server/run.ts
 * Three unmeasured warm-up rounds per size; rounds alternate whether the parse or its floor goes first.
 * Env: BENCH_SIZES ("10x110,100x30": nodes x pods per node), BENCH_ROUNDS (7).
 */
import { decodeBatch, mergeBatches, MetricsStorage, parsePromText, serve, route, type ApiSources, type MetaLike } from '@mk8s/metrics-server';
import { kubeletResourceMetrics, type FakeContainer } from '@mk8s/metrics-server/testing';
import { loadavg } from 'node:os';
import { fmt, printHeader, printRow } from '../lib.js';

const SIZES = (process.env['BENCH_SIZES'] ?? '10x110,100x30').split(',').map((s) => s.split('x').map(Number) as [number, number]);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 7);
const T = 1_700_000_000_000;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

function texts(nodes: number, pods: number, k: number): string[] {
  return Array.from({ length: nodes }, (_, n) => {
    const containers: FakeContainer[] = [];
    for (let p = 0; p < pods; p++) for (const c of ['app', 'sidecar']) {
      containers.push({ namespace: `ns-${p % 20}`, pod: `pod-${n}-${p}`, container: c, cpuSeconds: 100 + p + k * 0.123 * (p + 1), memoryBytes: (50 + p) * 1_048_576 + k * 4096, startTimeSeconds: T / 1000 - 3600 });
    }
    return kubeletResourceMetrics({ cpuSeconds: 10_000 + k * 15 * 1.7, memoryBytes: 4_000_000_000 + k * 8192, timestampMs: T + k * 15_000, containers });
  });
}

/** The floor: touch every sample line, read its value. */
function rawFloor(ts: readonly string[]): number {
  let sum = 0;
  for (const t of ts) for (const line of t.split('\n')) {
    if (line === '' || line.charCodeAt(0) === 35) continue;
    const parts = line.split(' ');
    sum += Number(parts[parts.length - 2] ?? parts[parts.length - 1]);
  }
  return sum;
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
function time(fn: () => void): number { const t = performance.now(); fn(); return performance.now() - t; }

for (const [N, M] of SIZES) {
  const round0 = texts(N, M, 0), round1 = texts(N, M, 1);
  const bytes = round1.reduce((a, t) => a + t.length, 0);
  const nodes: MetaLike[] = Array.from({ length: N }, (_, n) => ({ metadata: { name: `node-${n}`, labels: { 'kubernetes.io/hostname': `node-${n}` } } }));
  const pods: MetaLike[] = [];
  for (let n = 0; n < N; n++) for (let p = 0; p < M; p++) pods.push({ metadata: { name: `pod-${n}-${p}`, namespace: `ns-${p % 20}`, labels: { app: `a${p % 7}` } } });
  const storage = new MetricsStorage(15_000);
  const src: ApiSources = { storage, listNodes: () => nodes, listPods: (ns) => (ns ? pods.filter((p) => p.metadata.namespace === ns) : pods), now: () => T + 16_000 };
  const store = (ts: readonly string[], k: number) => storage.store(mergeBatches(ts.map((t, n) => decodeBatch(t, T + k * 15_000, `node-${n}`))));
  store(round0, 0);
  // plain objects of the served shape, for the serve floor
  const plainPods = pods.map((p) => ({ kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1', metadata: { ...p.metadata, creationTimestamp: '2023-11-14T22:13:36Z' }, timestamp: '2023-11-14T22:13:35Z', window: '15s', containers: [{ name: 'app', usage: { cpu: '123456n', memory: '51200Ki' } }, { name: 'sidecar', usage: { cpu: '123456n', memory: '51200Ki' } }] }));
  const plainNodes = nodes.map((n) => ({ kind: 'NodeMetrics', apiVersion: 'metrics.k8s.io/v1beta1', metadata: { ...n.metadata, creationTimestamp: '2023-11-14T22:13:36Z' }, timestamp: '2023-11-14T22:13:35Z', window: '15s', usage: { cpu: '1700m', memory: '3906258Ki' } }));
  const samples: { parse: number; floor: number; round: number; serve: number; serveFloor: number }[] = [];
  let items = 0;
  for (let r = -3; r < ROUNDS; r++) { // rounds -3..-1 warm the JIT up, unmeasured
    const k = r + 4;
    const ts = texts(N, M, k);
    const s = { parse: 0, floor: 0, round: 0, serve: 0, serveFloor: 0 };
    // alternate who goes first
    const a = () => { s.floor = time(() => rawFloor(ts)); };
    const b = () => { s.parse = time(() => { let c = 0; for (const t of ts) parsePromText(t, () => { c++; }); }); };
    if (r % 2) { a(); b(); } else { b(); a(); }
    s.round = time(() => store(ts, k));
    s.serve = time(() => {
      const nb = JSON.stringify(serve('GET', route('/apis/metrics.k8s.io/v1beta1/nodes'), new URLSearchParams(), src).body);
      const pb = serve('GET', route('/apis/metrics.k8s.io/v1beta1/pods'), new URLSearchParams(), src).body as { items: unknown[] };
      items = pb.items.length;
      JSON.stringify(pb); void nb;
    });
    s.serveFloor = time(() => { JSON.stringify({ items: plainNodes }); JSON.stringify({ kind: 'PodMetricsList', items: plainPods }); });
    if (r >= 0) samples.push(s);
  }
  gc(); gc();
  const h0 = process.memoryUsage().heapUsed;
  const held = new MetricsStorage(15_000);
  held.store(mergeBatches(round0.map((t, n) => decodeBatch(t, T, `node-${n}`))));
  held.store(mergeBatches(round1.map((t, n) => decodeBatch(t, T + 15_000, `node-${n}`))));
  gc(); gc();
  const heapMiB = (process.memoryUsage().heapUsed - h0) / 1_048_576;
  const m = (f: keyof (typeof samples)[number]) => median(samples.map((x) => x[f]));
  printHeader(`metrics-server, ${N} nodes × ${M} pods × 2 containers (${(bytes / 1024).toFixed(0)} KiB of text a round, ${ROUNDS} rounds, medians, load ${loadavg()[0]!.toFixed(1)})`);
  printRow('parse all nodes\' text (ms)', fmt(m('parse')), fmt(m('floor')), fmt(m('parse') / m('floor')), '≤ 3');
  printRow('scrape round: decode+store (ms)', fmt(m('round')), fmt(m('floor')), fmt(m('round') / m('floor')), '≤ 5');
  printRow(`serve nodes + ${items} pods (ms)`, fmt(m('serve')), fmt(m('serveFloor')), fmt(m('serve') / m('serveFloor')), '≤ 3');
  printRow('storage heap, two points (MiB)', fmt(heapMiB), '', '', `${fmt((heapMiB * 1_048_576) / (N * M * 2), 0)} B a container`);
}
