/**
 * The metrics storage (upstream pkg/storage): the last two points of every node and container,
 * and the usage computed between them. Not a time series: each `store(batch)` replaces what is
 * kept, so a node or pod missing from a round (scrape failed, pod gone) has no metrics until it is
 * read twice again.
 *
 * - CPU: (last.cumulative − prev.cumulative) / (last.timestamp − prev.timestamp), in nanocores
 *   (upstream resourceUsage); a decrease (counter reset) yields no usage for that point.
 * - Memory: the last working set, bytes.
 * - A fresh container (started less than one resolution ago, at least 10 s before its reading)
 *   gets its start as the previous point with zero CPU, so it shows at its first scrape.
 * - A restarted container (start after the stored point) has its previous point dropped.
 * - A pod is served only when every container has two points; its timestamp and window are
 *   those of its earliest container.
 *
 * Not safe for concurrent mutation (one scrape loop calls store; readers only read).
 */
import type { MetricsBatch, MetricsPoint, PodMetricsPoint } from './decode.js';

/** upstream freshContainerMinMetricsResolution */
export const FRESH_CONTAINER_MIN_RESOLUTION_MS = 10_000;

export interface Usage {
  /** nanocores */
  cpuNanoCores: number;
  memoryBytes: number;
}

export interface TimeInfo { timestampMs: number; windowMs: number }

export interface NodeUsage extends Usage, TimeInfo { name: string }
export interface ContainerUsage extends Usage { name: string }
export interface PodUsage extends TimeInfo { namespace: string; name: string; containers: ContainerUsage[] }

/** upstream resourceUsage; undefined for a decreasing counter or a non-positive window. */
export function resourceUsage(last: MetricsPoint, prev: MetricsPoint): (Usage & TimeInfo) | undefined {
  if (last.cumulativeCpuNs < prev.cumulativeCpuNs) return undefined;
  const windowMs = last.timestampMs - prev.timestampMs;
  if (windowMs <= 0) return undefined;
  return {
    cpuNanoCores: Math.trunc((last.cumulativeCpuNs - prev.cumulativeCpuNs) / (windowMs / 1000)),
    memoryBytes: last.memoryBytes,
    timestampMs: last.timestampMs,
    windowMs,
  };
}

export class MetricsStorage {
  private lastNodes = new Map<string, MetricsPoint>();
  private prevNodes = new Map<string, MetricsPoint>();
  private lastPods = new Map<string, PodMetricsPoint>();
  private prevPods = new Map<string, PodMetricsPoint>();

  constructor(private readonly resolutionMs: number) {}

  /** Replaces the stored points with batch (moving the current last ones to prev where they still apply). */
  store(batch: MetricsBatch): void {
    this.storeNodes(batch.nodes);
    this.storePods(batch.pods);
  }

  private storeNodes(nodes: ReadonlyMap<string, MetricsPoint>): void {
    const last = new Map<string, MetricsPoint>();
    const prev = new Map<string, MetricsPoint>();
    for (const [name, point] of nodes) {
      last.set(name, point);
      const was = this.lastNodes.get(name);
      if (!was) continue;
      if (point.timestampMs > was.timestampMs) prev.set(name, was);
      else {
        const p = this.prevNodes.get(name);
        if (p && p.timestampMs < point.timestampMs) prev.set(name, p);
      }
    }
    this.lastNodes = last;
    this.prevNodes = prev;
  }

  private storePods(pods: ReadonlyMap<string, PodMetricsPoint>): void {
    const last = new Map<string, PodMetricsPoint>();
    const prev = new Map<string, PodMetricsPoint>();
    for (const [key, pod] of pods) {
      const newLast: PodMetricsPoint = { containers: new Map() };
      const newPrev: PodMetricsPoint = { containers: new Map() };
      const wasLast = this.lastPods.get(key);
      const wasPrev = this.prevPods.get(key);
      for (const [name, point] of pod.containers) {
        newLast.containers.set(name, point);
        const age = point.timestampMs - point.startTimeMs;
        if (point.startTimeMs > 0 && point.startTimeMs < point.timestampMs && age < this.resolutionMs && age >= FRESH_CONTAINER_MIN_RESOLUTION_MS) {
          newPrev.containers.set(name, { ...point, timestampMs: point.startTimeMs, cumulativeCpuNs: 0 });
          continue;
        }
        const lc = wasLast?.containers.get(name);
        // Keep history only while the container has not restarted since the stored point.
        if (!lc || !(point.startTimeMs < lc.timestampMs)) continue;
        if (point.timestampMs > lc.timestampMs) newPrev.containers.set(name, lc);
        else {
          const pc = wasPrev?.containers.get(name);
          if (pc && pc.timestampMs < point.timestampMs) newPrev.containers.set(name, pc);
        }
      }
      if (newPrev.containers.size > 0) prev.set(key, newPrev);
      last.set(key, newLast);
    }
    this.lastPods = last;
    this.prevPods = prev;
  }

  /** Usage of the named node, when it has two points. */
  nodeUsage(name: string): NodeUsage | undefined {
    const last = this.lastNodes.get(name), prev = this.prevNodes.get(name);
    if (!last || !prev) return undefined;
    const u = resourceUsage(last, prev);
    return u ? { name, ...u } : undefined;
  }

  /** Usage of pod namespace/name, when every one of its containers has two points. */
  podUsage(namespace: string, name: string): PodUsage | undefined {
    const key = `${namespace}/${name}`;
    const last = this.lastPods.get(key), prev = this.prevPods.get(key);
    if (!last || !prev) return undefined;
    const containers: ContainerUsage[] = [];
    let earliest: TimeInfo | undefined;
    for (const [c, lp] of last.containers) {
      const pp = prev.containers.get(c);
      if (!pp) return undefined;
      const u = resourceUsage(lp, pp);
      if (!u) continue;
      containers.push({ name: c, cpuNanoCores: u.cpuNanoCores, memoryBytes: u.memoryBytes });
      if (!earliest || earliest.timestampMs > u.timestampMs) earliest = { timestampMs: u.timestampMs, windowMs: u.windowMs };
    }
    containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { namespace, name, containers, timestampMs: earliest?.timestampMs ?? 0, windowMs: earliest?.windowMs ?? 0 };
  }

  /** Upstream's readiness: the storage has served (at least one node with two points). */
  ready(): boolean { return this.prevNodes.size > 0 || this.prevPods.size > 0; }

  /** Points held (metrics_server_storage_points{type}). */
  points(): { node: number; container: number } {
    let container = 0;
    for (const p of this.prevPods.values()) container += p.containers.size;
    return { node: this.prevNodes.size, container };
  }
}
