/**
 * decodeBatch: one kubelet's `/metrics/resource` text → a MetricsBatch (upstream
 * pkg/scraper/client/resource/decode.go). Read series: `node_cpu_usage_seconds_total`,
 * `node_memory_working_set_bytes`, `container_cpu_usage_seconds_total{container,namespace,pod}`,
 * `container_memory_working_set_bytes{...}`, `container_start_time_seconds{...}`; every other
 * series (pod_*, scrape_error, resource_scrape_error, ...) is skipped. A sample without a
 * timestamp takes `defaultTimeMs` (the scrape's time). A node or container point missing its CPU
 * or memory (or with either at zero: the kubelet had no reading yet) is dropped, as upstream.
 */
import { parsePromText } from './prom-text.js';

/** One reading (upstream storage.MetricsPoint). */
export interface MetricsPoint {
  /** Container start (ms since the epoch), when the kubelet reports it; 0 when unknown. */
  startTimeMs: number;
  /** When the reading was taken (ms since the epoch). */
  timestampMs: number;
  /** Cumulative CPU time, nanoseconds. */
  cumulativeCpuNs: number;
  /** Memory working set, bytes. */
  memoryBytes: number;
}

export interface PodMetricsPoint { containers: Map<string, MetricsPoint> }

/** Everything one scrape round read (upstream storage.MetricsBatch); pods keyed "namespace/name". */
export interface MetricsBatch {
  nodes: Map<string, MetricsPoint>;
  pods: Map<string, PodMetricsPoint>;
}

export const emptyBatch = (): MetricsBatch => ({ nodes: new Map(), pods: new Map() });

interface Partial { startTimeMs: number; timestampMs: number; cpu?: number; mem?: number }

const newPartial = (): Partial => ({ startTimeMs: 0, timestampMs: 0 });

/** Decodes text scraped from nodeName at defaultTimeMs. @throws PromParseError on malformed text */
export function decodeBatch(text: string, defaultTimeMs: number, nodeName: string): MetricsBatch {
  const node = newPartial();
  const containers = new Map<string, Map<string, Partial>>();
  const container = (labels: Record<string, string>): Partial | undefined => {
    const ns = labels['namespace'], pod = labels['pod'], name = labels['container'];
    if (!ns || !pod || !name) return undefined;
    const key = `${ns}/${pod}`;
    let cs = containers.get(key);
    if (!cs) { cs = new Map(); containers.set(key, cs); }
    let c = cs.get(name);
    if (!c) { c = newPartial(); cs.set(name, c); }
    return c;
  };
  parsePromText(text, (s) => {
    const ts = s.timestampMs ?? defaultTimeMs;
    switch (s.name) {
      case 'node_cpu_usage_seconds_total': node.cpu = Math.round(s.value * 1e9); node.timestampMs = ts; break;
      case 'node_memory_working_set_bytes': node.mem = s.value; if (!node.timestampMs) node.timestampMs = ts; break;
      case 'container_cpu_usage_seconds_total': { const c = container(s.labels); if (c) { c.cpu = Math.round(s.value * 1e9); c.timestampMs = ts; } break; }
      case 'container_memory_working_set_bytes': { const c = container(s.labels); if (c) { c.mem = s.value; if (!c.timestampMs) c.timestampMs = ts; } break; }
      case 'container_start_time_seconds': { const c = container(s.labels); if (c) c.startTimeMs = Math.round(s.value * 1000); break; }
    }
  });
  const out = emptyBatch();
  const complete = (p: Partial): MetricsPoint | undefined =>
    p.cpu && p.mem && Number.isFinite(p.cpu) && Number.isFinite(p.mem) && p.timestampMs
      ? { startTimeMs: p.startTimeMs, timestampMs: p.timestampMs, cumulativeCpuNs: p.cpu, memoryBytes: p.mem } : undefined;
  const np = complete(node);
  if (np) out.nodes.set(nodeName, np);
  for (const [key, cs] of containers) {
    const pm: PodMetricsPoint = { containers: new Map() };
    for (const [name, c] of cs) { const p = complete(c); if (p) pm.containers.set(name, p); }
    if (pm.containers.size > 0) out.pods.set(key, pm);
  }
  return out;
}

/** Merges per-node batches into one (a pod is on one node; a duplicate keeps the first, as upstream logs and skips). */
export function mergeBatches(batches: readonly MetricsBatch[]): MetricsBatch {
  const out = emptyBatch();
  for (const b of batches) {
    for (const [k, v] of b.nodes) if (!out.nodes.has(k)) out.nodes.set(k, v);
    for (const [k, v] of b.pods) if (!out.pods.has(k)) out.pods.set(k, v);
  }
  return out;
}
