/**
 * The `metrics.k8s.io/v1beta1` API, as pure functions (upstream pkg/api): routing of a path,
 * its authorization attributes, and the response (discovery documents, NodeMetrics, PodMetrics,
 * their lists, Status errors). Objects are built from the storage and the node/pod listers:
 * metadata.labels are the node's / pod's, as upstream; a node or pod without two points has no
 * metrics (absent from lists, NotFound on get). Lists filter by labelSelector, and by
 * fieldSelector on metadata.name / metadata.namespace (upstream filterPartialObjectMetadata).
 */
import { ApiError, formatBytes, formatQuantity, parseFieldSelector, parseLabelSelector, type KubeObject } from '@mk8s/api';
import type { MetricsStorage, NodeUsage, PodUsage, Usage } from './storage.js';

export const GROUP = 'metrics.k8s.io';
export const VERSION = 'v1beta1';
export const GROUP_VERSION = `${GROUP}/${VERSION}`;

export interface MetaLike { metadata: { name: string; namespace?: string; labels?: Record<string, string> } }

export interface ApiSources {
  storage: MetricsStorage;
  /** Nodes known to the informer. */
  listNodes(): readonly MetaLike[];
  /** Pods known to the informer, in namespace ('' : all). */
  listPods(namespace: string): readonly MetaLike[];
  now(): number;
}

export type Route =
  | { kind: 'root' } | { kind: 'group' } | { kind: 'version' }
  | { kind: 'nodes'; name?: string }
  | { kind: 'pods'; namespace: string; name?: string };

/** Routes a path under /apis; undefined for anything else (404). */
export function route(path: string): Route | undefined {
  const p = path.replace(/\/+$/, '');
  if (p === '/apis') return { kind: 'root' };
  if (p === `/apis/${GROUP}`) return { kind: 'group' };
  const base = `/apis/${GROUP_VERSION}`;
  if (p === base) return { kind: 'version' };
  if (!p.startsWith(`${base}/`)) return undefined;
  const parts = p.slice(base.length + 1).split('/').map(decodeURIComponent);
  if (parts[0] === 'nodes' && parts.length <= 2) return parts[1] ? { kind: 'nodes', name: parts[1] } : { kind: 'nodes' };
  if (parts[0] === 'pods' && parts.length === 1) return { kind: 'pods', namespace: '' };
  if (parts[0] === 'namespaces' && parts[1] && parts[2] === 'pods' && parts.length <= 4) {
    return parts[3] ? { kind: 'pods', namespace: parts[1], name: parts[3] } : { kind: 'pods', namespace: parts[1] };
  }
  return undefined;
}

export type Attributes =
  | { kind: 'resource'; verb: string; group: string; version: string; resource: string; namespace: string; name: string }
  | { kind: 'nonResource'; verb: string; path: string };

/** What a request asks to do, as a SubjectAccessReview spec would say it (upstream RequestInfo). */
export function attributesFor(method: string, path: string, r: Route | undefined, watch: boolean): Attributes {
  const httpVerb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  if (!r || r.kind === 'root' || r.kind === 'group' || r.kind === 'version') return { kind: 'nonResource', verb: httpVerb, path };
  const name = r.name ?? '';
  const verb = httpVerb !== 'get' ? httpVerb : watch ? 'watch' : name ? 'get' : 'list';
  return { kind: 'resource', verb, group: GROUP, version: VERSION, resource: r.kind, namespace: r.kind === 'pods' ? r.namespace : '', name };
}

/** Go's time.Duration.String for a non-negative whole number of milliseconds ("15.037s", "1m0s", "500ms"). */
export function goDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000), m = Math.floor((ms % 3_600_000) / 60_000), s = (ms % 60_000) / 1000;
  const sec = `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, '')}s`;
  if (h) return `${h}h${m}m${sec}`;
  if (m) return `${m}m${sec}`;
  return sec;
}

