/**
 * API aggregation (upstream kube-aggregator, in-process): each APIService with a service is
 * checked by fetching its discovery document from one of the Service's endpoints (upstream's
 * --enable-aggregator-routing: the apiserver reaches endpoint addresses, not the cluster IP), its
 * Available condition is written, its resources join the registry (store-less entries, so
 * discovery and OpenAPI list them), and requests for its group/version are proxied to the backend
 * with the caller's identity in X-Remote-User / X-Remote-Group / X-Remote-Extra-*. Checks run
 * concurrently, each bounded by `checkTimeoutMs` (upstream: "timed out waiting for <url>" after
 * 6 s), on an APIService's add/delete/spec change, on a change of a Service or Endpoints an
 * APIService points at, and for all every `recheckMs`; never on the aggregator's own status writes.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { ALL_VERBS, ApiError, EndpointsResource, Services, type KubeObject, type ResourceDescriptor, type Verb } from '@mk8s/api';
import type { Clock, Logger } from '@mk8s/component-base';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from '../registry/registry.js';
import type { RequestContext, Store } from '../registry/generic/store.js';
import type { UserInfo } from '../auth/authentication.js';
import { formatTime } from '../registry/generic/names.js';
import type { APIService, APIServiceCondition } from './types.js';

const SYSTEM: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, warnings: [] };

export interface Backend { host: string; servername: string; ca: string | undefined; insecure: boolean; clientCert?: { cert: string; key: string } | undefined }

/** Where a Service's traffic goes: the first ready endpoint address and the port of the Service's port. */
export function endpointFor(service: KubeObject, endpoints: KubeObject | undefined, port: number): string | undefined {
  const ports = ((service['spec'] as { ports?: { name?: string; port: number; targetPort?: number | string }[] } | undefined)?.ports) ?? [];
  const sp = ports.find((p) => p.port === port);
  if (!sp) return undefined;
  const subsets = ((endpoints?.['subsets'] as { addresses?: { ip: string }[]; ports?: { name?: string; port: number }[] }[] | undefined) ?? []);
  for (const s of subsets) {
    const ip = s.addresses?.[0]?.ip;
    if (!ip) continue;
    const ep = (s.ports ?? []).find((p) => (sp.name ? p.name === sp.name : true) || p.port === sp.targetPort) ?? s.ports?.[0];
    const target = typeof sp.targetPort === 'number' ? sp.targetPort : ep?.port ?? sp.port;
    return `${ip.includes(':') ? `[${ip}]` : ip}:${ep?.port ?? target}`;
  }
  return undefined;
}

/**
 * Where a Service-backed APIService is reached, or why not (upstream's availability controller:
 * ServicePortError when the Service has no such port, MissingEndpoints when no address serves it).
 */
export function reachable(service: KubeObject, endpoints: KubeObject | undefined, name: string, namespace: string, port: number): string | { reason: string; message: string } {
  const ports = ((service['spec'] as { ports?: { name?: string; port: number }[] } | undefined)?.ports) ?? [];
  const sp = ports.find((p) => p.port === port);
  if (!sp) return { reason: 'ServicePortError', message: `service/${name} in "${namespace}" is not listening on port ${port}` };
  return endpointFor(service, endpoints, port) ?? { reason: 'MissingEndpoints', message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${sp.name ?? ''}"` };
}

/** The FailedDiscoveryCheck message of a discovery request that got no answer (upstream's wording around Go's url.Error). */
export function discoveryFailure(url: string, err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.startsWith('failing or missing response from ') || msg.startsWith('timed out waiting for ') ? msg : `failing or missing response from ${url}: Get "${url}": ${msg}`;
}

function get(b: Backend, path: string, signal?: AbortSignal): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`https://${b.host}${path}`, { method: 'GET', servername: b.servername, ...(b.ca ? { ca: b.ca } : {}), ...(b.clientCert ?? {}), rejectUnauthorized: !b.insecure, timeout: 5000,
      // As upstream's availability controller: the check runs as system:kube-aggregator in system:masters.
      headers: { accept: 'application/json', 'x-remote-user': 'system:kube-aggregator', 'x-remote-group': 'system:masters' } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
    req.on('error', reject);
    signal?.addEventListener('abort', () => req.destroy(new Error('aborted')), { once: true });
    req.end();
  });
}

