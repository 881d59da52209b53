/**
 * StatsProvider builds the Summary (stats-summary.ts) for /stats/summary and /metrics/resource,
 * as upstream's CRI stats provider (pkg/kubelet/stats/cri_stats_provider.go): pods and their
 * containers from one CRI ListPodSandboxStats call (the shim reads the cgroups and computes each
 * rate), the node from its pods plus its own processes.
 *
 * What "node" means here. Upstream reports the node's root cgroup: everything on the machine,
 * pods and system daemons (kubelet, runtime) and the rest. In local mode a node is a network
 * namespace on a machine shared with the other nodes and the control plane, so the machine's root
 * cgroup would count every node's pods on every node. The node's figures are instead what that
 * root cgroup would hold if the node were a machine of its own: the sum of its pods (all their
 * containers, pause included) and of its own processes (those in its network namespace: kubelet,
 * CRI shim, kube-proxy), reported also as the system containers `pods`, `kubelet`, `runtime`,
 * `misc`. CPU is a monotonic sum (pods and processes that end keep their share) and its rate is
 * measured over the same ≥ 1 s window as the containers'. Memory is the pods' working sets plus
 * the processes' RSS. Network is the node namespace's interfaces (what the machine's would be);
 * fs is the filesystem under the kubelet's root dir; runtime.imageFs the runtime's image store.
 */
import { statfs } from 'node:fs/promises';
import { readFile } from 'node:fs/promises';
import { totalmem } from 'node:os';
import type { Pod } from '@mk8s/api';
import { CpuRateCache, CumulativeSum, type ContainerStats, type FilesystemUsage, type ImageService, type NetworkUsage, type PodSandboxStats, type RuntimeService } from '@mk8s/proto';
import type { Clock } from '@mk8s/component-base';
import type { ContainerStatsSummary, CpuStats, FsStats, InterfaceStats, MemoryStats, NetworkStats, PodStats, Summary } from './stats-summary.js';
import { NodeProcesses, type ProcessSample, type SystemContainerName } from './node-processes.js';
import { VolumeStats, type VolumeUsage } from './volume-stats.js';

const nsToMs = (ns: number) => Math.floor(ns / 1e6);

/** Interfaces cadvisor leaves out of a machine's network stats. */
const IGNORED_INTERFACE = /^(lo|veth|docker|cni)/;

function cpuOf(c: ContainerStats['cpu'] | undefined, fallbackMs: number): CpuStats | undefined {
  if (!c) return undefined;
  return {
    timeMs: c.timestamp ? nsToMs(c.timestamp) : fallbackMs,
    ...(c.usageNanoCores ? { usageNanoCores: c.usageNanoCores.value } : {}),
    ...(c.usageCoreNanoSeconds ? { usageCoreNanoSeconds: c.usageCoreNanoSeconds.value } : {}),
  };
}

function memoryOf(m: ContainerStats['memory'] | undefined, fallbackMs: number): MemoryStats | undefined {
  if (!m) return undefined;
  const out: MemoryStats = { timeMs: m.timestamp ? nsToMs(m.timestamp) : fallbackMs };
  if (m.availableBytes) out.availableBytes = m.availableBytes.value;
  if (m.usageBytes) out.usageBytes = m.usageBytes.value;
  if (m.workingSetBytes) out.workingSetBytes = m.workingSetBytes.value;
  if (m.rssBytes) out.rssBytes = m.rssBytes.value;
  if (m.pageFaults) out.pageFaults = m.pageFaults.value;
  if (m.majorPageFaults) out.majorPageFaults = m.majorPageFaults.value;
  return out;
}

function networkOf(n: NetworkUsage | undefined, fallbackMs: number): NetworkStats | undefined {
  if (!n) return undefined;
  const iface = (i: NonNullable<NetworkUsage['defaultInterface']>): InterfaceStats => ({
    name: i.name,
    ...(i.rxBytes ? { rxBytes: i.rxBytes.value } : {}), ...(i.rxErrors ? { rxErrors: i.rxErrors.value } : {}),
    ...(i.txBytes ? { txBytes: i.txBytes.value } : {}), ...(i.txErrors ? { txErrors: i.txErrors.value } : {}),
  });
  return { timeMs: n.timestamp ? nsToMs(n.timestamp) : fallbackMs, ...(n.defaultInterface ? iface(n.defaultInterface) : {}), interfaces: (n.interfaces ?? []).map(iface) };
}

/** A filesystem's size as statfs tells it (capacity, available, inodes), without usage. */
export interface FsCapacity { capacityBytes: number; availableBytes: number; usedBytes: number; inodes: number; inodesFree: number }