/** RFC 3339 seconds, as metav1.Time marshals. */
let lastSecond = NaN, lastText = '';
const rfc3339 = (ms: number): string => {
  const sec = Math.floor(ms / 1000);
  if (sec !== lastSecond) { lastSecond = sec; lastText = new Date(sec * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'); }
  return lastText;
};

/** cpu in nanocores as upstream's uint64Quantity(n, DecimalSI, -9) prints ("123456n", "2m", "1"); memory BinarySI ("12Mi", "12345Ki"). */
export function usageList(u: Usage): { cpu: string; memory: string } {
  return { cpu: cpuQuantity(u.cpuNanoCores), memory: memoryQuantity(u.memoryBytes) };
}

/** Nanocores as Quantity.String of DecimalSI at scale -9: the largest of n/u/m/'' that keeps the mantissa whole. */
export function cpuQuantity(nanoCores: number): string {
  const n = Math.max(0, Math.trunc(nanoCores));
  if (!Number.isSafeInteger(n)) return formatQuantity({ num: BigInt(n), den: 1_000_000_000n, format: 'DecimalSI' });
  if (n === 0) return '0';
  if (n % 1e9 === 0) return formatQuantity({ num: BigInt(n / 1e9), den: 1n, format: 'DecimalSI' });
  if (n % 1e6 === 0) return `${n / 1e6}m`;
  if (n % 1e3 === 0) return `${n / 1e3}u`;
  return `${n}n`;
}

const BIN = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
/** Bytes as Quantity.String of BinarySI: the largest Ki..Ei that keeps the mantissa whole; under 1024 decimal. */
export function memoryQuantity(bytes: number): string {
  const b = Math.max(0, Math.round(bytes));
  if (b < 1024 || !Number.isSafeInteger(b)) return formatBytes(b, 'BinarySI');
  let m = b, i = 0;
  while (i < 6 && m % 1024 === 0) { m /= 1024; i++; }
  return `${m}${BIN[i]}`;
}

export function nodeMetrics(n: NodeUsage, labels: Record<string, string> | undefined, now: number): KubeObject {
  return {
    kind: 'NodeMetrics', apiVersion: GROUP_VERSION,
    metadata: { name: n.name, creationTimestamp: rfc3339(now), ...(labels ? { labels: { ...labels } } : {}) },
    timestamp: rfc3339(n.timestampMs), window: goDuration(n.windowMs), usage: usageList(n),
  };
}

export function podMetrics(p: PodUsage, labels: Record<string, string> | undefined, now: number): KubeObject {
  return {
    kind: 'PodMetrics', apiVersion: GROUP_VERSION,
    metadata: { name: p.name, namespace: p.namespace, creationTimestamp: rfc3339(now), ...(labels ? { labels: { ...labels } } : {}) },
    timestamp: rfc3339(p.timestampMs), window: goDuration(p.windowMs),
    containers: p.containers.map((c) => ({ name: c.name, usage: usageList(c) })),
  };
}

const RESOURCES = [
  { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
  { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
];
const GROUP_DOC = { name: GROUP, versions: [{ groupVersion: GROUP_VERSION, version: VERSION }], preferredVersion: { groupVersion: GROUP_VERSION, version: VERSION } };

export interface ApiResponse { code: number; body: unknown }

const failure = (err: ApiError): ApiResponse => ({ code: err.code, body: err.toStatus() });

/** Answers one authorized GET. Never throws: bad input is a Status. */
export function serve(method: string, r: Route | undefined, query: URLSearchParams, src: ApiSources): ApiResponse {
  try {
    if (!r) throw new ApiError('NotFound', 'the server could not find the requested resource');
    if (method !== 'GET' && method !== 'HEAD') throw new ApiError('MethodNotAllowed', `the server does not allow this method on the requested resource`);
    switch (r.kind) {
      case 'root': return { code: 200, body: { kind: 'APIGroupList', apiVersion: 'v1', groups: [GROUP_DOC] } };
      case 'group': return { code: 200, body: { kind: 'APIGroup', apiVersion: 'v1', ...GROUP_DOC } };
      case 'version': return { code: 200, body: { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GROUP_VERSION, resources: RESOURCES } };
      case 'nodes': return nodes(r.name, query, src);
      case 'pods': return pods(r.namespace, r.name, query, src);
    }
  } catch (err) {
    if (err instanceof ApiError) return failure(err);
    return failure(new ApiError('InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`));
  }
}

function selectors(query: URLSearchParams) {
  const label = parseLabelSelector(query.get('labelSelector') ?? '');
  const field = parseFieldSelector(query.get('fieldSelector') ?? '');
  return (o: MetaLike) => label.matches(o.metadata.labels ?? {})
    && (field.empty || field.matches({ 'metadata.name': o.metadata.name, 'metadata.namespace': o.metadata.namespace ?? '' }));
}

function nodes(name: string | undefined, query: URLSearchParams, src: ApiSources): ApiResponse {
  const now = src.now();
  if (name) {
    const n = src.listNodes().find((x) => x.metadata.name === name);
    const u = n && src.storage.nodeUsage(name);
    if (!n || !u) throw new ApiError('NotFound', `nodemetrics.metrics.k8s.io "${name}" not found`, { details: { name, group: GROUP, kind: 'nodemetrics' } });
    return { code: 200, body: nodeMetrics(u, n.metadata.labels, now) };
  }
  const match = selectors(query);
  const items: KubeObject[] = [];
  for (const n of [...src.listNodes()].sort(byName)) {
    if (!match(n)) continue;
    const u = src.storage.nodeUsage(n.metadata.name);
    if (u) items.push(nodeMetrics(u, n.metadata.labels, now));
  }
  return { code: 200, body: { kind: 'NodeMetricsList', apiVersion: GROUP_VERSION, metadata: {}, items } };
}

function pods(namespace: string, name: string | undefined, query: URLSearchParams, src: ApiSources): ApiResponse {
  const now = src.now();
  if (name) {
    const p = src.listPods(namespace).find((x) => x.metadata.name === name);
    const u = p && src.storage.podUsage(namespace, name);
    if (!p || !u) throw new ApiError('NotFound', `podmetrics.metrics.k8s.io "${namespace}/${name}" not found`, { details: { name: `${namespace}/${name}`, group: GROUP, kind: 'podmetrics' } });
    return { code: 200, body: podMetrics(u, p.metadata.labels, now) };
  }
  const match = selectors(query);
  const items: KubeObject[] = [];
  for (const p of [...src.listPods(namespace)].sort(byNamespacedName)) {
    if (!match(p)) continue;
    const u = src.storage.podUsage(p.metadata.namespace ?? '', p.metadata.name);
    if (u) items.push(podMetrics(u, p.metadata.labels, now));
  }
  return { code: 200, body: { kind: 'PodMetricsList', apiVersion: GROUP_VERSION, metadata: {}, items } };
}

const byName = (a: MetaLike, b: MetaLike) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);
const byNamespacedName = (a: MetaLike, b: MetaLike) => {
  const x = a.metadata.namespace ?? '', y = b.metadata.namespace ?? '';
  return x < y ? -1 : x > y ? 1 : byName(a, b);
};
