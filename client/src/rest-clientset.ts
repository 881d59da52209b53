/**
 * RestClientset: the Clientset over HTTP(S) with undici (client-go rest + kubernetes typed
 * clients). Paths come from the scheme; errors become ApiError from the server's Status.
 */
import { createSecureContext } from 'node:tls';
import { Agent, request, type Dispatcher } from 'undici';
import { ApiError, collectionPath, type ApiStatus, type DeleteOptions, type KubeList, type KubeObject, type ResourceDescriptor, type WatchEvent } from '@mk8s/api';
import { realClock, type Clock, type Logger } from '@mk8s/component-base';
import type { Clientset, ListOptions, PatchType, ResourceClient, WatchOptions, WriteOptions } from './interfaces.js';
import { loadKubeConfig, restConfigFromKubeConfig, type KubeConfig, type RestConfig } from './kubeconfig.js';
import { TokenBucket } from './token-bucket.js';
import { decodeWatchEvents } from './watch-decoder.js';
import type { RestClientMetrics } from './rest-client-metrics.js';

export const CLIENT_VERSION = 'v0.1.0';

export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Options for {@link createClientset}. */
export interface ClientsetOptions {
  /** A kubeconfig path, or a loaded kubeconfig. Ignored when server is set. @default $KUBECONFIG or ~/.kube/config */
  kubeconfig?: string | KubeConfig;
  /** Context to use. @default current-context */
  context?: string;
  /** Talk to this URL instead of a kubeconfig's (plain http, or https with tls options). */
  server?: string;
  /** A fully resolved connection config (wins over kubeconfig and server). */
  restConfig?: RestConfig;
  /** The component name: user agent `<name>/v0.1.0 mk8s` and default field manager. @default 'mk8s' */
  userAgent?: string;
  /** Client-side rate limit. @default 50 (<= 0 disables) */
  qps?: number;
  /** @default 100 */
  burst?: number;
  /** Replaces the connection pool (tests pass an undici MockAgent). */
  dispatcher?: Dispatcher;
  clock?: Clock;
  logger?: Logger;
  /** Retries of a request the server answered 429 (or 5xx) with Retry-After. @default 10 */
  maxRetries?: number;
  /** rest_client_* metrics (newRestClientMetrics). @default none */
  metrics?: RestClientMetrics;
  /**
   * Consulted right before every request but GET is sent: an Error returned is thrown instead of
   * sending (a leader-elected component's fence: no write once its Lease may have passed on).
   */
  writeFence?: (req: { method: string; path: string }) => Error | undefined;
}

/** Options of a raw request. */
export interface RawRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute path, e.g. /api/v1/namespaces/default/pods/web/log or /healthz. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** For long streams (watch, follow logs): no body timeout. */
  stream?: boolean;
  /** For streams: fail when no data arrives for this long (a half-open connection). @default none */
  idleTimeoutMs?: number;
}

export interface RawResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** An async-iterable byte stream; consume or dump it. */
  body: Dispatcher.ResponseData['body'];
}

/** createClientset builds a RestClientset from a kubeconfig, a server URL or a RestConfig. */
export function createClientset(o: ClientsetOptions = {}): RestClientset {
  let rc: RestConfig;
  if (o.restConfig) rc = o.restConfig;
  else if (o.server) rc = { server: o.server.replace(/\/+$/, ''), namespace: 'default' };
  else {
    const kc = typeof o.kubeconfig === 'object' ? o.kubeconfig : loadKubeConfig(o.kubeconfig);
    rc = restConfigFromKubeConfig(kc, o.context ? { context: o.context } : {});
  }
  return new RestClientset({ ...o, restConfig: rc });
}

/** The HTTP Clientset. Safe to share process-wide; holds one connection pool. */
export class RestClientset implements Clientset {
  readonly config: RestConfig;
  /** The context's namespace (for CLIs). */
  readonly namespace: string;
  readonly userAgent: string;
  /** Default field manager: the component name. */
  readonly fieldManager: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly bucket: TokenBucket;
  private readonly logger: Logger | undefined;
  private readonly clock: Clock;
  private readonly maxRetries: number;
  private readonly metrics: RestClientMetrics | undefined;
  /** The `host` label: host:port of the server, as client-go's url.Host. */
  private readonly metricsHost: string;
  private readonly writeFence: ClientsetOptions['writeFence'];

