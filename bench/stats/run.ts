/**
 * bench/stats: the cost of one kubelet /metrics/resource scrape (what metrics-server does every
 * 15 s per node) with N pods, against the raw floor measured in the same run: reading the very same
 * cgroup files directly (cpuacct.usage / cpu.stat, memory.usage_in_bytes / memory.current,
 * memory.stat of every container, pause included) with the paths already known. The scrape is the
 * real path: HTTP GET on a kubelet API server → StatsProvider → CRI ListPodSandboxStats over gRPC
 * on a unix socket → the Docker shim (one `docker ps`, cgroup reads) → Prometheus text. Also
 * /stats/summary (adds writable-layer sizes, cached 10 s, and network), and Docker's one-shot
 * stats API for every container (what the shim used before) as a second reference.
 * N pods of one pause + one `sleep` container run under a throwaway node label (network none, on
 * the host: no netns needed) and are removed at the end, also on failure.
 * Run (root, dockerd, mk8s/pause and busybox images; hold the cluster lock):
 *   flock /tmp/mk8s-cluster.lock node --conditions=@mk8s/source --import tsx bench/stats/run.ts
 *   BENCH_PODS (30), BENCH_SCRAPES (40).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { realClock, silentLogger } from '@mk8s/component-base';
import { RemoteRuntimeService, RemoteImageService, serveCri } from '@mk8s/proto';
import { createCriDockerShim, detectCgroupLayout, cgroupDirs, parseProcCgroup, type CgroupDirs } from '@mk8s/cri-docker';
import { StatsProvider, serveKubelet } from '@mk8s/kubelet';
import { fmt, printHeader, printRow, summarize } from '../lib.js';

const N = Number(process.env['BENCH_PODS'] ?? 30);
const SCRAPES = Number(process.env['BENCH_SCRAPES'] ?? 40);
const node = `bench-stats-${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'mk8s-bench-stats-'));
const docker = new Docker();
const logger = silentLogger();

const shim = createCriDockerShim({ socketPath: join(dir, 'cri.sock'), nodeName: node, networkPlugin: 'none', logger });
const criSock = join(dir, 'cri2.sock');
const server = await serveCri({ socketPath: criSock, runtime: shim.runtime, image: shim.images });
const runtime = new RemoteRuntimeService({ socketPath: criSock });
const images = new RemoteImageService({ socketPath: criSock });

const cleanup = async () => {
  const all = await docker.listContainers({ all: true, filters: { label: [`io.mk8s.node=${node}`] } });
  await Promise.all(all.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  rmSync(dir, { recursive: true, force: true });
};

try {
  // N pods: a sandbox and one container each.
  for (let i = 0; i < N; i++) {
    const config = { metadata: { name: `p${i}`, namespace: 'bench', uid: `${node}-${i}`, attempt: 0 }, labels: {}, annotations: {} };
    const sb = await shim.runtime.runPodSandbox(config);
    const c = await shim.runtime.createContainer(sb, { metadata: { name: 'app', attempt: 0 }, image: { image: 'busybox:latest' }, command: ['sleep', '3600'], labels: {}, annotations: {} }, config);
    await shim.runtime.startContainer(c);
  }
  const provider = new StatsProvider({ nodeName: node, runtime, images, pods: () => [], rootDir: dir, clock: realClock });
  const kubelet = await serveKubelet({ port: 0, host: '127.0.0.1', runtime, logger, nodeName: node, pods: () => [], podRuntime: async () => ({ sandboxes: [], containers: [] }), stats: provider });
  const url = `http://127.0.0.1:${kubelet.port}`;

  // The floor's paths: every container's cgroup dirs, found once (not timed).
  const layout = await detectCgroupLayout('/sys/fs/cgroup');
  const listed = await docker.listContainers({ filters: { label: [`io.mk8s.node=${node}`] } });
  const dirs: CgroupDirs[] = [];
  for (const c of listed) {
    const pid = (await docker.getContainer(c.Id).inspect()).State.Pid;
    const d = cgroupDirs(layout, parseProcCgroup(await readFile(`/proc/${pid}/cgroup`, 'utf8')));
    if (d) dirs.push(d);
  }
  const v1 = layout.version === 1;
  const rawRead = () => Promise.all(dirs.map((d) => Promise.all([
    readFile(join(d.cpu, v1 ? 'cpuacct.usage' : 'cpu.stat'), 'utf8'),
    readFile(join(d.memory, v1 ? 'memory.usage_in_bytes' : 'memory.current'), 'utf8'),
    readFile(join(d.memory, 'memory.stat'), 'utf8'),
  ])));
  const timed = async (fn: () => Promise<unknown>, n: number): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) { const t = performance.now(); await fn(); out.push(performance.now() - t); }
    return out;
  };
  const get = async (path: string) => { const r = await fetch(`${url}${path}`); if (r.status !== 200) throw new Error(`${path}: ${r.status}`); return r.text(); };
  const body = await get('/metrics/resource');
  const series = body.split('\n').filter((l) => l && !l.startsWith('#')).length;
  await get('/stats/summary');                                   // warm: inspect caches, first du

  // Rounds alternate ours and the floor (a shared machine's load moves).
  const ours: number[] = []; const floor: number[] = []; const summary: number[] = [];
  const rounds = 4;
  for (let r = 0; r < rounds; r++) {
    ours.push(...await timed(() => get('/metrics/resource'), SCRAPES / rounds));
    floor.push(...await timed(rawRead, SCRAPES / rounds));
    summary.push(...await timed(() => get('/stats/summary'), SCRAPES / rounds / 2));
  }
  const dockerStats = await timed(() => Promise.all(listed.map((c) => docker.getContainer(c.Id).stats({ stream: false, 'one-shot': true } as { stream: false }))), 3);
  const cpu0 = process.cpuUsage();
  await timed(() => get('/metrics/resource'), 10);
  const cpu = process.cpuUsage(cpu0);

  const o = summarize(ours); const f = summarize(floor); const s = summarize(summary); const d = summarize(dockerStats);
  printHeader(`stats: ${N} pods (${listed.length} containers, ${series} series), ${SCRAPES} scrapes, cgroup v${layout.version}, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  printRow('/metrics/resource scrape p50 (ms)', fmt(o.p50), fmt(f.p50), fmt(o.p50 / f.p50), 'floor: the same cgroup files read directly');
  printRow('/metrics/resource scrape p99 (ms)', fmt(o.p99), fmt(f.p99), fmt(o.p99 / f.p99), '(reported)');
  printRow('/stats/summary p50 (ms)', fmt(s.p50), fmt(f.p50), fmt(s.p50 / f.p50), '(reported)');
  printRow('docker stats one-shot, all containers p50 (ms)', fmt(d.p50), fmt(f.p50), fmt(d.p50 / f.p50), 'the old way (reference)');
  printRow('  CPU per scrape, bench process (ms)', fmt((cpu.user + cpu.system) / 1000 / 10), '-', '', 'kubelet + shim + client in one process');
  await kubelet.close();
} finally {
  runtime.close?.();
  images.close?.();
  await server.close(1000).catch(() => undefined);
  await cleanup();
}
