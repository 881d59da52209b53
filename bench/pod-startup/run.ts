/**
 * Pod startup: apply → Running latency (p50/p99) for bursts of 1, 10 and 30 pods on the running
 * cluster, against the raw floor measured in the same run: `docker create` + `docker start` of the
 * same containers (a pause container and the app container joined to its network), sequential for
 * the per-pod floor and all at once for the burst floor (whose per-pod latencies are also printed:
 * the like-for-like comparison for a burst). Then the idle RSS and CPU of the kubelet
 * and the shim with 30 pods running. Then the density run (BENCH_DENSITY, default 110: upstream's
 * per-node maximum; 0 skips it): that many pods at once on one node, their p50/p99 start and
 * throughput against the same number through docker at once (right after), the kubelet's and
 * shim's CPU during the start, and their steady CPU and RSS with all of them running.
 * Prints figures; asserts nothing.
 *
 * The single pod is measured BENCH_SINGLE_ROUNDS times (default 9), each round one pod through
 * mk8s and one through docker, in alternating order, each after the previous pod's containers are
 * gone from Docker (so neither side pays for the other's teardown). "Running" is stamped when a
 * watch on the namespace delivers the pod Running with every container running. BENCH_BURSTS
 * (default 10,30) lists the bursts; empty: the single pod only.
 *
 * Run: node --conditions=@mk8s/source --import tsx bench/pod-startup/run.ts  (cluster from `make up`)
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClientset } from '@mk8s/client';
import { Namespaces, Nodes, Pods, ServiceAccounts, type KubeObject } from '@mk8s/api';
import { fmt, printHeader, printRow, summarize } from '../lib.js';

const exec = promisify(execFile);
const ROOT = process.env['MK8S_ROOT'] ?? join(import.meta.dirname, '..', '..');
const client = createClientset({ kubeconfig: process.env['KUBECONFIG'] ?? join(ROOT, '.mk8s', 'kubeconfig'), userAgent: 'bench-pod-startup', qps: 0 });
const ns = `bench-pods-${Date.now().toString(36)}`;
const IMAGE = 'busybox:latest';

type Pod = KubeObject & { status?: { phase?: string; containerStatuses?: { state?: { running?: unknown } }[] } };
const pods = () => client.resource<Pod>(Pods, ns);

/**
 * Stamps (performance.now) the moment a watch on the namespace first delivers each pod Running
 * with every container running. Re-opens the watch from the last resourceVersion if it ends.
 */
class RunningStamps {
  private readonly at = new Map<string, number>();
  private readonly ac = new AbortController();
  private rv = '';
  async start(): Promise<void> {
    this.rv = (await pods().list()).metadata?.resourceVersion ?? '';
    void this.loop();
  }
  stop(): void { this.ac.abort(); }
  private async loop(): Promise<void> {
    while (!this.ac.signal.aborted) {
      try {
        for await (const ev of pods().watch({ resourceVersion: this.rv, signal: this.ac.signal })) {
          const p = ev.object;
          const now = performance.now();
          if (p.metadata.resourceVersion) this.rv = p.metadata.resourceVersion;
          if (!this.at.has(p.metadata.name) && ev.type !== 'DELETED' && p.status?.phase === 'Running' && p.status.containerStatuses?.length && p.status.containerStatuses.every((c) => c.state?.running)) this.at.set(p.metadata.name, now);
        }
      } catch {
        if (this.ac.signal.aborted) return;
        this.rv = (await pods().list().catch(() => undefined))?.metadata?.resourceVersion ?? this.rv;
      }
    }
  }
  /** Latency (ms) of each name from its t0 to Running; throws after 5 minutes. */
  async wait(names: string[], t0: Map<string, number>): Promise<number[]> {
    const deadline = Date.now() + 300_000;
    while (names.some((n) => !this.at.has(n))) {
      if (Date.now() > deadline) throw new Error(`only ${names.filter((n) => this.at.has(n)).length}/${names.length} pods Running after 5 minutes`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return names.map((n) => this.at.get(n)! - t0.get(n)!);
  }
}
const stamps = new RunningStamps();

async function mk8sBurst(n: number, node: string, single?: string): Promise<{ latMs: number[]; elapsedMs: number }> {
  const names = single ? [single] : Array.from({ length: n }, (_, i) => `p${n}-${i}`);
  const t0 = new Map<string, number>();
  const start = performance.now();
  await Promise.all(names.map(async (name) => {
    t0.set(name, performance.now());
    await pods().create({
      apiVersion: 'v1', kind: 'Pod', metadata: { name },
      spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] },
    } as Pod);
  }));
  const latMs = await stamps.wait(names, t0);
  return { latMs, elapsedMs: performance.now() - start };
}

