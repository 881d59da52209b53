/**
 * bench/scheduler: scheduling throughput on hollow nodes (Node objects only, no kubelet), as
 * upstream's scheduler_perf does. Every part is its own process: a 3-member etcd, the apiserver,
 * and, per scenario, a fresh scheduler binary (scheduler/src/main.ts); this process only creates
 * objects, measures the floor and polls the scheduler's /metrics, so the figures measure the
 * scheduler and the apiserver, not CPU shared with the bench.
 *  - basic: BENCH_PODS (5,000) pods on BENCH_NODES (1,000) nodes             goal ≥ 300 pods/s
 *  - pod anti-affinity (hostname, one group): BENCH_ANTI_PODS (1,000) pods
 *  - topology spread (zone, maxSkew 1, DoNotSchedule): BENCH_SPREAD_PODS (5,000) pods
 *  - the bind-write floor: POST pods/binding by a plain client, 64 in flight (as many as the
 *    scheduler's binds), to the same apiserver, measured right before each scenario so both see
 *    the same machine load                                                  goal ≥ 0.8 of the floor
 * Pods are created while no scheduler runs; the clock starts once the scheduler reports ready
 * (caches synced) and stops when its scheduled-attempts counter has reached the scenario's count.
 * BENCH_CPU_PROF=<dir> runs the scheduler with `node --cpu-prof` (<dir>/<namespace>/*.cpuprofile; the
 * largest is the main thread); BENCH_SCHED_LOG=<file> keeps the scheduler's log (<file>.<namespace>).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { kubeconfig, startEtcdCluster } from '@mk8s/apiserver/testing';
import { fmt, printHeader, printRow, runConcurrent } from '../lib.js';

const NODES = Number(process.env['BENCH_NODES'] ?? 1000);
const PODS = Number(process.env['BENCH_PODS'] ?? 5000);
const ANTI_PODS = Number(process.env['BENCH_ANTI_PODS'] ?? Math.min(1000, NODES));
const SPREAD_PODS = Number(process.env['BENCH_SPREAD_PODS'] ?? PODS);
const FLOOR_BINDS = Number(process.env['BENCH_FLOOR_BINDS'] ?? 2000);
const SCENARIOS = (process.env['BENCH_SCENARIOS'] ?? 'basic,anti,spread').split(',');
const CPU_PROF = process.env['BENCH_CPU_PROF'];
const SCHED_LOG = process.env['BENCH_SCHED_LOG'];
const ZONES = 10;
const IN_FLIGHT = 64;
const ROOT = process.env['MK8S_ROOT'] ?? new URL('../..', import.meta.url).pathname;
const TICKS_PER_SECOND = 100;

/** utime + stime of a process in seconds (Linux /proc), to show which process was busy. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
  } catch { return NaN; }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
  });
}

async function waitReady(url: string, proc: ChildProcess, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try { if ((await fetch(url)).ok) return; } catch { /* not yet */ }
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`${what} did not become ready`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

async function startApiServer(etcd: string[]): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'apiserver/src/main.ts'),
    '--etcd-servers', etcd.join(','), '--port', String(port), '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'], cwd: ROOT });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/readyz`, proc, 'apiserver');
  return { url, proc };
}

/** The scheduler binary, leader election off, metrics on a free port. */
async function startScheduler(kubeconfigPath: string, name: string): Promise<{ proc: ChildProcess; metricsUrl: string }> {
  const port = await freePort();
  // One directory per scenario: tsx's loader thread writes a profile of its own next to the main one.
  const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(CPU_PROF, name)}`] : [];
  const proc = spawn(process.execPath, [...prof, '--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'scheduler/src/main.ts'),
    '--kubeconfig', kubeconfigPath, '--health-port', String(port), '--leader-elect=false', '--log-level', 'warn'],
  { stdio: ['ignore', SCHED_LOG ? openSync(`${SCHED_LOG}.${name}`, 'w') : 'ignore', 'inherit'], cwd: ROOT });
  await waitReady(`http://127.0.0.1:${port}/readyz`, proc, 'scheduler');
  return { proc, metricsUrl: `http://127.0.0.1:${port}/metrics` };
}

