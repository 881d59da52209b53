/**
 * StatsReader samples containers and pods for the CRI stats RPCs (container-stats.ts,
 * sandbox-stats.ts) from their cgroup files, as cadvisor and containerd's CRI plugin do, and keeps
 * what makes a sample cheap and a rate right:
 * - per container, its cgroup directories, writable-layer directory and pid, found once with one
 *   `docker inspect` (a container's cgroup never moves; a Kubernetes restart is a new container);
 * - a {@link CpuRateCache} per container and per pod: usageNanoCores between cumulative samples at
 *   least a second apart (a scrape every 15 s reads the rate over those 15 s);
 * - a {@link CumulativeSum} per pod: a pod here has no cgroup of its own, its CPU counter is the
 *   monotonic sum of its containers' (pause included; restarted containers keep counting);
 * - the writable layer's size, walked at most every `fsCacheMs` (a directory walk is the one
 *   expensive figure; cadvisor caches it the same way).
 * One scrape of N pods costs one `docker ps` plus a handful of small file reads per container.
 * Safe to call concurrently; caches are pruned to the live containers on every list.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import type { Logger } from '@mk8s/component-base';
import { CpuRateCache, CumulativeSum, type ContainerStats, type FilesystemUsage, type MemoryUsage, type PodSandboxStats } from '@mk8s/proto';
import { cgroupDirs, detectCgroupLayout, parseProcCgroup, readCgroupUsage, type CgroupDirs, type CgroupLayout, type CgroupUsage } from './cgroups.js';
import { parseNetDev, DEFAULT_INTERFACE } from './net-dev.js';
import { fromDockerLabels } from './labels.js';
import { containerMetadata } from './container-list.js';
import { sandboxMetadata } from './sandbox-status.js';

export interface StatsReaderOptions {
  /** Where the cgroup tree is mounted. @default '/sys/fs/cgroup' */
  cgroupRoot?: string;
  /** Where /proc is (tests point it at a fake tree). @default '/proc' */
  procRoot?: string;
  /** @default Date.now */
  nowMs?: () => number;
  /** How long a writable-layer size is reused. @default 10000 */
  fsCacheMs?: number;
  /** The filesystem the writable layers live on (reported as fsId). @default '/var/lib/docker' */
  dockerRootDir?: string;
  logger: Logger;
}

/** What the reader needs to know of a container: Docker's list entry fields. */
export interface ListedContainer { Id: string; Labels?: Record<string, string> }

/** What one inspect yields and is cached for the container's life. */
interface ContainerInfo { pid: number; dirs: CgroupDirs | undefined; upperDir: string | undefined }

/** A cgroup sample with its time. */
interface Sampled { usage: CgroupUsage; timestampNs: number }

/** The writable layer's du: bytes (allocated blocks, as du and cadvisor count) and inodes. Entries beyond maxEntries are not walked. */
export async function dirUsage(dir: string, maxEntries = 200_000): Promise<{ bytes: number; inodes: number }> {
  let bytes = 0;
  let inodes = 0;
  const stack = [dir];
  while (stack.length && inodes < maxEntries) {
    const d = stack.pop()!;
    let names: string[];
    try { names = await readdir(d); } catch { continue; }
    const stats = await Promise.all(names.map((n) => lstat(join(d, n)).then((s) => ({ n, s }), () => undefined)));
    for (const x of stats) {
      if (!x) continue;
      inodes++;
      bytes += x.s.blocks * 512;
      if (x.s.isDirectory()) stack.push(join(d, x.n));
    }
  }
  return { bytes, inodes };
}

export class StatsReader {
  private readonly cgroupRoot: string;
  private readonly procRoot: string;
  private readonly nowMs: () => number;
  private readonly fsCacheMs: number;
  private readonly dockerRootDir: string;
  private readonly logger: Logger;
  private layout: Promise<CgroupLayout | undefined> | undefined;
  private readonly infos = new Map<string, Promise<ContainerInfo | undefined>>();
  private readonly rates = new CpuRateCache();
  private readonly podSums = new Map<string, CumulativeSum>();
  private readonly fs = new Map<string, { atMs: number; usage: Promise<{ bytes: number; inodes: number }> }>();

  constructor(o: StatsReaderOptions) {
    this.cgroupRoot = o.cgroupRoot ?? '/sys/fs/cgroup';
    this.procRoot = o.procRoot ?? '/proc';
    this.nowMs = o.nowMs ?? Date.now;
    this.fsCacheMs = o.fsCacheMs ?? 10_000;
    this.dockerRootDir = o.dockerRootDir ?? '/var/lib/docker';
    this.logger = o.logger;
  }