/** A discovery GET bounded as a whole by timeoutMs: then "timed out waiting for <url>" (upstream's insurance timer). */
export function getWithin(clock: Clock, timeoutMs: number, url: string, fetch: (signal: AbortSignal) => Promise<{ status: number; body: string }>): Promise<{ status: number; body: string }> {
  const abort = new AbortController();
  return new Promise((resolve, reject) => {
    const cancel = clock.setTimeout(() => { abort.abort(); reject(new Error(`timed out waiting for ${url}`)); }, timeoutMs);
    fetch(abort.signal).then((r) => { cancel(); resolve(r); }, (err: unknown) => { cancel(); reject(err); });
  });
}

/**
 * Whether an APIService event is worth a check: an add, a delete, or a change of anything but
 * status (the aggregator's own condition writes, and anyone's status writes, are not).
 */
export function apiServiceChanged(type: string, prev: KubeObject | undefined, next: KubeObject): boolean {
  if (type === 'ADDED' || type === 'DELETED') return true;
  if (type !== 'MODIFIED') return false;
  if (!prev) return true;
  const strip = (o: KubeObject) => JSON.stringify({ spec: o['spec'], labels: o.metadata.labels, deletionTimestamp: o.metadata.deletionTimestamp });
  return strip(prev) !== strip(next);
}

export interface AggregatorOptions {
  registry: Registry;
  apiServices: Store;
  clock: Clock;
  logger: Logger;
  /** The client certificate presented to backends (front-proxy). @default none */
  clientCert?: { cert: string; key: string };
  /** How often availability is checked again. @default 10000 */
  recheckMs?: number;
  /** How long one availability check may take in all. @default 6000 (upstream's) */
  checkTimeoutMs?: number;
}

export class Aggregator {
  private readonly backends = new Map<string, Backend>();
  private readonly served = new Map<string, ResourceDescriptor[]>();
  /** Service-backed APIServices whose last check failed (their group/version answers 503). */
  private readonly unavailable = new Set<string>();

  constructor(private readonly o: AggregatorOptions) {}

  /** The backend of a group/version served by an available APIService. */
  backendFor(group: string, version: string): Backend | undefined {
    return this.backends.get(`${version}.${group}`);
  }

  /**
   * Whether a group/version belongs to a service-backed APIService that is not available: upstream's
   * proxy handler answers 503 "service unavailable" for it rather than 404.
   */
  isUnavailable(group: string, version: string): boolean {
    return this.unavailable.has(`${version}.${group}`);
  }

  private wake: (() => void) | undefined;
  /** APIServices to check on the next wake ('all' on the periodic resync). */
  private dirty = new Set<string>();
  /** The last seen state of each APIService (to tell a spec change from a status write). */
  private readonly known = new Map<string, KubeObject>();

  private mark(names: Iterable<string>): void {
    let any = false;
    for (const n of names) { this.dirty.add(n); any = true; }
    if (any) this.wake?.();
  }

  /** The APIServices backed by a Service. */
  private referencing(namespace: string, name: string): string[] {
    const out: string[] = [];
    for (const [n, a] of this.known) {
      const s = (a as APIService).spec?.service;
      if (s && s.namespace === namespace && s.name === name) out.push(n);
    }
    return out;
  }

  /** Checks every APIService now and every recheckMs, and the ones a change concerns when it happens. */
  async run(signal: AbortSignal): Promise<void> {
    void this.watchChanges(signal, this.o.apiServices, (ev) => {
      const name = ev.object.metadata.name;
      const prev = this.known.get(name);
      if (ev.type === 'DELETED') this.known.delete(name); else this.known.set(name, ev.object);
      return apiServiceChanged(ev.type, prev, ev.object) ? [name] : [];
    });
    for (const r of [Services, EndpointsResource]) {
      const store = this.o.registry.get(r);
      if (store) void this.watchChanges(signal, store, (ev) => this.referencing(ev.object.metadata.namespace ?? '', ev.object.metadata.name));
    }
    let all = true;
    while (!signal.aborted) {
      try {
        const list = await this.o.apiServices.list('');
        const names = new Set(list.items.map((a) => a.metadata.name));
        for (const name of [...this.served.keys()]) if (!names.has(name)) this.unserve(name);
        for (const a of list.items) if (!this.known.has(a.metadata.name)) this.known.set(a.metadata.name, a);
        const due = all ? list.items : list.items.filter((a) => this.dirty.has(a.metadata.name));
        this.dirty.clear();
        for (const a of due) this.check(a as APIService, signal);
      } catch (err) {
        if (!signal.aborted) this.o.logger.warn({ err }, 'APIService availability check failed');
      }
      if (this.dirty.size > 0) { all = false; continue; }
      all = await Promise.race([
        this.o.clock.sleep(this.o.recheckMs ?? 10_000, signal).then(() => true, () => true),
        new Promise<boolean>((r) => { this.wake = () => r(false); }),
      ]);
      this.wake = undefined;
    }
  }

