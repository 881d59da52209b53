/**
 * apiserver metrics under upstream's names, label sets, help and buckets
 * (apiserver/pkg/endpoints/metrics, storage/etcd3/metrics): apiserver_request_total,
 * apiserver_request_duration_seconds, apiserver_response_sizes, apiserver_longrunning_requests,
 * apiserver_current_inflight_requests, apiserver_watch_events_total, apiserver_storage_objects,
 * etcd_request_duration_seconds, etcd_requests_total. One registry per server instance (with the
 * process' own metrics) so several servers can live in one test process.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { newRegistry } from '@mk8s/component-base';
import type { RequestInfo } from './endpoints/request-info.js';

/** The `component` label of requests the API server itself serves (upstream APIServerComponent). */
export const APISERVER_COMPONENT = 'apiserver';

/** Verbs reported as themselves; anything else is `other` (upstream validRequestMethods). */
const VALID_VERBS = new Set(['APPLY', 'CONNECT', 'CREATE', 'DELETE', 'DELETECOLLECTION', 'GET', 'LIST', 'PATCH', 'POST', 'PROXY', 'PUT', 'UPDATE', 'WATCH', 'WATCHLIST']);
/** Subresources whose requests are reported as CONNECT (upstream validConnectRequests). */
const CONNECT_SUBRESOURCES = new Set(['log', 'exec', 'portforward', 'attach', 'proxy']);
/** Non-resource paths worth a series of their own (upstream instruments its fixed handlers only). */
const NON_RESOURCE_PATHS = new Set(['/healthz', '/livez', '/readyz', '/metrics', '/version', '/openapi/v2', '/openapi/v3', '/api', '/apis', '/.well-known/openid-configuration', '/openid/v1/jwks']);
const DISCOVERY_PATH = /^\/apis?\/[^/]+(\/[^/]+)?$/;
const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';

/** The labels of apiserver_request_total and apiserver_request_duration_seconds (without code). */
export interface RequestMetricLabels {
  verb: string;
  dry_run: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
}

/** upstream CleanScope: `resource` for a named object or a create, `namespace`, `cluster`, or '' for non-resource requests. */
export function cleanScope(info: RequestInfo): string {
  if (!info.resourceRequest) return '';
  if (info.name !== '' || info.verb === 'create') return 'resource';
  if (info.namespace !== '') return 'namespace';
  return 'cluster';
}

/** upstream cleanDryRun: '' when absent, the sorted distinct values joined by ',', `invalid` unless each is `All`. */
export function cleanDryRun(values: readonly string[]): string {
  if (values.length === 0) return '';
  if (values.some((v) => v !== 'All')) return 'invalid';
  return [...new Set(values)].sort().join(',');
}

/**
 * requestMetricLabels derives the request metrics' labels as upstream's MonitorRequest does:
 * the HTTP method made canonical (GET/HEAD on a collection → LIST), WATCH for watches (?watch or
 * the legacy /watch/ path), APPLY for a PATCH of type apply-patch+yaml, CONNECT for the
 * log/exec/portforward/attach/proxy subresources, `other` for unknown methods. Non-resource
 * requests carry their path as subresource and no component; undefined for a path that gets no
 * series (unbounded cardinality: unknown non-resource paths, unserved resources, unknown subresources).
 */