  private getLayout(): Promise<CgroupLayout | undefined> {
    this.layout ??= detectCgroupLayout(this.cgroupRoot).catch((err: unknown) => {
      this.logger.warn({ err, root: this.cgroupRoot }, 'Could not find cgroups; stats lack CPU and memory');
      this.layout = undefined;                                   // look again next time (mounts may appear)
      return undefined;
    });
    return this.layout;
  }

  /** The container's cached inspect facts; undefined when it cannot be inspected or runs no process. */
  private info(docker: Docker, id: string): Promise<ContainerInfo | undefined> {
    let p = this.infos.get(id);
    if (!p) {
      p = (async (): Promise<ContainerInfo | undefined> => {
        const i = await docker.getContainer(id).inspect();
        const pid = i.State.Pid;
        if (!pid) return undefined;
        const layout = await this.getLayout();
        const procCgroup = await readFile(join(this.procRoot, String(pid), 'cgroup'), 'utf8');
        const dirs = layout ? cgroupDirs(layout, parseProcCgroup(procCgroup)) : undefined;
        const upperDir = (i.GraphDriver?.Data as Record<string, string> | undefined)?.['UpperDir'];
        return { pid, dirs, upperDir };
      })().catch((err: unknown) => { this.logger.debug({ err, container: id }, 'Could not inspect container for stats'); return undefined; });
      this.infos.set(id, p);
      // A failed or cgroup-less lookup is not cached for good: the container may be starting.
      void p.then((x) => { if (!x?.dirs) this.infos.delete(id); });
    }
    return p;
  }

  private async sample(docker: Docker, id: string): Promise<{ info: ContainerInfo; s: Sampled | undefined } | undefined> {
    const info = await this.info(docker, id);
    if (!info) return undefined;
    if (!info.dirs) return { info, s: undefined };
    try {
      const usage = await readCgroupUsage(info.dirs);
      return { info, s: { usage, timestampNs: this.nowMs() * 1e6 } };
    } catch (err) {
      // The cgroup is gone (the container exited since the list): forget it.
      this.infos.delete(id);
      this.logger.debug({ err, container: id }, 'Could not read container cgroup');
      return undefined;
    }
  }

  private writableLayer(id: string, upperDir: string | undefined): Promise<FilesystemUsage | undefined> {
    if (!upperDir) return Promise.resolve(undefined);
    const now = this.nowMs();
    let hit = this.fs.get(id);
    if (!hit || now - hit.atMs >= this.fsCacheMs) {
      hit = { atMs: now, usage: dirUsage(upperDir) };
      this.fs.set(id, hit);
    }
    return hit.usage.then((u) => ({ timestamp: now * 1e6, fsId: { mountpoint: this.dockerRootDir }, usedBytes: { value: u.bytes }, inodesUsed: { value: u.inodes } }));
  }

  /** One container's stats; undefined when it is gone or was never running. */
  async containerStats(docker: Docker, c: ListedContainer): Promise<ContainerStats | undefined> {
    const r = await this.sample(docker, c.Id);
    if (!r) return undefined;
    const labels = c.Labels ?? {};
    const { labels: l, annotations } = fromDockerLabels(labels);
    const out: ContainerStats = { attributes: { id: c.Id, metadata: containerMetadata(labels), labels: l, annotations } };
    if (r.s) {
      const { cpu, memory } = this.cpuAndMemory(`c/${c.Id}`, r.s.usage, r.s.timestampNs);
      out.cpu = cpu;
      out.memory = memory;
    }
    const fs = await this.writableLayer(c.Id, r.info.upperDir).catch(() => undefined);
    if (fs) out.writableLayer = fs;
    return out;
  }

  private cpuAndMemory(key: string, u: CgroupUsage, timestampNs: number): { cpu: NonNullable<ContainerStats['cpu']>; memory: MemoryUsage } {
    const rate = this.rates.record(key, { usageCoreNanoSeconds: u.usageCoreNanoSeconds, timestampNs });
    return {
      cpu: { timestamp: timestampNs, usageCoreNanoSeconds: { value: u.usageCoreNanoSeconds }, ...(rate !== undefined ? { usageNanoCores: { value: rate } } : {}) },
      memory: {
        timestamp: timestampNs,
        workingSetBytes: { value: u.workingSetBytes },
        usageBytes: { value: u.memoryUsageBytes },
        rssBytes: { value: u.rssBytes },
        pageFaults: { value: u.pageFaults },
        majorPageFaults: { value: u.majorPageFaults },
        ...(u.memoryLimitBytes !== undefined ? { availableBytes: { value: Math.max(0, u.memoryLimitBytes - u.workingSetBytes) } } : {}),
      },
    };
  }