function fsOf(u: FilesystemUsage | undefined, cap: FsCapacity | undefined, fallbackMs: number): FsStats | undefined {
  if (!u) return undefined;
  return {
    timeMs: u.timestamp ? nsToMs(u.timestamp) : fallbackMs,
    ...(cap ? { availableBytes: cap.availableBytes, capacityBytes: cap.capacityBytes, inodesFree: cap.inodesFree, inodes: cap.inodes } : {}),
    ...(u.usedBytes ? { usedBytes: u.usedBytes.value } : {}),
    ...(u.inodesUsed ? { inodesUsed: u.inodesUsed.value } : {}),
  };
}

/** The filesystems' sizes and the volumes' usage a Summary's pods are built with. */
export interface PodFsInput {
  /** Where writable layers live (a container's rootfs capacity). */
  imageFs?: FsCapacity | undefined;
  /** The kubelet's root dir filesystem (volumes' and ephemeral storage's capacity). */
  rootFs?: FsCapacity | undefined;
  /** Volume usage by pod uid. */
  volumes?: ReadonlyMap<string, readonly VolumeUsage[]>;
}

/** When a container of the pod started, from the pod's status (the kubelet's own record of CRI's startedAt). */
function containerStartMs(pod: Pod | undefined, name: string): number | undefined {
  const st = [...(pod?.status?.containerStatuses ?? []), ...(pod?.status?.initContainerStatuses ?? [])].find((s) => s.name === name);
  const t = st?.state?.running?.startedAt;
  return t ? Date.parse(t) : undefined;
}

/**
 * podStatsFromCri turns CRI sandbox stats into the Summary's pods (pure): one entry per pod uid
 * (the newest sandbox when several are listed), containers by name, the pod's cpu, memory,
 * network and process count as the runtime summed them, its kubelet-managed volumes, ephemeral
 * storage as upstream sums it (containers' writable layers + those volumes, on the node's root fs).
 */
export function podStatsFromCri(sandboxes: readonly PodSandboxStats[], pods: readonly Pod[], nowMs: number, fs: PodFsInput = {}, onlyCpuAndMemory = false): PodStats[] {
  const { imageFs, rootFs } = fs;
  const byUid = new Map(pods.map((p) => [p.metadata?.uid ?? '', p]));
  const chosen = new Map<string, PodSandboxStats>();
  for (const s of sandboxes) {
    const uid = s.attributes.metadata.uid;
    const prev = chosen.get(uid);
    if (!prev || s.attributes.metadata.attempt > prev.attributes.metadata.attempt) chosen.set(uid, s);
  }
  const out: PodStats[] = [];
  for (const [uid, s] of chosen) {
    const pod = byUid.get(uid);
    const l = s.linux;
    const podStart = pod?.status?.startTime ? Date.parse(pod.status.startTime) : nowMs;
    const containers: ContainerStatsSummary[] = (l?.containers ?? []).map((c) => {
      const cs: ContainerStatsSummary = { name: c.attributes.metadata.name, startTimeMs: containerStartMs(pod, c.attributes.metadata.name) ?? podStart };
      const cpu = cpuOf(c.cpu, nowMs); if (cpu) cs.cpu = cpu;
      const memory = memoryOf(c.memory, nowMs); if (memory) cs.memory = memory;
      if (!onlyCpuAndMemory) { const rootfs = fsOf(c.writableLayer, imageFs, nowMs); if (rootfs) cs.rootfs = rootfs; }
      return cs;
    }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const ps: PodStats = {
      podRef: { name: s.attributes.metadata.name, namespace: s.attributes.metadata.namespace, uid },
      startTimeMs: podStart, containers,
    };
    const cpu = cpuOf(l?.cpu, nowMs); if (cpu) ps.cpu = cpu;
    const memory = memoryOf(l?.memory, nowMs); if (memory) ps.memory = memory;
    if (!onlyCpuAndMemory) {
      const network = networkOf(l?.network, nowMs); if (network) ps.network = network;
      const cap = (c: FsCapacity | undefined) => (c ? { availableBytes: c.availableBytes, capacityBytes: c.capacityBytes, inodesFree: c.inodesFree, inodes: c.inodes } : {});
      const vols = fs.volumes?.get(uid) ?? [];
      if (vols.length) ps.volume = vols.map((v) => ({ timeMs: v.timeMs, ...cap(rootFs), usedBytes: v.usedBytes, inodesUsed: v.inodesUsed, name: v.name }));
      const rootfs = containers.map((c) => c.rootfs).filter((f): f is FsStats => f !== undefined);
      if (rootfs.length || vols.length) {
        ps['ephemeral-storage'] = {
          timeMs: Math.max(...rootfs.map((f) => f.timeMs), ...vols.map((v) => v.timeMs)),
          ...cap(rootFs),
          usedBytes: rootfs.reduce((a, f) => a + (f.usedBytes ?? 0), 0) + vols.reduce((a, v) => a + v.usedBytes, 0),
          inodesUsed: rootfs.reduce((a, f) => a + (f.inodesUsed ?? 0), 0) + vols.reduce((a, v) => a + v.inodesUsed, 0),
        };
      }
      if (l?.process?.processCount) ps.process_stats = { process_count: l.process.processCount.value };
    }
    out.push(ps);
  }
  return out.sort((a, b) => (`${a.podRef.namespace}/${a.podRef.name}` < `${b.podRef.namespace}/${b.podRef.name}` ? -1 : 1));
}

export interface StatsProviderOptions {
  nodeName: string;
  runtime: Pick<RuntimeService, 'listPodSandboxStats'>;
  images?: Pick<ImageService, 'imageFsInfo'>;
  /** The pods bound to this node (start times). */
  pods: () => Pod[];
  /** The kubelet's root dir: node.fs is its filesystem. */
  rootDir: string;
  clock: Clock;
  /** The node's processes. @default a NodeProcesses on /proc */
  processes?: Pick<NodeProcesses, 'sample'>;
  /** The node namespace's /proc/net/dev. @default /proc/self/net/dev (the kubelet runs in the node's namespace) */
  readNetDev?: () => Promise<string>;
  /** statfs of a path. @default node:fs statfs */
  statFs?: (path: string) => Promise<FsCapacity | undefined>;
  /** When the node started (Summary node.startTime). @default the kubelet's start */
  nodeStartTimeMs?: number;
  /** The pods' volume usage. @default a VolumeStats on rootDir (du, cached 1 min) */
  volumes?: Pick<VolumeStats, 'podVolumes' | 'retain'>;
  /** The node's memory capacity (node.memory.availableBytes = capacity − working set). @default os.totalmem(), the capacity the node reports */
  memoryCapacityBytes?: number;
}

const defaultStatFs = async (path: string): Promise<FsCapacity | undefined> => {
  try {
    const s = await statfs(path);
    return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, usedBytes: (s.blocks - s.bfree) * s.bsize, inodes: s.files, inodesFree: s.ffree };
  } catch { return undefined; }
};