  constructor(o: ClientsetOptions & { restConfig: RestConfig }) {
    this.writeFence = o.writeFence;
    this.clock = o.clock ?? realClock;
    this.maxRetries = o.maxRetries ?? 10;
    this.config = o.restConfig;
    this.metrics = o.metrics;
    this.metricsHost = hostOf(o.restConfig.server);
    this.namespace = o.restConfig.namespace;
    const name = o.userAgent ?? 'mk8s';
    this.userAgent = name.includes('/') ? name : `${name}/${CLIENT_VERSION} mk8s`;
    this.fieldManager = name.split('/')[0]!;
    this.logger = o.logger;
    this.bucket = new TokenBucket({ qps: o.qps ?? 50, burst: o.burst ?? 100, ...(o.clock ? { clock: o.clock } : {}) });
    if (o.dispatcher) { this.dispatcher = o.dispatcher; this.ownsDispatcher = false; } else {
      const c = this.config;
      this.dispatcher = new Agent({
        connect: {
          // One context for every connection: given ca/cert/key, each TLS connect parsed them anew.
          ...(c.ca || c.cert || c.key ? { secureContext: createSecureContext({ ...(c.ca ? { ca: c.ca } : {}), ...(c.cert ? { cert: c.cert } : {}), ...(c.key ? { key: c.key } : {}) }) } : {}),
          ...(c.tlsServerName ? { servername: c.tlsServerName } : {}),
          rejectUnauthorized: !c.insecureSkipTlsVerify,
        },
        // Keep-alive connections are reused across the many small requests controllers make.
        keepAliveTimeout: 30_000,
      });
      this.ownsDispatcher = true;
    }
  }

  resource<T extends KubeObject = KubeObject>(r: ResourceDescriptor<unknown>, namespace?: string): ResourceClient<T> {
    return new RestResourceClient<T>(this, r as ResourceDescriptor, r.namespaced ? namespace ?? '' : '');
  }

  /**
   * Sends one request (rate-limited, authenticated). Resolves on any 2xx with the streaming body;
   * rejects with ApiError (from the Status body) otherwise.
   */
  async requestRaw(req: RawRequest): Promise<RawResponse> {
    for (let attempt = 0; ; attempt++) {
      const waitStart = this.metrics ? performance.now() : 0;
      await this.bucket.acquire(req.signal);
      if (this.metrics) this.metrics.observeRateLimiterWait({ method: req.method ?? 'GET', host: this.metricsHost, seconds: (performance.now() - waitStart) / 1000 });
      if (this.writeFence && (req.method ?? 'GET') !== 'GET') {
        const refused = this.writeFence({ method: req.method!, path: req.path });
        if (refused) throw refused;
      }
      let res: Dispatcher.ResponseData;
      try {
        res = await this.timedSend(req);
      } catch (err) {
        // client-go's request(): a GET whose connection was reset or closed early (an apiserver
        // restarting, a balancer dropping it) is retried after an artificial Retry-After of 1 s;
        // writes are not (they may have been applied).
        if ((req.method ?? 'GET') === 'GET' && attempt < this.maxRetries && !req.signal?.aborted && isConnectionResetOrEOF(err)) {
          this.logger?.debug({ path: req.path, err: (err as Error).message }, 'Retrying GET after a connection reset');
          await this.clock.sleep(1000, req.signal);
          continue;
        }
        throw err;
      }
      // As client-go's checkWait: Retry-After means the server did not process the request.
      const retryAfter = Number(res.headers['retry-after']);
      const retriable = (res.statusCode === 429 || (res.statusCode >= 500 && res.statusCode <= 504)) && Number.isFinite(retryAfter) && retryAfter > 0;
      if (retriable && attempt < this.maxRetries) {
        await res.body.dump();
        this.logger?.debug({ path: req.path, code: res.statusCode, retryAfter }, 'Retrying request after Retry-After');
        await this.clock.sleep(retryAfter * 1000, req.signal);
        continue;
      }
      if (res.statusCode >= 200 && res.statusCode < 300) return { statusCode: res.statusCode, headers: res.headers, body: res.body };
      const text = await res.body.text().catch(() => '');
      let status: Partial<ApiStatus> | undefined;
      try { const parsed = JSON.parse(text) as Partial<ApiStatus>; if (parsed && parsed.kind === 'Status') status = parsed; } catch { /* not JSON */ }
      this.logger?.debug({ method: req.method ?? 'GET', path: req.path, code: res.statusCode }, 'Request failed');
      throw ApiError.fromStatus(status, res.statusCode, text.slice(0, 500) || undefined);
    }
  }

