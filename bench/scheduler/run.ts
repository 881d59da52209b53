/**
 * bench/scheduler: scheduling throughput on hollow nodes (Node objects only, no kubelet), as
 * upstream's scheduler_perf does, against a real apiserver (own process) on a 3-member etcd.
 *  - basic: BENCH_PODS (5,000) pods on BENCH_NODES (1,000) nodes             goal ≥ 300 pods/s
 *  - pod anti-affinity (hostname, one group): BENCH_ANTI_PODS (1,000) pods
 *  - topology spread (zone, maxSkew 1, DoNotSchedule): BENCH_SPREAD_PODS (5,000) pods
 *  - the bind-write floor: POST pods/binding by a plain client, 64 in flight (as many as the
 *    scheduler's binds), measured right before each scenario so both see the same machine load
 *                                                                           goal ≥ 0.8 of the floor
 * Pods are created while no scheduler runs; the clock starts once a fresh scheduler has synced
 * and stops when it has bound them all, so pod creation does not count.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startEtcdCluster } from '@mk8s/apiserver/testing';
import { createClientset } from '@mk8s/client';
import { createScheduler } from '@mk8s/scheduler';
import { fmt, printHeader, printRow, runConcurrent } from '../lib.js';

const NODES = Number(process.env['BENCH_NODES'] ?? 1000);
const PODS = Number(process.env['BENCH_PODS'] ?? 5000);
const ANTI_PODS = Number(process.env['BENCH_ANTI_PODS'] ?? Math.min(1000, NODES));
const SPREAD_PODS = Number(process.env['BENCH_SPREAD_PODS'] ?? PODS);
const FLOOR_BINDS = Number(process.env['BENCH_FLOOR_BINDS'] ?? 2000);
const ZONES = 10;
const IN_FLIGHT = 64;
const ROOT = process.env['MK8S_ROOT'] ?? new URL('../..', import.meta.url).pathname;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
  });
}

async function startApiServer(etcd: string[]): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'apiserver/src/main.ts'),
    '--etcd-servers', etcd.join(','), '--port', String(port), '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'], cwd: ROOT });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try { if ((await fetch(`${url}/readyz`)).ok) return { url, proc }; } catch { /* not yet */ }
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error('apiserver did not become ready');
    await new Promise((r) => setTimeout(r, 200));
  }
}

const pod = (ns: string, name: string, extra: { labels?: Record<string, string>; spec?: Record<string, unknown> } = {}) => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: ns, labels: { app: ns, ...extra.labels } },
  spec: { containers: [{ name: 'c', image: 'mk8s/pause:3.9', resources: { requests: { cpu: '100m', memory: '128Mi' } } }], ...extra.spec },
});

async function main(): Promise<void> {
  const etcd = await startEtcdCluster({ members: 3 });
  const api = await startApiServer(etcd.endpoints);
  const pool = new Pool(api.url, { connections: IN_FLIGHT });
  const post = async (path: string, body: unknown) => {
    const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  };
  const results: { name: string; pods: number; seconds: number; floor: number }[] = [];
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
      const client = createClientset({ server: api.url, qps: 0 });
      const sched = createScheduler({ client, healthPort: -1, leaderElect: false });
      const ac = new AbortController();
      const running = sched.run(ac.signal);
      await sched.ready;
      const s = sched.scheduler;
      const base = s.stats.scheduled;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const deadline = Date.now() + 600_000;
      while (s.stats.scheduled - base < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      if (process.env['BENCH_VERBOSE']) {
        console.error(`${name}: ${fmt(seconds)} s wall, scheduler process CPU ${fmt((cpu.user + cpu.system) / 1e6)} s, floor ${fmt(floor, 0)} binds/s, stats ${JSON.stringify(s.stats)}`);
      }
      const bound = s.stats.scheduled - base;
      ac.abort();
      await running.catch(() => undefined);
      results.push({ name, pods: bound, seconds, floor });
      if (bound < n) console.error(`${name}: only ${bound}/${n} pods bound (unschedulable ${s.stats.unschedulable}, errors ${s.stats.errors})`);
    };
    await scenario('basic', 'bench-basic', PODS, {});
    await scenario('pod anti-affinity', 'bench-anti', ANTI_PODS, {
      labels: { group: 'anti' },
      spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { group: 'anti' } }, topologyKey: 'kubernetes.io/hostname' }] } } },
    });
    await scenario('topology spread', 'bench-spread', SPREAD_PODS, {
      labels: { group: 'spread' },
      spec: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { group: 'spread' } } }] },
    });

    printHeader(`bench/scheduler: ${NODES} hollow nodes; floor = POST pods/binding, ${IN_FLIGHT} in flight, measured before each scenario`);
    for (const r of results) {
      const rate = r.pods / r.seconds;
      printRow(`${r.name}: ${r.pods} pods (pods/s)`, fmt(rate, 0), fmt(r.floor, 0), fmt(rate / r.floor), r.name === 'basic' ? '≥ 300 pods/s, ≥ 0.8' : 'report');
    }
  } finally {
    await pool.close();
    api.proc.kill('SIGTERM');
    await new Promise((r) => api.proc.once('exit', r));
    await etcd.stop();
  }
}

main().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