/** parseNetDevStats reads /proc/net/dev into Summary interfaces (machine view: lo, veth*, docker*, cni* left out). */
export function parseNetDevStats(text: string): InterfaceStats[] {
  const out: InterfaceStats[] = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (!name || name.includes('|') || IGNORED_INTERFACE.test(name) || f.length < 16 || f.some((n) => !Number.isFinite(n))) continue;
    out.push({ name, rxBytes: f[0]!, rxErrors: f[2]!, txBytes: f[8]!, txErrors: f[10]! });
  }
  return out;
}

export class StatsProvider {
  private readonly o: StatsProviderOptions;
  private readonly processes: Pick<NodeProcesses, 'sample'>;
  private readonly rates = new CpuRateCache();
  private readonly sums = new Map<string, CumulativeSum>();
  private readonly startMs: number;
  private readonly volumes: Pick<VolumeStats, 'podVolumes' | 'retain'>;

  constructor(o: StatsProviderOptions) {
    this.o = o;
    this.volumes = o.volumes ?? new VolumeStats({ rootDir: o.rootDir, nowMs: () => o.clock.now() });
    this.processes = o.processes ?? new NodeProcesses({ nowMs: () => o.clock.now() });
    this.startMs = o.nodeStartTimeMs ?? o.clock.now();
  }

  /** A monotonic total of members under name, and its rate. */
  private cpuTotal(name: string, members: Map<string, number>, nowMs: number): CpuStats {
    let s = this.sums.get(name);
    if (!s) { s = new CumulativeSum(); this.sums.set(name, s); }
    const total = s.update(members);
    const rate = this.rates.record(name, { usageCoreNanoSeconds: total, timestampNs: nowMs * 1e6 });
    return { timeMs: nowMs, usageCoreNanoSeconds: total, ...(rate !== undefined ? { usageNanoCores: rate } : {}) };
  }

