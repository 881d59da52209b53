/**
 * bench/controllers: how fast the ReplicaSet controller fills a BENCH_REPLICAS (1,000) replica
 * ReplicaSet, against a real apiserver (own process) on a 3-member etcd, as a ratio to the
 * apiserver's raw pod create rate (plain client, 64 in flight) measured in the same run.
 *                                                                           goal ≥ 0.8 of the floor
 * The clock starts when the ReplicaSet is created and stops when all its pods exist.
 *
 * Job: BENCH_JOB_COMPLETIONS (500) completions at parallelism 50, time from create to the
 * Complete condition, with a hollow node (this process) marking each new pod Succeeded through
 * the status API. Floor, same run and apiserver: the same number of pods, 50 in flight, each
 * created, marked Succeeded through /status and deleted by a plain client — the three pod writes
 * a Job completion costs (create, kubelet status, finalizer removal). Ratio = floor ÷ Job time.
 *                                                                           goal ≥ 0.8 of the floor
 * BENCH_SCENARIOS=rs,job (default both).
 * Then a StatefulSet of BENCH_STS_REPLICAS (50) Parallel pods to all Ready ÷ a Deployment of as many
 * to all Ready, in the same run (a PodSim binds pods and reports them Ready: no kubelet).
 *                                                                           goal ≥ 0.9 of the Deployment
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Deployments, Jobs, Namespaces, Pods, ReplicaSets, StatefulSets, type KubeObject } from '@mk8s/api';
import type { Clientset } from '@mk8s/client';
import { startEtcdCluster } from '@mk8s/apiserver/testing';
import { createClientset } from '@mk8s/client';
import { createControllerManager } from '@mk8s/controller-manager';
import { PodSim } from '@mk8s/controller-manager/testing';
import { fmt, printHeader, printRow, runConcurrent } from '../lib.js';

const REPLICAS = Number(process.env['BENCH_REPLICAS'] ?? 1000);
const STS_REPLICAS = Number(process.env['BENCH_STS_REPLICAS'] ?? 50);
const IN_FLIGHT = 64;
const COMPLETIONS = Number(process.env['BENCH_JOB_COMPLETIONS'] ?? 500);
const JOB_PARALLELISM = 50;
const SCENARIOS = (process.env['BENCH_SCENARIOS'] ?? 'rs,job').split(',');
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

const spec = { containers: [{ name: 'c', image: 'mk8s/pause:3.9', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] };

async function main(): Promise<void> {
  const etcd = await startEtcdCluster({ members: 3 });
  const api = await startApiServer(etcd.endpoints);
  const client = createClientset({ server: api.url, qps: 0 });
  const ac = new AbortController();
  try {
    for (const ns of ['floor', 'rs', 'jobfloor', 'job']) await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    if (SCENARIOS.includes('job')) await benchJob(client, api.url);
    if (!SCENARIOS.includes('rs')) return;

    // Floor: the apiserver's raw create rate for the same pods.
    const floorPods = client.resource(Pods, 'floor');
    const floor = await runConcurrent(REPLICAS, IN_FLIGHT, async (i) => {
      await floorPods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, labels: { app: 'floor' } }, spec } as KubeObject);
    });
    const floorRate = REPLICAS / (floor.elapsedMs / 1000);

    const cm = createControllerManager({ client: createClientset({ server: api.url, qps: 0 }), healthPort: -1, leaderElect: false, controllers: ['replicaset'] });
    const running = cm.run(ac.signal);
    await cm.ready;
    const rsPods = client.resource(Pods, 'rs');
    const start = performance.now();
    await client.resource(ReplicaSets, 'rs').create({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'big' },
      spec: { replicas: REPLICAS, selector: { matchLabels: { app: 'big' } }, template: { metadata: { labels: { app: 'big' } }, spec } } } as KubeObject);
    let seen = 0;
    for await (const ev of rsPods.watch({ signal: ac.signal })) {
      if (ev.type === 'ADDED' && ++seen >= REPLICAS) break;
    }
    const elapsed = performance.now() - start;
    const rate = REPLICAS / (elapsed / 1000);
    printHeader(`controllers: ${REPLICAS}-replica ReplicaSet`);
    printRow(`pods created/s (${REPLICAS} replicas)`, fmt(rate, 0), fmt(floorRate, 0), fmt(rate / floorRate), '≥ 0.8');
    printRow('time to all pods created (s)', fmt(elapsed / 1000, 2), fmt(floor.elapsedMs / 1000, 2), fmt(floor.elapsedMs / elapsed), '≥ 0.8');
    ac.abort();
    await running.catch(() => undefined);
    await statefulSetVsDeployment(api.url);
  } finally {
    ac.abort();
    api.proc.kill('SIGTERM');
    await etcd.stop();
  }
}

const succeeded = (p: KubeObject): KubeObject => {
  const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { ...p, status: { phase: 'Succeeded', containerStatuses: [{ name: 'c', image: 'mk8s/pause:3.9', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: t, finishedAt: t } } }] } };
};

async function benchJob(client: Clientset, url: string): Promise<void> {
  // Floor: create → Succeeded through /status → delete, JOB_PARALLELISM pods in flight.
  const floorPods = client.resource(Pods, 'jobfloor');
  const floor = await runConcurrent(COMPLETIONS, JOB_PARALLELISM, async (i) => {
    const p = await floorPods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}` }, spec } as KubeObject);
    await floorPods.updateStatus(succeeded(p));
    await floorPods.delete(p.metadata.name, { gracePeriodSeconds: 0 });
  });

  const ac = new AbortController();
  const cm = createControllerManager({ client: createClientset({ server: url, qps: 0 }), healthPort: -1, leaderElect: false, controllers: ['job'] });
  const running = cm.run(ac.signal);
  await cm.ready;
  // The hollow node: every new pod of the Job succeeds at once.
  const pods = client.resource(Pods, 'job');
  const done = new Set<string>();
  const hollow = (async () => {
    for await (const ev of pods.watch({ signal: ac.signal })) {
      const p = ev.object;
      if (ev.type !== 'ADDED' || done.has(p.metadata.name)) continue;
      done.add(p.metadata.name);
      void pods.updateStatus(succeeded(p)).catch(() => undefined);
    }
  })().catch(() => undefined);
  const start = performance.now();
  await client.resource(Jobs, 'job').create({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'big' },
    spec: { completions: COMPLETIONS, parallelism: JOB_PARALLELISM, template: { spec: { ...spec, restartPolicy: 'Never' } } } } as KubeObject);
  for await (const ev of client.resource(Jobs, 'job').watch({ signal: ac.signal })) {
    const conds = ((ev.object as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? []);
    if (conds.some((c) => c.type === 'Complete' && c.status === 'True')) break;
  }
  const elapsed = performance.now() - start;
  const job = await client.resource(Jobs, 'job').get('big') as { status?: { succeeded?: number; failed?: number } } & KubeObject;
  printHeader(`controllers: Job of ${COMPLETIONS} completions, parallelism ${JOB_PARALLELISM}`);
  printRow(`time to Complete (s), ${job.status?.succeeded ?? 0} succeeded, ${pods ? done.size : 0} pods`, fmt(elapsed / 1000, 2), fmt(floor.elapsedMs / 1000, 2), fmt(floor.elapsedMs / elapsed), '≥ 0.8');
  ac.abort();
  await Promise.all([running.catch(() => undefined), hollow]);
}

/** Time from create to STS_REPLICAS Ready pods in namespace ns (pods made Ready by a PodSim). */
async function timeToReady(url: string, ns: string, create: () => Promise<unknown>): Promise<number> {
  const client = createClientset({ server: url, qps: 0 });
  await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const sim = new PodSim(client, ns, { bindTo: () => ['bench-node'] });
  await sim.start();
  const ac = new AbortController();
  try {
    const start = performance.now();
    await create();
    const ready = new Set<string>();
    for await (const ev of client.resource<KubeObject>(Pods, ns).watch({ signal: ac.signal })) {
      const st = (ev.object as { status?: { conditions?: { type: string; status: string }[] } }).status;
      if (ev.type !== 'DELETED' && st?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) ready.add(ev.object.metadata.name);
      if (ready.size >= STS_REPLICAS) break;
    }
    return performance.now() - start;
  } finally { ac.abort(); sim.stop(); }
}