  /**
   * One pod's stats: sandbox is its pause container, containers its running app containers.
   * CPU and memory are the sum over all of them; the network is the pause process's namespace.
   */
  async sandboxStats(docker: Docker, sandbox: ListedContainer, containers: readonly ListedContainer[]): Promise<PodSandboxStats> {
    const labels = sandbox.Labels ?? {};
    const { labels: l, annotations } = fromDockerLabels(labels);
    const out: PodSandboxStats = { attributes: { id: sandbox.Id, metadata: sandboxMetadata(labels), labels: l, annotations } };
    const [pause, apps] = await Promise.all([this.sample(docker, sandbox.Id), Promise.all(containers.map((c) => this.containerStats(docker, c)))]);
    const linux: NonNullable<PodSandboxStats['linux']> = { containers: apps.filter((x): x is ContainerStats => x !== undefined) };
    out.linux = linux;
    const timestampNs = this.nowMs() * 1e6;
    // Sum: the pause container's sample and each app container's (already read above).
    const members = new Map<string, number>();
    let ws = 0; let usage = 0; let rss = 0; let pf = 0; let majpf = 0; let procs = 0;
    let havePause = false;
    if (pause?.s) {
      havePause = true;
      const u = pause.s.usage;
      members.set(sandbox.Id, u.usageCoreNanoSeconds);
      ws += u.workingSetBytes; usage += u.memoryUsageBytes; rss += u.rssBytes; pf += u.pageFaults; majpf += u.majorPageFaults; procs += u.processCount ?? 0;
    }
    for (const c of linux.containers!) {
      if (!c.cpu?.usageCoreNanoSeconds || !c.memory) continue;
      members.set(c.attributes.id, c.cpu.usageCoreNanoSeconds.value);
      ws += c.memory.workingSetBytes?.value ?? 0; usage += c.memory.usageBytes?.value ?? 0; rss += c.memory.rssBytes?.value ?? 0;
      pf += c.memory.pageFaults?.value ?? 0; majpf += c.memory.majorPageFaults?.value ?? 0;
    }
    if (havePause || members.size) {
      let sum = this.podSums.get(sandbox.Id);
      if (!sum) { sum = new CumulativeSum(); this.podSums.set(sandbox.Id, sum); }
      const total = sum.update(members);
      const rate = this.rates.record(`p/${sandbox.Id}`, { usageCoreNanoSeconds: total, timestampNs });
      linux.cpu = { timestamp: timestampNs, usageCoreNanoSeconds: { value: total }, ...(rate !== undefined ? { usageNanoCores: { value: rate } } : {}) };
      linux.memory = { timestamp: timestampNs, workingSetBytes: { value: ws }, usageBytes: { value: usage }, rssBytes: { value: rss }, pageFaults: { value: pf }, majorPageFaults: { value: majpf } };
    }
    // Process count: every container's pids.current (app containers' from their cgroups too).
    if (pause?.s?.usage.processCount !== undefined) {
      const appProcs = await Promise.all(containers.map(async (c) => {
        const i = await this.infos.get(c.Id);
        if (!i?.dirs?.pids) return 0;
        return Number((await readFile(join(i.dirs.pids, 'pids.current'), 'utf8').catch(() => '0')).trim()) || 0;
      }));
      linux.process = { timestamp: timestampNs, processCount: { value: procs + appProcs.reduce((a, b) => a + b, 0) } };
    }
    const pid = pause?.info.pid;
    if (pid) {
      try {
        const interfaces = parseNetDev(await readFile(join(this.procRoot, String(pid), 'net', 'dev'), 'utf8'));
        const def = interfaces.find((i) => i.name === DEFAULT_INTERFACE);
        linux.network = { timestamp: timestampNs, interfaces, ...(def ? { defaultInterface: def } : {}) };
      } catch (err) {
        this.logger.debug({ err, sandbox: sandbox.Id }, 'Could not read pod sandbox network stats');
      }
    }
    return out;
  }

  /** Forgets everything about containers (and pods) not in live: called after each full list. */
  retain(live: ReadonlySet<string>): void {
    for (const id of this.infos.keys()) if (!live.has(id)) this.infos.delete(id);
    for (const id of this.fs.keys()) if (!live.has(id)) this.fs.delete(id);
    for (const id of this.podSums.keys()) if (!live.has(id)) this.podSums.delete(id);
    this.rates.retain(new Set([...live].flatMap((id) => [`c/${id}`, `p/${id}`])));
  }
}