  /**
   * One Summary. With onlyCpuAndMemory (upstream's `only_cpu_and_memory=true`, and what
   * /metrics/resource reads) the filesystems and networks are not read. Rejects when the
   * runtime cannot be listed (the endpoints answer 500 / scrape_error 1); node-local reads that
   * fail only leave their part out. Safe to call concurrently.
   */
  async summary(opts: { onlyCpuAndMemory?: boolean } = {}): Promise<Summary> {
    const only = opts.onlyCpuAndMemory ?? false;
    const [sandboxes, procs, imageFsInfo, netDev, rootFs] = await Promise.all([
      this.o.runtime.listPodSandboxStats(),
      this.processes.sample().catch(() => [] as ProcessSample[]),
      only || !this.o.images ? undefined : this.o.images.imageFsInfo().catch(() => undefined),
      only ? undefined : (this.o.readNetDev ?? (() => readFile('/proc/self/net/dev', 'utf8')))().catch(() => undefined),
      only ? undefined : (this.o.statFs ?? defaultStatFs)(this.o.rootDir),
    ]);
    const nowMs = this.o.clock.now();
    const imageUsage = imageFsInfo?.imageFilesystems[0];
    const imageCap = imageUsage?.fsId?.mountpoint ? await (this.o.statFs ?? defaultStatFs)(imageUsage.fsId.mountpoint) : undefined;
    const podObjects = this.o.pods();
    let volumes: Map<string, VolumeUsage[]> | undefined;
    if (!only) {
      this.volumes.retain(new Set(podObjects.map((p) => p.metadata?.uid ?? '')));
      volumes = new Map(await Promise.all(podObjects.map(async (p) => [p.metadata?.uid ?? '', await this.volumes.podVolumes(p).catch(() => [])] as [string, VolumeUsage[]])));
    }
    const pods = podStatsFromCri(sandboxes, podObjects, nowMs, { imageFs: imageCap, rootFs, ...(volumes ? { volumes } : {}) }, only);

    // Node = pods + node processes; system containers per role.
    const podMembers = new Map<string, number>();
    let podsWs = 0; let podsUsage = 0; let podsRss = 0;
    for (const s of sandboxes) {
      const cpu = s.linux?.cpu?.usageCoreNanoSeconds?.value;
      if (cpu !== undefined) podMembers.set(`pod/${s.attributes.id}`, cpu);
      podsWs += s.linux?.memory?.workingSetBytes?.value ?? 0;
      podsUsage += s.linux?.memory?.usageBytes?.value ?? 0;
      podsRss += s.linux?.memory?.rssBytes?.value ?? 0;
    }
    const roles: SystemContainerName[] = ['kubelet', 'runtime', 'misc'];
    const systemContainers: ContainerStatsSummary[] = [];
    const nodeMembers = new Map(podMembers);
    let procRss = 0;
    for (const role of roles) {
      const mine = procs.filter((p) => p.role === role);
      const members = new Map(mine.map((p) => [p.key, p.cpuNs]));
      for (const [k, v] of members) nodeMembers.set(`proc/${k}`, v);
      const rss = mine.reduce((a, p) => a + p.rssBytes, 0);
      procRss += rss;
      if (!mine.length && role !== 'kubelet') continue;
      systemContainers.push({
        name: role, startTimeMs: mine.length ? Math.min(...mine.map((p) => p.startTimeMs)) : this.startMs,
        cpu: this.cpuTotal(`sys/${role}`, members, nowMs),
        memory: { timeMs: nowMs, usageBytes: rss, workingSetBytes: rss, rssBytes: rss },
      });
    }
    systemContainers.push({
      name: 'pods', startTimeMs: this.startMs,
      cpu: this.cpuTotal('sys/pods', podMembers, nowMs),
      memory: { timeMs: nowMs, usageBytes: podsUsage, workingSetBytes: podsWs, rssBytes: podsRss },
    });
    const summary: Summary = {
      node: {
        nodeName: this.o.nodeName,
        systemContainers,
        startTimeMs: this.startMs,
        cpu: this.cpuTotal('node', nodeMembers, nowMs),
        memory: {
          timeMs: nowMs, availableBytes: Math.max(0, (this.o.memoryCapacityBytes ?? totalmem()) - podsWs - procRss),
          usageBytes: podsUsage + procRss, workingSetBytes: podsWs + procRss, rssBytes: podsRss + procRss,
        },
      },
      pods,
    };
    if (!only) {
      if (netDev !== undefined) {
        const interfaces = parseNetDevStats(netDev);
        const def = interfaces.find((i) => i.name === 'eth0') ?? interfaces[0];
        summary.node.network = { timeMs: nowMs, ...(def ?? {}), interfaces };
      }
      if (rootFs) summary.node.fs = { timeMs: nowMs, ...rootFs };
      if (imageUsage) {
        summary.node.runtime = {
          imageFs: {
            timeMs: nowMs,
            ...(imageCap ? { availableBytes: imageCap.availableBytes, capacityBytes: imageCap.capacityBytes, inodesFree: imageCap.inodesFree, inodes: imageCap.inodes } : {}),
            ...(imageUsage.usedBytes ? { usedBytes: imageUsage.usedBytes.value } : {}),
            ...(imageUsage.inodesUsed ? { inodesUsed: imageUsage.inodesUsed.value } : {}),
          },
        };
      }
    }
    // The sums forget members that are gone on each update; the rate caches hold only the fixed names above.
    return summary;
  }
}