  /** APIServices being checked; true: checked again when done (a change came in meanwhile). */
  private readonly inflight = new Map<string, boolean>();

  /**
   * Starts one check without waiting for it: each APIService is checked on its own, so one hanging
   * backend (bounded by checkTimeoutMs) holds up no other; one check at a time per APIService.
   */
  private check(a: APIService, signal: AbortSignal): void {
    const name = a.metadata.name;
    if (this.inflight.has(name)) { this.inflight.set(name, true); return; }
    this.inflight.set(name, false);
    this.sync(a).catch((err: unknown) => {
      if (!signal.aborted) this.o.logger.warn({ err, apiService: name }, 'APIService availability check failed');
    }).finally(() => {
      const again = this.inflight.get(name);
      this.inflight.delete(name);
      if (again && !signal.aborted) this.mark([name]);
    });
  }

  private async watchChanges(signal: AbortSignal, store: Store, concerns: (ev: { type: string; object: KubeObject }) => string[]): Promise<void> {
    while (!signal.aborted) {
      try {
        for await (const ev of store.watch('', { signal })) if (ev.type !== 'BOOKMARK' && ev.type !== 'ERROR') this.mark(concerns(ev));
      } catch {
        await this.o.clock.sleep(1000, signal).catch(() => undefined);
      }
    }
  }

  private unserve(name: string): void {
    for (const d of this.served.get(name) ?? []) this.o.registry.remove(d);
    this.served.delete(name);
    this.backends.delete(name);
    this.unavailable.delete(name);
  }

  private async resolve(a: APIService): Promise<Backend | { reason: string; message: string }> {
    const s = a.spec.service!;
    const port = s.port ?? 443;
    let svc: KubeObject;
    try { svc = await this.o.registry.get(Services)!.get(s.namespace, s.name); } catch {
      return { reason: 'ServiceNotFound', message: `service/${s.name} in "${s.namespace}" is not present` };
    }
    let eps: KubeObject | undefined;
    try { eps = await this.o.registry.get(EndpointsResource)!.get(s.namespace, s.name); } catch { eps = undefined; }
    const host = reachable(svc, eps, s.name, s.namespace, port);
    if (typeof host !== 'string') return host;
    return { host, servername: `${s.name}.${s.namespace}.svc`, ca: a.spec.caBundle ? Buffer.from(a.spec.caBundle, 'base64').toString('utf8') : undefined, insecure: !!a.spec.insecureSkipTLSVerify, clientCert: this.o.clientCert };
  }

