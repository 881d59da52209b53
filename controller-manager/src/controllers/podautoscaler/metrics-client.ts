/**
 * Where the HPA reads metrics (upstream pkg/controller/podautoscaler/metrics): resource metrics
 * from metrics.k8s.io/v1beta1 PodMetrics through the apiserver (served by metrics-server over the
 * aggregation layer), and custom/external metrics from custom.metrics.k8s.io/v1beta2 and
 * external.metrics.k8s.io/v1beta1 when an adapter serves them (none ships here: those reads fail
 * and the HPA reports FailedGetPodsMetric / FailedGetObjectMetric / FailedGetExternalMetric).
 * Values are in milli-units, as upstream's MilliValue().
 */
import { parseQuantityExact, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { Clientset, RawGetter } from '@mk8s/client';

/** One pod's sample: the value (milli-units), when it was taken and over which window. */
export interface PodMetric { value: number; timestampMs: number; windowMs: number }
/** Pod name → sample. */
export type PodMetricsInfo = Map<string, PodMetric>;

/**
 * The metrics the HPA reads. Every method rejects with an Error whose message upstream's wording
 * carries into the HPA's events and conditions. Safe to call concurrently.
 */
export interface MetricsClient {
  /** Sum over containers (or the one `container`) of each pod's usage of resource, for pods matching selector. */
  getResourceMetric(resource: string, namespace: string, selector: string, container: string, signal?: AbortSignal): Promise<{ metrics: PodMetricsInfo; timestampMs: number }>;
  /** A per-pod custom metric (Pods source). */
  getRawMetric(metricName: string, namespace: string, selector: string, metricSelector: string, signal?: AbortSignal): Promise<{ metrics: PodMetricsInfo; timestampMs: number }>;
  /** A metric describing one object (Object source). */
  getObjectMetric(metricName: string, namespace: string, object: { apiVersion?: string; kind: string; name: string }, metricSelector: string, signal?: AbortSignal): Promise<{ value: number; timestampMs: number }>;
  /** An external metric's values (External source). */
  getExternalMetric(metricName: string, namespace: string, metricSelector: string, signal?: AbortSignal): Promise<{ values: number[]; timestampMs: number }>;
}

/** metrics.k8s.io/v1beta1 PodMetrics (list-only for the HPA). */
export const PodMetricses: ResourceDescriptor = {
  group: 'metrics.k8s.io', version: 'v1beta1', kind: 'PodMetrics', listKind: 'PodMetricsList', resource: 'pods', singular: 'pod',
  namespaced: true, shortNames: [], categories: [], verbs: ['get', 'list'], subresources: [],
};

/** Quantity.MilliValue(): rounded up, as upstream. */
export function milliValue(q: unknown): number {
  const { num, den } = parseQuantityExact(q as string);
  const n = num * 1000n;
  return Number(n / den + (n % den > 0n ? 1n : 0n));
}

/** Go durations as metrics-server writes them ("15s", "1m0.5s"). */
function windowMs(s: unknown): number {
  if (typeof s !== 'string') return 0;
  let ms = 0;
  for (const m of s.matchAll(/([\d.]+)(ms|h|m|s)/g)) ms += Number(m[1]) * ({ h: 3_600_000, m: 60_000, s: 1000, ms: 1 }[m[2] as 'h'] ?? 0);
  return ms;
}

interface PodMetricsObj extends KubeObject { timestamp?: string; window?: string; containers?: { name: string; usage?: Record<string, string> }[] }

/** getPodMetrics / getContainerMetrics (pure): pods with a container lacking the resource are left out. */
export function podMetricsInfo(items: readonly PodMetricsObj[], resource: string, container: string): PodMetricsInfo {
  const out: PodMetricsInfo = new Map();
  for (const m of items) {
    const timestampMs = Date.parse(m.timestamp ?? '') || 0;
    const window = windowMs(m.window);
    const cs = m.containers ?? [];
    if (container) {
      const c = cs.find((x) => x.name === container);
      if (!c) throw new Error(`container ${container} not present in metrics for pod ${m.metadata.namespace}/${m.metadata.name}`);
      const v = c.usage?.[resource];
      if (v !== undefined) out.set(m.metadata.name, { value: milliValue(v), timestampMs, windowMs: window });
      continue;
    }
    let sum = 0;
    let missing = cs.length === 0;
    for (const c of cs) {
      const v = c.usage?.[resource];
      if (v === undefined) { missing = true; break; }
      sum += milliValue(v);
    }
    if (!missing) out.set(m.metadata.name, { value: sum, timestampMs, windowMs: window });
  }
  return out;
}

const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The REST metrics client: PodMetrics through the clientset, custom/external metrics by raw GET. */
export class RestMetricsClient implements MetricsClient {
  constructor(private readonly client: Clientset & Partial<RawGetter>) {}

  async getResourceMetric(resource: string, namespace: string, selector: string, container: string, signal?: AbortSignal): Promise<{ metrics: PodMetricsInfo; timestampMs: number }> {
    let items: PodMetricsObj[];
    try {
      items = (await this.client.resource<PodMetricsObj>(PodMetricses, namespace).list({ labelSelector: selector, ...(signal ? { signal } : {}) })).items;
    } catch (err) {
      throw new Error(`unable to fetch metrics from resource metrics API: ${errText(err)}`);
    }
    if (items.length === 0) throw new Error('no metrics returned from resource metrics API');
    let metrics: PodMetricsInfo;
    try { metrics = podMetricsInfo(items, resource, container); } catch (err) { throw new Error(`failed to get container metrics: ${errText(err)}`); }
    return { metrics, timestampMs: Date.parse(items[0]!.timestamp ?? '') || 0 };
  }

  private async raw(path: string, signal?: AbortSignal): Promise<{ items?: { describedObject?: { name?: string }; value?: string; timestamp?: string; windowSeconds?: number }[] }> {
    if (!this.client.getRaw) throw new Error('the client cannot read raw paths');
    return JSON.parse(await this.client.getRaw(path, signal ? { signal } : {})) as never;
  }

  async getRawMetric(metricName: string, namespace: string, selector: string, metricSelector: string, signal?: AbortSignal): Promise<{ metrics: PodMetricsInfo; timestampMs: number }> {
    const q = new URLSearchParams({ labelSelector: selector, ...(metricSelector ? { metricLabelSelector: metricSelector } : {}) });
    let list;
    try {
      list = await this.raw(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${encodeURIComponent(namespace)}/pods/*/${encodeURIComponent(metricName)}?${q}`, signal);
    } catch (err) {
      throw new Error(`unable to fetch metrics from custom metrics API: ${errText(err)}`);
    }
    const items = list.items ?? [];
    if (items.length === 0) throw new Error('no metrics returned from custom metrics API');
    const metrics: PodMetricsInfo = new Map();
    for (const it of items) metrics.set(it.describedObject?.name ?? '', { value: milliValue(it.value ?? '0'), timestampMs: Date.parse(it.timestamp ?? '') || 0, windowMs: (it.windowSeconds ?? 0) * 1000 });
    return { metrics, timestampMs: Date.parse(items[0]!.timestamp ?? '') || 0 };
  }

  async getObjectMetric(metricName: string, namespace: string, object: { apiVersion?: string; kind: string; name: string }, metricSelector: string, signal?: AbortSignal): Promise<{ value: number; timestampMs: number }> {
    const resource = `${object.kind.toLowerCase()}s`;
    const q = metricSelector ? `?${new URLSearchParams({ metricLabelSelector: metricSelector })}` : '';
    let list;
    try {
      list = await this.raw(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${encodeURIComponent(namespace)}/${resource}/${encodeURIComponent(object.name)}/${encodeURIComponent(metricName)}${q}`, signal);
    } catch (err) {
      throw new Error(`unable to fetch metrics from custom metrics API: ${errText(err)}`);
    }
    const it = list.items?.[0];
    if (!it) throw new Error('no metrics returned from custom metrics API');
    return { value: milliValue(it.value ?? '0'), timestampMs: Date.parse(it.timestamp ?? '') || 0 };
  }

  async getExternalMetric(metricName: string, namespace: string, metricSelector: string, signal?: AbortSignal): Promise<{ values: number[]; timestampMs: number }> {
    const q = metricSelector ? `?${new URLSearchParams({ labelSelector: metricSelector })}` : '';
    let list;
    try {
      list = await this.raw(`/apis/external.metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(namespace)}/${encodeURIComponent(metricName)}${q}`, signal);
    } catch (err) {
      throw new Error(`unable to fetch metrics from external metrics API: ${errText(err)}`);
    }
    const items = list.items ?? [];
    if (items.length === 0) throw new Error('no metrics returned from external metrics API');
    return { values: items.map((i) => milliValue(i.value ?? '0')), timestampMs: Date.parse(items[0]!.timestamp ?? '') || 0 };
  }
}

/** A MetricsClient over fixed answers (tests, benchmarks): set fields, or leave unset to fail as the real one does. */
export class FakeMetricsClient implements MetricsClient {
  /** resource → pod → sample. */
  resources = new Map<string, PodMetricsInfo>();
  /** metric name → pod → sample. */
  pods = new Map<string, PodMetricsInfo>();
  objects = new Map<string, number>();
  timestampMs = 0;
  /** Set to make every call reject with it. */
  error: Error | undefined;
  calls = 0;

  async getResourceMetric(resource: string): Promise<{ metrics: PodMetricsInfo; timestampMs: number }> {
    this.calls++;
    if (this.error) throw new Error(`unable to fetch metrics from resource metrics API: ${this.error.message}`);
    const m = this.resources.get(resource);
    if (!m || m.size === 0) throw new Error('no metrics returned from resource metrics API');
    return { metrics: new Map(m), timestampMs: this.timestampMs };
  }

  async getRawMetric(metricName: string): Promise<{ metrics: PodMetricsInfo; timestampMs: number }> {
    this.calls++;
    const m = this.pods.get(metricName);
    if (!m) throw new Error('unable to fetch metrics from custom metrics API: the server could not find the requested resource');
    return { metrics: new Map(m), timestampMs: this.timestampMs };
  }

  async getObjectMetric(metricName: string): Promise<{ value: number; timestampMs: number }> {
    this.calls++;
    const v = this.objects.get(metricName);
    if (v === undefined) throw new Error('unable to fetch metrics from custom metrics API: the server could not find the requested resource');
    return { value: v, timestampMs: this.timestampMs };
  }

  async getExternalMetric(): Promise<{ values: number[]; timestampMs: number }> {
    this.calls++;
    throw new Error('unable to fetch metrics from external metrics API: the server could not find the requested resource');
  }
}