/** StatefulSet (Parallel) to all Ready ÷ Deployment to all Ready, same size, same apiserver. */
async function statefulSetVsDeployment(url: string): Promise<void> {
  const ac = new AbortController();
  const cm = createControllerManager({ client: createClientset({ server: url, qps: 0 }), healthPort: -1, leaderElect: false, controllers: ['deployment', 'replicaset', 'statefulset'] });
  const running = cm.run(ac.signal);
  await cm.ready;
  const client = createClientset({ server: url, qps: 0 });
  const tpl = (app: string) => ({ metadata: { labels: { app } }, spec });
  try {
    const deployMs = await timeToReady(url, 'deploy', () => client.resource(Deployments, 'deploy').create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: { replicas: STS_REPLICAS, selector: { matchLabels: { app: 'web' } }, template: tpl('web') } } as KubeObject));
    const stsMs = await timeToReady(url, 'sts', () => client.resource(StatefulSets, 'sts').create({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
      spec: { replicas: STS_REPLICAS, serviceName: 'web', podManagementPolicy: 'Parallel', selector: { matchLabels: { app: 'web' } }, template: tpl('web') } } as KubeObject));
    printHeader(`controllers: ${STS_REPLICAS}-pod StatefulSet (Parallel) vs Deployment, to all Ready`);
    printRow('time to all Ready (s)', fmt(stsMs / 1000, 2), fmt(deployMs / 1000, 2), fmt(deployMs / stsMs), '≥ 0.9');
  } finally {
    ac.abort();
    await running.catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