export function requestMetricLabels(info: RequestInfo, o: { contentType?: string | undefined; dryRun?: readonly string[] } = {}): RequestMetricLabels | undefined {
  const scope = cleanScope(info);
  let verb = info.method.toUpperCase();
  if (verb === 'HEAD' || verb === 'GET') verb = scope !== 'resource' && scope !== '' ? 'LIST' : 'GET';
  if (!info.resourceRequest) {
    if (!NON_RESOURCE_PATHS.has(info.path) && !DISCOVERY_PATH.test(info.path)) return undefined;
    return { verb: VALID_VERBS.has(verb) ? verb : 'other', dry_run: '', group: '', version: '', resource: '', subresource: info.path, scope, component: '' };
  }
  // Only served resources and their known subresources get a series (upstream instruments its
  // registered routes only; a 404 for /api/v1/<anything> must not mint a series per path).
  if (!info.descriptor) return undefined;
  if (info.subresource !== '' && !info.descriptor.subresources.includes(info.subresource) && !CONNECT_SUBRESOURCES.has(info.subresource)) return undefined;
  if (info.verb === 'watch') verb = 'WATCH';
  if (verb === 'PATCH' && o.contentType?.split(';')[0]?.trim().toLowerCase() === APPLY_PATCH_TYPE) verb = 'APPLY';
  if (info.subresource !== '' && CONNECT_SUBRESOURCES.has(info.subresource)) verb = 'CONNECT';
  return {
    verb: VALID_VERBS.has(verb) ? verb : 'other', dry_run: cleanDryRun(o.dryRun ?? []),
    group: info.group, version: info.version, resource: info.resource, subresource: info.subresource, scope, component: APISERVER_COMPONENT,
  };
}

/**
 * RequestLabelCache: the label objects of the request metrics, derived once per distinct request
 * shape (not per request) and kept as the same objects, so prom-client sees stable label sets.
 * The key holds only what the labels depend on (cleaned dry-run, apply or not), so client-chosen
 * query values or content types cannot grow it; the `code` variants hang off the label object
 * weakly. Bounded at `max` shapes: past it labels are derived per request.
 */
export class RequestLabelCache {
  private readonly byShape = new Map<string, RequestMetricLabels | undefined>();
  private readonly byCode = new WeakMap<RequestMetricLabels, Map<number, RequestMetricLabels & { code: string }>>();
  constructor(private readonly max = 10_000) {}

  get size(): number { return this.byShape.size; }

  labelsFor(info: RequestInfo, url: string, contentType: string | undefined): RequestMetricLabels | undefined {
    const q = url.indexOf('?');
    const dryRun = cleanDryRun(q >= 0 && url.includes('dryRun', q) ? new URLSearchParams(url.slice(q + 1)).getAll('dryRun') : []);
    const ct = info.method === 'PATCH' && contentType?.split(';')[0]?.trim().toLowerCase() === APPLY_PATCH_TYPE ? APPLY_PATCH_TYPE : '';
    const k = info.resourceRequest
      ? `${info.method} ${info.verb} ${info.group}/${info.version}/${info.resource}/${info.subresource} ${info.name ? 'n' : ''}${info.namespace ? 'ns' : ''} ${dryRun} ${ct}`
      : `${info.method} ${info.path}`;
    if (this.byShape.has(k)) return this.byShape.get(k);
    const labels = requestMetricLabels(info, { contentType: ct, dryRun: dryRun === '' ? [] : dryRun.split(',') });
    if (this.byShape.size < this.max) this.byShape.set(k, labels);
    return labels;
  }

  /** labels with `code`, the same object for the same labels and code. */
  withCode(labels: RequestMetricLabels, code: number): RequestMetricLabels & { code: string } {
    let m = this.byCode.get(labels);
    if (!m) { m = new Map(); this.byCode.set(labels, m); }
    let c = m.get(code);
    if (!c) { c = { ...labels, code: String(code) }; m.set(code, c); }
    return c;
  }
}

/** Whether the request is long-running (upstream's longRunningRequestCheck: watch and the CONNECT subresources). */
export function isLongRunning(labels: RequestMetricLabels): boolean {
  return labels.verb === 'WATCH' || labels.verb === 'CONNECT';
}

/** Prometheus' ExponentialBuckets(start, factor, count). */
const exponential = (start: number, factor: number, count: number) => Array.from({ length: count }, (_, i) => start * factor ** i);

/** The SLO buckets of request and etcd latencies. */
const LATENCY_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

type RequestLabel = keyof RequestMetricLabels;
const REQUEST_LABELS: RequestLabel[] = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];
type LongRunningLabel = Exclude<RequestLabel, 'dry_run'>;