  /** send, recorded in rest_client_requests_total / rest_client_request_duration_seconds (headers received). */
  private async timedSend(req: RawRequest): Promise<Dispatcher.ResponseData> {
    const m = this.metrics;
    if (!m) return this.send(req);
    const start = performance.now();
    const method = req.method ?? 'GET';
    let code = '<error>';
    try {
      const res = await this.send(req);
      code = String(res.statusCode);
      return res;
    } finally {
      m.observeRequest({ method, host: this.metricsHost, code, seconds: (performance.now() - start) / 1000 });
    }
  }

  private async send(req: RawRequest): Promise<Dispatcher.ResponseData> {
    const url = new URL(this.config.server + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { 'user-agent': this.userAgent, accept: 'application/json', ...req.headers };
    if (this.config.token) headers['authorization'] = `Bearer ${this.config.token}`;
    else if (this.config.username) headers['authorization'] = `Basic ${Buffer.from(`${this.config.username}:${this.config.password ?? ''}`).toString('base64')}`;
    let body: string | undefined;
    if (req.body !== undefined) {
      body = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
      headers['content-type'] = req.contentType ?? 'application/json';
    }
    const res = await request(url, {
      method: req.method ?? 'GET',
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
      dispatcher: this.dispatcher,
      ...(req.stream ? { bodyTimeout: req.idleTimeoutMs ?? 0 } : {}),
    });
    return res;
  }

  /**
   * GET a path and yield its body as text chunks until the server ends it or the signal aborts
   * (e.g. `pods/<name>/log?follow=true`).
   */
  async *streamRaw(path: string, o: { query?: Record<string, string | number | boolean | undefined>; signal?: AbortSignal } = {}): AsyncGenerator<string> {
    const res = await this.requestRaw({ path, stream: true, ...o });
    const dec = new TextDecoder();
    try {
      for await (const chunk of res.body) {
        const text = dec.decode(chunk as Uint8Array, { stream: true });
        if (text) yield text;
      }
      const rest = dec.decode();
      if (rest) yield rest;
    } catch (err) {
      if (!o.signal?.aborted) throw err;
    } finally {
      if (!res.body.destroyed) res.body.destroy();
    }
  }

  /** A JSON request: the parsed body, or the text when the response is not JSON. */
  async requestJson<R = unknown>(req: RawRequest): Promise<R> {
    const res = await this.requestRaw(req);
    const text = await res.body.text();
    const ct = String(res.headers['content-type'] ?? '');
    if (ct.includes('json') || (!ct && /^[[{]/.test(text))) return (text ? JSON.parse(text) : undefined) as R;
    return text as R;
  }

  /** GET a path and return its text (e.g. /healthz, /version, pod logs). */
  async getRaw(path: string, o: { query?: Record<string, string | number | boolean | undefined>; signal?: AbortSignal } = {}): Promise<string> {
    const res = await this.requestRaw({ path, ...o });
    return res.body.text();
  }

  /** Headers every request carries: user agent and credentials. */
  authHeaders(): Record<string, string> {
    const h: Record<string, string> = { 'user-agent': this.userAgent };
    if (this.config.token) h['authorization'] = `Bearer ${this.config.token}`;
    else if (this.config.username) h['authorization'] = `Basic ${Buffer.from(`${this.config.username}:${this.config.password ?? ''}`).toString('base64')}`;
    return h;
  }

  /** Releases the connection pool (when the clientset made it). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

class RestResourceClient<T extends KubeObject> implements ResourceClient<T> {
  constructor(private readonly c: RestClientset, private readonly r: ResourceDescriptor, private readonly ns: string) {}

  private path(namespace: string, name?: string, subresource?: string): string {
    let p = collectionPath(this.r, namespace);
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
    return p;
  }
  private nsFor(obj?: { metadata?: { namespace?: string } }): string {
    return this.r.namespaced ? this.ns || obj?.metadata?.namespace || '' : '';
  }
  private writeQuery(o: WriteOptions = {}): Record<string, string | undefined> {
    return { fieldManager: o.fieldManager ?? this.c.fieldManager, dryRun: o.dryRun ? 'All' : undefined };
  }
  private sig(o?: { signal?: AbortSignal }): { signal?: AbortSignal } { return o?.signal ? { signal: o.signal } : {}; }

  get(name: string, opts?: { signal?: AbortSignal }): Promise<T> {
    return this.c.requestJson<T>({ path: this.path(this.ns, name), ...this.sig(opts) });
  }

  list(opts: ListOptions & { signal?: AbortSignal } = {}): Promise<KubeList<T>> {
    const { signal: _s, ...q } = opts;
    return this.c.requestJson<KubeList<T>>({ path: this.path(this.ns), query: { ...q }, ...this.sig(opts) });
  }

  create(obj: T, opts?: WriteOptions): Promise<T> {
    return this.c.requestJson<T>({ method: 'POST', path: this.path(this.nsFor(obj)), query: this.writeQuery(opts), body: obj, ...this.sig(opts) });
  }

  update(obj: T, opts?: WriteOptions): Promise<T> {
    return this.c.requestJson<T>({ method: 'PUT', path: this.path(this.nsFor(obj), obj.metadata.name), query: this.writeQuery(opts), body: obj, ...this.sig(opts) });
  }

  updateStatus(obj: T, opts?: WriteOptions): Promise<T> {
    return this.c.requestJson<T>({ method: 'PUT', path: this.path(this.nsFor(obj), obj.metadata.name, 'status'), query: this.writeQuery(opts), body: obj, ...this.sig(opts) });
  }

  patch(name: string, type: PatchType, patch: unknown, opts: WriteOptions & { subresource?: string; force?: boolean } = {}): Promise<T> {
    const query: Record<string, string | undefined> = this.writeQuery(opts);
    if (type === 'apply' && opts.force) query['force'] = 'true';
    // Apply bodies are YAML on the wire; JSON is valid YAML.
    return this.c.requestJson<T>({ method: 'PATCH', path: this.path(this.ns, name, opts.subresource), query, body: patch, contentType: PATCH_CONTENT_TYPES[type], ...this.sig(opts) });
  }

  async delete(name: string, opts: WriteOptions & DeleteOptions = {}): Promise<void> {
    const { signal, fieldManager: _f, dryRun, ...rest } = opts;
    const body: DeleteOptions = { kind: 'DeleteOptions', apiVersion: 'v1', ...rest, ...(dryRun ? { dryRun: ['All'] } : {}) } as DeleteOptions;
    const res = await this.c.requestRaw({ method: 'DELETE', path: this.path(this.ns, name), body, ...(signal ? { signal } : {}) });
    await res.body.dump();
  }

  watch(opts: WatchOptions & { signal?: AbortSignal } = {}): AsyncIterable<WatchEvent<T>> {
    const { signal, ...q } = opts;
    const c = this.c;
    const path = this.path(this.ns);
    return {
      async *[Symbol.asyncIterator]() {
        let res: RawResponse;
        try {
          // The server ends a watch after timeoutSeconds; silence well past that means a dead peer.
          const idle = q.timeoutSeconds ? (q.timeoutSeconds + 60) * 1000 : undefined;
          res = await c.requestRaw({ path, query: { ...q, watch: 'true' }, stream: true, ...(idle ? { idleTimeoutMs: idle } : {}), ...(signal ? { signal } : {}) });
        } catch (err) {
          if (signal?.aborted) return;
          throw err;
        }
        try {
          yield* decodeWatchEvents<T>(res.body);
        } catch (err) {
          // Abort and a dropped connection both just end the stream: the informer re-watches.
          if (err instanceof ApiError) throw err;
          if (signal?.aborted) return;
          return;
        } finally {
          if (!res.body.destroyed) res.body.destroy();
        }
      },
    };
  }

  createSubresource(name: string, subresource: string, body: unknown, opts?: WriteOptions): Promise<unknown> {
    return this.c.requestJson({ method: 'POST', path: this.path(this.ns, name, subresource), query: this.writeQuery(opts), body, ...this.sig(opts) });
  }

  updateSubresource(name: string, subresource: string, body: unknown, opts?: WriteOptions): Promise<unknown> {
    return this.c.requestJson({ method: 'PUT', path: this.path(this.ns, name, subresource), query: this.writeQuery(opts), body, ...this.sig(opts) });
  }

  getSubresource(name: string, subresource: string, opts: { signal?: AbortSignal; query?: Record<string, string> } = {}): Promise<unknown> {
    return this.c.requestJson({ path: this.path(this.ns, name, subresource), ...(opts.query ? { query: opts.query } : {}), ...this.sig(opts) });
  }
}

/** host:port of a server URL (client-go's url.Host), or the URL itself when it does not parse. */
function hostOf(server: string): string {
  try { return new URL(server).host; } catch { return server; }
}

/**
 * client-go's net.IsConnectionReset || net.IsProbableEOF, for undici and Node's errors: the peer
 * reset or closed the connection before an answer (also mid-TLS-handshake), or an unexpected EOF.
 */
export function isConnectionResetOrEOF(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') return true;
    const msg = String((e as { message?: unknown }).message ?? '');
    if (/socket hang up|other side closed|connection reset by peer|unexpected EOF|^EOF$|socket disconnected before secure TLS connection/i.test(msg)) return true;
  }
  return false;
}