  private async sync(a: APIService): Promise<void> {
    const name = a.metadata.name;
    let cond: APIServiceCondition;
    if (!a.spec.service) {
      cond = { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
    } else {
      const b = await this.resolve(a);
      if (!('host' in b)) {
        cond = { type: 'Available', status: 'False', ...b };
        this.unserve(name);
      } else {
        const path = a.spec.group ? `/apis/${a.spec.group}/${a.spec.version}` : `/api/${a.spec.version}`;
        const url = `https://${b.host}${path}`;
        try {
          const res = await getWithin(this.o.clock, this.o.checkTimeoutMs ?? 6000, url, (sig) => get(b, path, sig));
          if (res.status !== 200) throw new Error(`failing or missing response from https://${b.host}${path}: bad status from https://${b.host}${path}: ${res.status}`);
          this.serve(a, b, JSON.parse(res.body) as { resources?: { name: string; singularName?: string; namespaced: boolean; kind: string; verbs?: string[]; shortNames?: string[]; categories?: string[] }[] });
          cond = { type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' };
        } catch (err) {
          this.unserve(name);
          cond = { type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck', message: discoveryFailure(`https://${b.host}${path}`, err) };
        }
      }
    }
    if (cond.status === 'False') this.unavailable.add(name); else this.unavailable.delete(name);
    const prev = a.status?.conditions?.find((c) => c.type === 'Available');
    if (prev && prev.status === cond.status && prev.reason === cond.reason && prev.message === cond.message) return;
    cond.lastTransitionTime = prev && prev.status === cond.status && prev.lastTransitionTime ? prev.lastTransitionTime : formatTime(this.o.clock.now());
    const next = { ...structuredClone(a), status: { conditions: [...(a.status?.conditions ?? []).filter((c) => c.type !== 'Available'), cond] } } as KubeObject;
    try { await this.o.apiServices.update({ ...SYSTEM, warnings: [] }, '', name, next, 'status'); } catch (err) {
      if (!(err instanceof ApiError && (err.reason === 'Conflict' || err.reason === 'NotFound'))) throw err;
    }
  }

  private serve(a: APIService, b: Backend, list: { resources?: { name: string; singularName?: string; namespaced: boolean; kind: string; verbs?: string[]; shortNames?: string[]; categories?: string[] }[] }): void {
    const name = a.metadata.name;
    const group = a.spec.group ?? ''; const version = a.spec.version!;
    const top = (list.resources ?? []).filter((r) => !r.name.includes('/'));
    const descriptors: ResourceDescriptor[] = top.map((r) => ({
      group, version, kind: r.kind, listKind: `${r.kind}List`, resource: r.name, singular: r.singularName || r.kind.toLowerCase(),
      namespaced: r.namespaced, shortNames: r.shortNames ?? [], categories: r.categories ?? [],
      verbs: (r.verbs ?? ALL_VERBS).filter((v): v is Verb => (ALL_VERBS as readonly string[]).includes(v)),
      subresources: (list.resources ?? []).filter((s) => s.name.startsWith(`${r.name}/`)).map((s) => s.name.slice(r.name.length + 1)),
    }));
    const key = JSON.stringify(descriptors);
    if (JSON.stringify(this.served.get(name) ?? []) !== key) {
      for (const d of this.served.get(name) ?? []) this.o.registry.remove(d);
      for (const d of descriptors) this.o.registry.add({ descriptor: d, store: undefined, subresources: new Map() });
      this.served.set(name, descriptors);
    }
    this.backends.set(name, b);
  }
}

/** Headers a proxied request keeps (the caller's identity is replaced by X-Remote-*). */
const PASSED = ['accept', 'content-type', 'user-agent', 'accept-encoding', 'audit-id'];

/** Proxies one request to the backend, streaming the answer (watches included). */
export async function proxyToBackend(b: Backend, req: FastifyRequest, reply: FastifyReply, user: UserInfo): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const h of PASSED) { const v = req.headers[h]; if (v !== undefined) headers[h] = v; }
  headers['x-remote-user'] = user.username;
  if (user.groups.length) headers['x-remote-group'] = user.groups;
  for (const [k, vs] of Object.entries(user.extra ?? {})) headers[`x-remote-extra-${encodeURIComponent(k)}`] = vs;
  const body = Buffer.isBuffer(req.body) ? req.body : undefined;
  if (body) headers['content-length'] = String(body.length);
  const opts: RequestOptions = { method: req.method, headers, servername: b.servername, rejectUnauthorized: !b.insecure, ...(b.ca ? { ca: b.ca } : {}), ...(b.clientCert ?? {}) };
  reply.hijack();
  const raw = reply.raw;
  await new Promise<void>((resolve) => {
    const up = httpsRequest(`https://${b.host}${req.url}`, opts, (res: IncomingMessage) => {
      raw.writeHead(res.statusCode ?? 502, Object.fromEntries(Object.entries(res.headers).filter(([k]) => k !== 'connection' && k !== 'transfer-encoding')) as Record<string, string>);
      res.pipe(raw);
      res.on('end', () => resolve());
      res.on('error', () => { raw.destroy(); resolve(); });
    });
    raw.on('close', () => up.destroy());
    up.on('error', (err) => {
      if (!raw.headersSent) {
        const status = new ApiError('ServiceUnavailable', `error trying to reach service: ${err.message}`).toStatus();
        raw.writeHead(503, { 'content-type': 'application/json' });
        raw.end(JSON.stringify(status));
      } else raw.destroy();
      resolve();
    });
    up.end(body);
  });
}