/**
 * scheduler_schedule_attempts_total by result, from the scheduler's /metrics, plus the successful
 * binds' summed latency (bindSeconds) and count (binds).
 */
async function attempts(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^scheduler_schedule_attempts_total\{[^}]*?result="(\w+)"[^}]*\} (\d+)/gm)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  const sum = /^scheduler_binding_duration_seconds_sum\{[^}]*result="success"[^}]*\} ([\d.e+-]+)/m.exec(text);
  const count = /^scheduler_binding_duration_seconds_count\{[^}]*result="success"[^}]*\} (\d+)/m.exec(text);
  if (sum && count) { out['bindSeconds'] = Number(sum[1]); out['binds'] = Number(count[1]); }
  return out;
}

const pod = (ns: string, name: string, extra: { labels?: Record<string, string>; spec?: Record<string, unknown> } = {}) => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: ns, labels: { app: ns, ...extra.labels } },
  spec: { containers: [{ name: 'c', image: 'mk8s/pause:3.9', resources: { requests: { cpu: '100m', memory: '128Mi' } } }], ...extra.spec },
});

interface Result { name: string; pods: number; seconds: number; floor: number; schedCpu: number; apiCpu: number; load: string; inFlight: number }

async function main(): Promise<void> {
  const etcd = await startEtcdCluster({ members: 3 });
  const api = await startApiServer(etcd.endpoints);
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-bench-sched-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfig(api.url));
  const pool = new Pool(api.url, { connections: IN_FLIGHT });
  const post = async (path: string, body: unknown) => {
    const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  };
  const results: Result[] = [];
  let sched: ChildProcess | undefined;
  // Interrupted: stop the processes this bench started (they would outlive it otherwise).
  const onSignal = () => {
    sched?.kill('SIGTERM'); api.proc.kill('SIGTERM');
    void etcd.stop().finally(() => { rmSync(dir, { recursive: true, force: true }); process.exit(130); });
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    for (const ns of ['bench-floor', 'bench-basic', 'bench-anti', 'bench-spread']) await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await runConcurrent(NODES, IN_FLIGHT, (i) => post('/api/v1/nodes', {
      apiVersion: 'v1', kind: 'Node',
      metadata: { name: `hollow-${i}`, labels: { 'kubernetes.io/hostname': `hollow-${i}`, 'topology.kubernetes.io/zone': `zone-${i % ZONES}` } },
      status: { capacity: { cpu: '32', memory: '128Gi', pods: '110' }, allocatable: { cpu: '32', memory: '128Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
    }));

    // The floor: what the apiserver sustains for the scheduler's one write, pods/binding.
    let floorBatch = 0;
    const measureFloor = async (): Promise<number> => {
      const b = floorBatch++;
      await runConcurrent(FLOOR_BINDS, IN_FLIGHT, (i) => post('/api/v1/namespaces/bench-floor/pods', pod('bench-floor', `f${b}-${i}`)));
      const floor = await runConcurrent(FLOOR_BINDS, IN_FLIGHT, (i) => post(`/api/v1/namespaces/bench-floor/pods/f${b}-${i}/binding`, {
        apiVersion: 'v1', kind: 'Binding', metadata: { name: `f${b}-${i}` }, target: { apiVersion: 'v1', kind: 'Node', name: `hollow-${i % NODES}` },
      }));
      return FLOOR_BINDS / (floor.elapsedMs / 1000);
    };

    const scenario = async (name: string, ns: string, n: number, extra: Parameters<typeof pod>[2]) => {
      await runConcurrent(n, IN_FLIGHT, (i) => post(`/api/v1/namespaces/${ns}/pods`, pod(ns, `p-${i}`, extra)));
      const floor = await measureFloor();
      const s = await startScheduler(kubeconfigPath, ns);
      sched = s.proc;
      const t0 = performance.now();
      const sched0 = cpuSeconds(s.proc.pid);
      const api0 = cpuSeconds(api.proc.pid);
      // Pods of earlier scenarios are bound already; the counter counts this scenario's pods only.
      const first = await attempts(s.metricsUrl);
      const base = first['scheduled'] ?? 0;
      const deadline = Date.now() + 600_000;
      let last: Record<string, number> = {};
      while (Date.now() < deadline) {
        last = await attempts(s.metricsUrl);
        const done = (last['scheduled'] ?? 0) - base;
        if (done + base >= n) break;
        // Rendering /metrics costs the scheduler CPU: poll rarely while far from done, often near the end.
        const elapsedMs = performance.now() - t0;
        const etaMs = done > 0 ? ((n - base - done) * elapsedMs) / done : 1000;
        await new Promise((r) => setTimeout(r, Math.max(50, Math.min(2000, etaMs / 5))));
      }
      const seconds = (performance.now() - t0) / 1000;
      const schedCpu = cpuSeconds(s.proc.pid) - sched0;
      const apiCpu = cpuSeconds(api.proc.pid) - api0;
      const bound = last['scheduled'] ?? 0;
      // Little's law: binds in flight on average = bind rate × mean bind latency (the scheduler caps it at 256).
      const inFlight = ((last['bindSeconds'] ?? 0) - (first['bindSeconds'] ?? 0)) / seconds;
      await stop(s.proc);
      sched = undefined;
      // Pods already scheduled when the first poll answered did not count toward the elapsed time.
      results.push({ name, pods: bound - base, seconds, floor, schedCpu, apiCpu, inFlight, load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0]! });
      if (process.env['BENCH_VERBOSE']) {
        console.error(`${name}: ${fmt(seconds)} s wall for ${bound - base} pods; CPU scheduler ${fmt(schedCpu)} s, apiserver ${fmt(apiCpu)} s; floor ${fmt(floor, 0)} binds/s; attempts ${JSON.stringify(last)}`);
      }
      if (bound < n) console.error(`${name}: only ${bound}/${n} pods bound (attempts ${JSON.stringify(last)})`);
    };
    if (SCENARIOS.includes('basic')) await scenario('basic', 'bench-basic', PODS, {});
    if (SCENARIOS.includes('anti')) {
      await scenario('pod anti-affinity', 'bench-anti', ANTI_PODS, {
        labels: { group: 'anti' },
        spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { group: 'anti' } }, topologyKey: 'kubernetes.io/hostname' }] } } },
      });
    }
    if (SCENARIOS.includes('spread')) {
      await scenario('topology spread', 'bench-spread', SPREAD_PODS, {
        labels: { group: 'spread' },
        spec: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { group: 'spread' } } }] },
      });
    }

    printHeader(`bench/scheduler: ${NODES} hollow nodes; floor = POST pods/binding, ${IN_FLIGHT} in flight, same apiserver, measured before each scenario`);
    for (const r of results) {
      const rate = r.pods / r.seconds;
      printRow(`${r.name}: ${r.pods} pods (pods/s)`, fmt(rate, 0), fmt(r.floor, 0), fmt(rate / r.floor), r.name === 'basic' ? '≥ 300 pods/s, ≥ 0.8' : 'report');
    }
    for (const r of results) {
      console.log(`  ${r.name}: ${fmt(r.seconds)} s wall; CPU busy: scheduler ${fmt(r.schedCpu)} s (${fmt((100 * r.schedCpu) / r.seconds, 0)} %), apiserver ${fmt(r.apiCpu)} s (${fmt((100 * r.apiCpu) / r.seconds, 0)} %); binds in flight ${fmt(r.inFlight, 1)} on average (cap 256); load average ${r.load}`);
    }
    const [l1, l5] = readFileSync('/proc/loadavg', 'utf8').split(' ');
    console.log(`  load average at the end: ${l1} (1 min), ${l5} (5 min)`);
  } finally {
    if (sched) await stop(sched);
    await pool.close();
    await stop(api.proc);
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
