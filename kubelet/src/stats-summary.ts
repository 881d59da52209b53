/**
 * The Summary API (k8s.io/kubelet/pkg/apis/stats/v1alpha1), served at /stats/summary. The types
 * here are the wire shape with one difference kept internal: every `time`/`startTime` is carried
 * as milliseconds (`timeMs`, `startTimeMs`) so /metrics/resource can stamp samples with their
 * exact time; {@link summaryToJson} renames them to upstream's RFC 3339 strings (metav1.Time,
 * second precision). Optional fields are left out when unknown, as upstream's pointers are nil.
 */

export interface CpuStats { timeMs: number; usageNanoCores?: number; usageCoreNanoSeconds?: number }
export interface MemoryStats {
  timeMs: number;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}
export interface InterfaceStats { name: string; rxBytes?: number; rxErrors?: number; txBytes?: number; txErrors?: number }
/** The default interface's counters inline (upstream embeds InterfaceStats), then every interface. */
export interface NetworkStats extends Partial<InterfaceStats> { timeMs: number; interfaces?: InterfaceStats[] }
export interface FsStats {
  timeMs: number;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}
export interface ContainerStatsSummary {
  name: string;
  startTimeMs: number;
  cpu?: CpuStats;
  memory?: MemoryStats;
  rootfs?: FsStats;
  logs?: FsStats;
}
export interface PodReference { name: string; namespace: string; uid: string }
export interface PodStats {
  podRef: PodReference;
  startTimeMs: number;
  containers: ContainerStatsSummary[];
  cpu?: CpuStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  volume?: (FsStats & { name: string })[];
  'ephemeral-storage'?: FsStats;
  process_stats?: { process_count?: number };
}
export interface NodeStats {
  nodeName: string;
  systemContainers?: ContainerStatsSummary[];
  startTimeMs: number;
  cpu?: CpuStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  fs?: FsStats;
  runtime?: { imageFs?: FsStats; containerFs?: FsStats };
}
export interface Summary { node: NodeStats; pods: PodStats[] }

/** metav1.Time's wire form: RFC 3339 in whole seconds, UTC. */
export const metaTime = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** summaryToJson renders the wire form: `timeMs` → `time`, `startTimeMs` → `startTime` (RFC 3339), everything else as is. */
export function summaryToJson(s: Summary): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      if (k === 'timeMs') out['time'] = metaTime(x as number);
      else if (k === 'startTimeMs') out['startTime'] = metaTime(x as number);
      else out[k] = walk(x);
    }
    return out;
  };
  return walk(s);
}