export class ApiServerMetrics {
  readonly registry: Registry;
  readonly requestTotal: Counter<RequestLabel | 'code'>;
  readonly requestDuration: Histogram<RequestLabel>;
  readonly responseSizes: Histogram<LongRunningLabel>;
  readonly longRunning: Gauge<LongRunningLabel>;
  readonly currentInflight: Gauge<'request_kind'>;
  readonly registeredWatchers: Gauge<'resource'>;
  readonly watchEvents: Counter<'group' | 'version' | 'kind'>;
  readonly storageObjects: Gauge<'resource'>;
  readonly etcdRequestDuration: Histogram<'operation' | 'type'>;
  readonly etcdRequests: Counter<'operation' | 'type'>;
  readonly etcdRequestErrors: Counter<'operation' | 'type'>;
  /** Read at scrape time by apiserver_current_inflight_requests (set by the server). */
  inflight: (() => { readOnly: number; mutating: number }) | undefined;
  /** Read at scrape time by apiserver_storage_objects: resource → count, -1 when unknown (set by the server). */
  storageCounts: (() => Promise<Map<string, number>>) | undefined;

  /** @param registry @default newRegistry() (with the process' own metrics) */
  constructor(registry: Registry = newRegistry()) {
    this.registry = registry;
    this.inflight = undefined;
    this.storageCounts = undefined;
    const registers = [registry];
    const self = this;
    this.requestTotal = new Counter({
      name: 'apiserver_request_total', help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...REQUEST_LABELS, 'code'], registers,
    });
    this.requestDuration = new Histogram({
      name: 'apiserver_request_duration_seconds', help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: REQUEST_LABELS, buckets: LATENCY_BUCKETS, registers,
    });
    this.responseSizes = new Histogram({
      name: 'apiserver_response_sizes', help: 'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'], buckets: exponential(1000, 10, 7), registers,
    });
    this.longRunning = new Gauge({
      name: 'apiserver_longrunning_requests', help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'], registers,
    });
    this.currentInflight = new Gauge({
      name: 'apiserver_current_inflight_requests', help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'], registers,
      collect() {
        const n = self.inflight?.();
        if (n) { this.set({ request_kind: 'readOnly' }, n.readOnly); this.set({ request_kind: 'mutating' }, n.mutating); }
      },
    });
    this.registeredWatchers = new Gauge({
      name: 'apiserver_registered_watchers', help: 'Number of currently registered watchers for a given resource.', labelNames: ['resource'], registers,
    });
    this.watchEvents = new Counter({ name: 'apiserver_watch_events_total', help: 'Number of events sent in watch clients', labelNames: ['group', 'version', 'kind'], registers });
    this.storageObjects = new Gauge({
      name: 'apiserver_storage_objects', help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
      labelNames: ['resource'], registers,
      async collect() {
        const counts = await self.storageCounts?.();
        for (const [resource, n] of counts ?? []) this.set({ resource }, n);
      },
    });
    this.etcdRequestDuration = new Histogram({
      name: 'etcd_request_duration_seconds', help: 'Etcd request latency in seconds for each operation and object type.', labelNames: ['operation', 'type'], buckets: LATENCY_BUCKETS, registers,
    });
    this.etcdRequests = new Counter({ name: 'etcd_requests_total', help: 'Etcd request counts for each operation and object type.', labelNames: ['operation', 'type'], registers });
    this.etcdRequestErrors = new Counter({ name: 'etcd_request_errors_total', help: 'Etcd failed request counts for each operation and object type.', labelNames: ['operation', 'type'], registers });
  }

  /** Records one etcd request (upstream RecordEtcdRequest); type is the group-resource (`pods`, `deployments.apps`). */
  observeEtcd(operation: string, type: string, seconds: number, failed: boolean): void {
    const labels = { operation, type };
    this.etcdRequestDuration.observe(labels, seconds);
    this.etcdRequests.inc(labels);
    if (failed) this.etcdRequestErrors.inc(labels);
  }
}