async function deleteAll(names: string[]): Promise<void> {
  await Promise.all(names.map((n) => pods().delete(n, { gracePeriodSeconds: 0 }).catch(() => undefined)));
  const deadline = Date.now() + 120_000;
  while ((await pods().list()).items.length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  // The kubelet stops and removes the containers after the object is gone: wait for that too, so
  // the next measurement does not share Docker with this teardown.
  while (Date.now() < deadline) {
    const { stdout } = await exec('docker', ['ps', '-aq', '--filter', `label=io.kubernetes.pod.namespace=${ns}`]);
    if (!stdout.trim()) break;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * BENCH_TRACE=1: each single pod's path from the node's kubelet and shim logs (ms after the
 * create was sent; run the cluster with MK8S_LOG_LEVEL=debug for every step).
 */
function printTraces(node: string, traces: { name: string; t0: number; runningAt: number }[]): void {
  const lines = ['kubelet', 'cri-docker'].flatMap((c) => {
    try { return readFileSync(join(ROOT, '.mk8s', 'logs', `${node}-${c}.log`), 'utf8').split('\n').filter((l) => l.includes(`"${ns}/`)); } catch { return []; }
  }).map((l) => { try { return JSON.parse(l) as Record<string, unknown>; } catch { return undefined; } }).filter((x) => x !== undefined);
  for (const t of traces) {
    console.log(`  ${t.name}: Running seen at +${t.runningAt - t.t0} ms`);
    const mine = lines.filter((l) => l['pod'] === `${ns}/${t.name}`).map((l) => ({ at: Date.parse(String(l['time'])) - t.t0, l }))
      .filter((x) => x.at >= -1000 && x.at < t.runningAt - t.t0 + 1000).sort((a, b) => a.at - b.at);
    for (const { at, l } of mine) {
      const { level: _l, time: _t, component, pod: _p, podUid: _u, msg, ...rest } = l;
      console.log(`    +${String(at).padStart(6)} ms  ${String(component).padEnd(10)} ${String(msg)} ${JSON.stringify(rest).slice(0, 160)}`);
    }
  }
}

/** The floor: docker create+start of a pause container and the app container in its network. */
async function dockerPod(tag: string): Promise<number> {
  const t = performance.now();
  const { stdout } = await exec('docker', ['create', '--label', 'mk8s-bench=pod-startup', '--network', 'none', '--ipc', 'shareable', '--name', `${tag}-pause`, 'mk8s/pause:3.9']);
  const pause = stdout.trim();
  await exec('docker', ['start', pause]);
  const app = (await exec('docker', ['create', '--label', 'mk8s-bench=pod-startup', '--network', `container:${pause}`, '--ipc', `container:${pause}`, '--name', `${tag}-app`, IMAGE, 'sleep', '3600'])).stdout.trim();
  await exec('docker', ['start', app]);
  return performance.now() - t;
}

async function dockerBurst(n: number, parallel: boolean, onStarted?: () => void): Promise<{ latMs: number[]; elapsedMs: number }> {
  const start = performance.now();
  const tags = Array.from({ length: n }, (_, i) => `mk8s-bench-${Date.now().toString(36)}-${i}`);
  const latMs: number[] = [];
  if (parallel) latMs.push(...await Promise.all(tags.map(dockerPod)));
  else for (const t of tags) latMs.push(await dockerPod(t));
  const elapsedMs = performance.now() - start;
  onStarted?.();
  const { stdout } = await exec('docker', ['ps', '-aq', '--filter', 'label=mk8s-bench=pod-startup']);
  const ids = stdout.split('\n').filter(Boolean);
  if (ids.length) await exec('docker', ['rm', '-f', ...ids]);
  return { latMs, elapsedMs };
}

/** The pids of the node's kubelet and shim. */
const nodePids = (node: string): number[] => ['kubelet', 'cri-docker'].map((c) => Number(readFileSync(join(ROOT, '.mk8s', 'run', `${node}-${c}.pid`), 'utf8')));

/** CPU (% of one core) and RSS (MiB) of the node's kubelet and shim over ms. */
async function nodeUsage(node: string, ms: number): Promise<{ kubelet: { rssMi: number; cpu: number }; shim: { rssMi: number; cpu: number } }> {
  const pids = nodePids(node);
  const a = pids.map(procUsage);
  const t = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const b = pids.map(procUsage);
  const secs = (performance.now() - t) / 1000;
  const one = (i: number) => ({ rssMi: b[i]!.rssKi / 1024, cpu: ((b[i]!.cpuTicks - a[i]!.cpuTicks) / 100 / secs) * 100 });
  return { kubelet: one(0), shim: one(1) };
}

/**
 * CPU ticks by group: this cluster's processes (the pid files under .mk8s/run, by name) and the
 * container runtime's (dockerd, containerd, containerd-shim and the pause/app processes, by
 * command name); own time plus the time of children it waited for (so short-lived runc and
 * iproute2 processes count to the process that ran them). Other processes on the machine are
 * left out. BENCH_CPU_ACCOUNT=1.
 */
function cpuByGroup(): Map<string, number> {
  const out = new Map<string, number>();
  const ticks = (pid: string): number | undefined => {
    try {
      const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
      return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch { return undefined; }
  };
  const add = (g: string, t: number | undefined) => { if (t !== undefined) out.set(g, (out.get(g) ?? 0) + t); };
  const run = join(ROOT, '.mk8s', 'run');
  for (const f of readdirSync(run)) {
    if (!f.endsWith('.pid') || f === 'dockerd.pid') continue;
    const name = f.slice(0, -4).replace(/^node-\d+-/, '').replace(/-\d+$/, '');
    add(name, ticks(readFileSync(join(run, f), 'utf8').trim()));
  }
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let comm = '';
    try { comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim(); } catch { continue; }
    if (/^(dockerd|containerd|containerd-shim.*|pause|sleep)$/.test(comm)) add(comm.startsWith('containerd-shim') ? 'containerd-shim' : comm, ticks(d));
  }
  return out;
}

/** Prints ms of CPU per pod for each group between two cpuByGroup() readings (largest first). */
function printCpuAccount(label: string, a: Map<string, number>, b: Map<string, number>, pods: number): void {
  const rows = [...b].map(([g, t]) => [g, Math.max(0, t - (a.get(g) ?? 0)) * 10 / pods] as const).filter(([, ms]) => ms >= 0.5).sort((x, y) => y[1] - x[1]);
  const total = rows.reduce((s, [, ms]) => s + ms, 0);
  console.log(`  CPU per pod, ${label}: total ${fmt(total, 1)} ms = ${rows.map(([g, ms]) => `${g} ${fmt(ms, 1)}`).join(', ')}`);
}

function procUsage(pid: number): { rssKi: number; cpuTicks: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKi = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { rssKi, cpuTicks: Number(stat[11]) + Number(stat[12]) };
}

async function main(): Promise<void> {
  const nodes = await client.resource<KubeObject>(Nodes).list();
  const node = nodes.items[0]?.metadata.name;
  if (!node) throw new Error('no node registered: is the cluster up?');
  await client.resource<KubeObject>(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  // ServiceAccount admission refuses pods until the serviceaccount controller has made `default`
  // (as in Kubernetes); wait for it so the first burst measures startup, not that race.
  for (const deadline = Date.now() + 60_000; ;) {
    if (await client.resource<KubeObject>(ServiceAccounts, ns).get('default').then(() => true, () => false)) break;
    if (Date.now() > deadline) throw new Error(`no default ServiceAccount in ${ns} after 60 s: is the controller-manager running?`);
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    await stamps.start();
    printHeader(`Pod startup on ${node} (apply → Running; floor = docker create+start of pause + app; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')})`);
    // Warm up both paths once (image cache, first CNI call).
    await deleteAll((await mk8sBurst(1, node)).latMs.map((_, i) => `p1-${i}`));
    await dockerBurst(1, false);
    const rounds = Number(process.env['BENCH_SINGLE_ROUNDS'] ?? 9);
    const ours: number[] = []; const floor: number[] = [];
    const traces: { name: string; t0: number; runningAt: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      const mk = async () => {
        const name = `s${r}`;
        const wall = Date.now();
        const lat = (await mk8sBurst(1, node, name)).latMs[0]!;
        ours.push(lat);
        traces.push({ name, t0: wall, runningAt: wall + lat });
        await deleteAll([name]);
      };
      const dk = async () => { floor.push((await dockerBurst(1, false)).latMs[0]!); };
      if (r % 2 === 0) { await mk(); await dk(); } else { await dk(); await mk(); }
    }
    if (process.env['BENCH_TRACE']) printTraces(node, traces);
    const s1 = summarize(ours); const f1 = summarize(floor);
    printRow(`1 pod (${rounds} rounds): p50 (s)`, fmt(s1.p50 / 1000), fmt(f1.p50 / 1000), `${s1.p50 >= f1.p50 ? '+' : ''}${fmt((s1.p50 - f1.p50) / 1000)}s`, '≤ floor + 0.3 s');
    printRow(`1 pod (${rounds} rounds): p99 (s)`, fmt(s1.p99 / 1000), fmt(f1.p99 / 1000), fmt(s1.p99 / f1.p99), '≤ 2 s');
    console.log(`  per round (s): mk8s ${ours.map((x) => fmt(x / 1000)).join(' ')}; docker ${floor.map((x) => fmt(x / 1000)).join(' ')}`);
    for (const n of (process.env['BENCH_BURSTS'] ?? '10,30').split(',').filter(Boolean).map(Number)) {
      const account = !!process.env['BENCH_CPU_ACCOUNT'];
      const c0 = account ? cpuByGroup() : undefined;
      const ours = await mk8sBurst(n, node);
      const c1 = account ? cpuByGroup() : undefined;
      const s = summarize(ours.latMs);
      const floorSeq = summarize((await dockerBurst(Math.min(n, 10), false)).latMs);
      const c2 = account ? cpuByGroup() : undefined;
      let c3: Map<string, number> | undefined;
      const floorPar = await dockerBurst(n, true, () => { if (account) c3 = cpuByGroup(); });
      if (c0 && c1 && c2 && c3) { printCpuAccount(`mk8s burst of ${n}`, c0, c1, n); printCpuAccount(`docker burst of ${n}`, c2, c3, n); }
      printRow(`${n} pod(s): p50 vs sequential floor (s)`, fmt(s.p50 / 1000), fmt(floorSeq.p50 / 1000), fmt(s.p50 / floorSeq.p50), '-');
      printRow(`${n} pod(s): p99 vs sequential floor (s)`, fmt(s.p99 / 1000), fmt(floorSeq.p99 / 1000), fmt(s.p99 / floorSeq.p99), '-');
      // In a burst every pod waits for the others' Docker work too: the like-for-like floor is
      // the per-pod latency of the same burst through docker (all at once).
      const par = summarize(floorPar.latMs);
      printRow(`${n} pod(s): p50 vs parallel floor (s)`, fmt(s.p50 / 1000), fmt(par.p50 / 1000), fmt(s.p50 / par.p50), '-');
      printRow(`${n} pod(s): p99 vs parallel floor (s)`, fmt(s.p99 / 1000), fmt(par.p99 / 1000), fmt(s.p99 / par.p99), '-');
      printRow(`${n} pod(s): burst throughput (pods/s)`, fmt(n / (ours.elapsedMs / 1000)), fmt(n / (floorPar.elapsedMs / 1000)), fmt(floorPar.elapsedMs / ours.elapsedMs), n === 30 ? '≥ 0.8' : '-');
      if (n === 30) {
        const kubeletPid = Number(readFileSync(join(ROOT, '.mk8s', 'run', `${node}-kubelet.pid`), 'utf8'));
        const shimPid = Number(readFileSync(join(ROOT, '.mk8s', 'run', `${node}-cri-docker.pid`), 'utf8'));
        const a = [procUsage(kubeletPid), procUsage(shimPid)];
        const t = performance.now();
        await new Promise((r) => setTimeout(r, 20_000));
        const b = [procUsage(kubeletPid), procUsage(shimPid)];
        const secs = (performance.now() - t) / 1000;
        const cpu = (i: number) => ((b[i]!.cpuTicks - a[i]!.cpuTicks) / 100 / secs) * 100;
        console.log(`\nIdle with 30 pods (20 s): kubelet RSS ${fmt(b[0]!.rssKi / 1024, 1)} MiB, CPU ${fmt(cpu(0), 1)} %; shim RSS ${fmt(b[1]!.rssKi / 1024, 1)} MiB, CPU ${fmt(cpu(1), 1)} %`);
      }
      await deleteAll(Array.from({ length: n }, (_, i) => `p${n}-${i}`));
    }
    const density = Number(process.env['BENCH_DENSITY'] ?? 110);
    if (density > 0) {
      // Density (upstream's 110 pods per node): all at once on one node, then steady state. The
      // like-for-like floor is the same number of pods through docker at once, right after.
      const load0 = loadavg()[0]!;
      const pids = nodePids(node);
      const cpu0 = pids.map(procUsage);
      const ours = await mk8sBurst(density, node);
      const cpu1 = pids.map(procUsage);
      const s = summarize(ours.latMs);
      const u = await nodeUsage(node, 30_000);
      const load1 = loadavg()[0]!;
      await deleteAll(Array.from({ length: density }, (_, i) => `p${density}-${i}`));
      const floorPar = await dockerBurst(density, true);
      const par = summarize(floorPar.latMs);
      printRow(`${density} pods on ${node}: p50 start (s)`, fmt(s.p50 / 1000), fmt(par.p50 / 1000), fmt(s.p50 / par.p50), '(reported)');
      printRow(`${density} pods on ${node}: p99 start (s)`, fmt(s.p99 / 1000), fmt(par.p99 / 1000), fmt(s.p99 / par.p99), '(reported)');
      printRow(`${density} pods: throughput (pods/s)`, fmt(density / (ours.elapsedMs / 1000)), fmt(density / (floorPar.elapsedMs / 1000)), fmt(floorPar.elapsedMs / ours.elapsedMs), '(reported)');
      const cpuS = (i: number) => (cpu1[i]!.cpuTicks - cpu0[i]!.cpuTicks) / 100;
      console.log(`  during the ${density}-pod start (${fmt(ours.elapsedMs / 1000)} s): kubelet CPU ${fmt(cpuS(0))} s (${fmt(cpuS(0) * 1000 / density, 1)} ms/pod), shim CPU ${fmt(cpuS(1))} s (${fmt(cpuS(1) * 1000 / density, 1)} ms/pod)`);
      console.log(`Steady with ${density} pods (30 s, load ${load0.toFixed(1)} → ${load1.toFixed(1)}): kubelet RSS ${fmt(u.kubelet.rssMi, 1)} MiB, CPU ${fmt(u.kubelet.cpu, 1)} %; shim RSS ${fmt(u.shim.rssMi, 1)} MiB, CPU ${fmt(u.shim.cpu, 1)} %`);
    }
    console.log(`load average at end: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  } finally {
    stamps.stop();
    await client.resource<KubeObject>(Namespaces).delete(ns).catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
