/**
 * Fakes for metrics-server tests and benches: kubelet `/metrics/resource` text as the kubelet
 * writes it (HELP/TYPE lines, timestamps in ms), and a KubeletClient answering from a map.
 */
import type { KubeletClient, KubeletTarget } from '../scraper.js';

export interface FakeContainer { namespace: string; pod: string; container: string; cpuSeconds: number; memoryBytes: number; startTimeSeconds?: number }
export interface FakeNodeStats { cpuSeconds: number; memoryBytes: number; timestampMs: number; containers: readonly FakeContainer[] }

/** The kubelet's /metrics/resource text for one node (upstream resource metrics collector shape). */
export function kubeletResourceMetrics(s: FakeNodeStats): string {
  const ts = s.timestampMs;
  const l = (c: FakeContainer) => `{container="${c.container}",namespace="${c.namespace}",pod="${c.pod}"}`;
  const out: string[] = [];
  out.push('# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds');
  out.push('# TYPE container_cpu_usage_seconds_total counter');
  for (const c of s.containers) out.push(`container_cpu_usage_seconds_total${l(c)} ${c.cpuSeconds} ${ts}`);
  out.push('# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes');
  out.push('# TYPE container_memory_working_set_bytes gauge');
  for (const c of s.containers) out.push(`container_memory_working_set_bytes${l(c)} ${c.memoryBytes} ${ts}`);
  out.push('# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds');
  out.push('# TYPE container_start_time_seconds gauge');
  for (const c of s.containers) if (c.startTimeSeconds !== undefined) out.push(`container_start_time_seconds${l(c)} ${c.startTimeSeconds} ${ts}`);
  out.push('# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds');
  out.push('# TYPE node_cpu_usage_seconds_total counter');
  out.push(`node_cpu_usage_seconds_total ${s.cpuSeconds} ${ts}`);
  out.push('# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes');
  out.push('# TYPE node_memory_working_set_bytes gauge');
  out.push(`node_memory_working_set_bytes ${s.memoryBytes} ${ts}`);
  const pods = new Map<string, FakeContainer[]>();
  for (const c of s.containers) pods.set(`${c.namespace}/${c.pod}`, [...(pods.get(`${c.namespace}/${c.pod}`) ?? []), c]);
  out.push('# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds');
  out.push('# TYPE pod_cpu_usage_seconds_total counter');
  for (const cs of pods.values()) out.push(`pod_cpu_usage_seconds_total{namespace="${cs[0]!.namespace}",pod="${cs[0]!.pod}"} ${cs.reduce((a, c) => a + c.cpuSeconds, 0)} ${ts}`);
  out.push('# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise');
  out.push('# TYPE resource_scrape_error gauge');
  out.push('resource_scrape_error 0');
  return `${out.join('\n')}\n`;
}

/** A KubeletClient answering from `texts` by node name; a missing node or an Error value rejects. */
export class FakeKubeletClient implements KubeletClient {
  readonly texts = new Map<string, string | Error>();
  readonly calls: KubeletTarget[] = [];
  getResourceMetrics(t: KubeletTarget): Promise<string> {
    this.calls.push(t);
    const v = this.texts.get(t.node);
    if (v === undefined) return Promise.reject(new Error(`dial tcp ${t.address}:${t.port}: connect: connection refused`));
    return v instanceof Error ? Promise.reject(v) : Promise.resolve(v);
  }
}
