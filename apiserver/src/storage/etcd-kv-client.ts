/**
 * EtcdKvClient: unary calls to etcd's KV service (Range, Txn, Compact) as plain gRPC over
 * node:http2, with the hand-written codec of etcd-kv-codec.ts. Every create, get, update and delete
 * of the apiserver is one of these calls, and through the etcd3 library (cockatiel policies,
 * grpc-js' call stack, protobufjs, Long) one cost about twice the CPU of the same call made here:
 * on a 2-core machine shared with etcd that CPU is throughput. Watches stay on the etcd3 library.
 *
 * Connection behaviour follows etcd's clientv3: calls go round-robin over the endpoints (one
 * HTTP/2 connection each, opened on first use); a member that refuses connections is skipped for a
 * backoff; a call is retried on another member only when it cannot have reached etcd (connection
 * refused or reset before the request was sent) or when it is a read (clientv3's retry policy:
 * mutations are retried only when never sent). Connections are pinged every 30 s and dropped
 * when no answer comes in 10 s (the apiserver's etcd keepalive).
 */
import http2 from 'node:http2';
import { EventEmitter } from 'node:events';
import type { Logger } from '@mk8s/component-base';
import {
  decodeHeaderRevision, decodeRange, decodeTxn, encodeCompaction, encodeRange, encodeTxn,
  decodeWatchResponse, encodeWatchCreate, encodeWatchProgress,
  type RangeRequest, type RangeResponse, type TxnRequest, type TxnResponse, type WatchCreateRequest, type WatchResponse,
} from './etcd-kv-codec.js';

/** gRPC status codes the storage tells apart (grpc/status codes). */
export const GRPC_DEADLINE_EXCEEDED = 4;
export const GRPC_UNAVAILABLE = 14;

/** A failed etcd call: the gRPC status code and etcd's message (e.g. "etcdserver: request timed out"). */
export class EtcdCallError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
    this.name = 'EtcdCallError';
  }
}

export interface EtcdKvClientOptions {
  /** Client URLs (http:// or https://). */
  endpoints: string[];
  /** TLS towards etcd, PEM contents (with https:// endpoints). */
  credentials?: { rootCertificate: Buffer; certChain?: Buffer; privateKey?: Buffer };
  /** Deadline of each call, retries included. @default 10000 */
  requestTimeoutMs?: number;
  logger?: Logger;
  /** Keepalive ping interval and timeout. @default [30000, 10000] */
  keepaliveMs?: [interval: number, timeout: number];
}

const PATH = { range: '/etcdserverpb.KV/Range', txn: '/etcdserverpb.KV/Txn', compact: '/etcdserverpb.KV/Compact' } as const;
const headersFor = (path: string): http2.OutgoingHttpHeaders => ({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
const HEADERS: Record<keyof typeof PATH, http2.OutgoingHttpHeaders> = { range: headersFor(PATH.range), txn: headersFor(PATH.txn), compact: headersFor(PATH.compact) };
// hasleader: etcd ends the watch when its member loses the leader (clientv3.WithRequireLeader, as
// upstream's apiserver watches), so a partitioned member cannot leave a watch silently stale.
const WATCH_HEADERS: http2.OutgoingHttpHeaders = { ...headersFor('/etcdserverpb.Watch/Watch'), hasleader: 'true' };

// Large ranges (10,000 pods ≈ 10 MB) should not crawl through HTTP/2's 64 KiB default windows.
const STREAM_WINDOW = 4 << 20;
const SESSION_WINDOW = 32 << 20;
const DOWN_BACKOFF_MS: [number, number] = [500, 5_000];

/** One HTTP/2 connection; a stream that fails on a connection that never came up never reached etcd. */
interface Connection { session: http2.ClientHttp2Session; connected: boolean; inflight: number }

class Endpoint {
  conn: Connection | undefined;
  downUntil = 0;
  downBackoffMs = DOWN_BACKOFF_MS[0];
  pingPending = false;
  constructor(readonly url: string) {}
}

interface Pending { deadline: number; fail(err: Error): void }

/**
 * Contract: every method may be called concurrently; errors are EtcdCallError (gRPC code and
 * message) and a call never outlives requestTimeoutMs (then GRPC_DEADLINE_EXCEEDED; a timed-out
 * write may still have been applied). close() fails calls in flight.
 */
export class EtcdKvClient {
  private readonly endpoints: Endpoint[];
  private readonly connectOptions: http2.SecureClientSessionOptions;
  private readonly timeoutMs: number;
  private readonly log: Logger | undefined;
  private next = 0;
  private closed = false;
  private readonly pending = new Set<Pending>();
  private deadlineTimer: NodeJS.Timeout | undefined;
  private readonly keepaliveTimer: NodeJS.Timeout;
  private readonly keepaliveTimeoutMs: number;

  constructor(o: EtcdKvClientOptions) {
    if (o.endpoints.length === 0) throw new Error('EtcdKvClient: no endpoints');
    this.endpoints = o.endpoints.map((u) => new Endpoint(/^[a-z]+:\/\//.test(u) ? u : `http://${u}`));
    this.timeoutMs = o.requestTimeoutMs ?? 10_000;
    this.log = o.logger;
    this.connectOptions = {
      settings: { initialWindowSize: STREAM_WINDOW, enablePush: false },
      maxSessionMemory: 256,
      ...(o.credentials ? {
        ca: o.credentials.rootCertificate,
        ...(o.credentials.certChain ? { cert: o.credentials.certChain } : {}),
        ...(o.credentials.privateKey ? { key: o.credentials.privateKey } : {}),
      } : {}),
    };
    const [interval, timeout] = o.keepaliveMs ?? [30_000, 10_000];
    this.keepaliveTimeoutMs = timeout;
    this.keepaliveTimer = setInterval(() => this.keepalive(), interval).unref();
  }

  async range(r: RangeRequest): Promise<RangeResponse> {
    return decodeRange(await this.unary('range', encodeRange(r), true));
  }

  /** A txn; idempotent (a read-only txn or one the caller may safely repeat) allows retries after it may have reached etcd. */
  async txn(t: TxnRequest, idempotent = false): Promise<TxnResponse> {
    return decodeTxn(await this.unary('txn', encodeTxn(t), idempotent));
  }

  /** Compacts history before revision; resolves with the header revision. */
  async compact(revision: number, physical: boolean): Promise<number> {
    return decodeHeaderRevision(await this.unary('compact', encodeCompaction(revision, physical), true));
  }

  /**
   * Opens one Watch stream (bidirectional) on the next member. The caller writes create/progress
   * requests and gets decoded responses as 'data'; 'error' or 'end' ends the stream (the caller
   * reconnects). Never throws: a failed connection surfaces as 'error'.
   */
  watch(): EtcdWatchStream {
    const ep = this.pick();
    const out = new EtcdWatchStream();
    if (this.closed) { queueMicrotask(() => out.emit('error', new EtcdCallError(1, 'etcd client closed'))); return out; }
    let conn: Connection;
    let stream: http2.ClientHttp2Stream;
    try {
      conn = this.connectionOf(ep);
      stream = conn.session.request(WATCH_HEADERS);
    } catch (err) {
      this.markDown(ep);
      queueMicrotask(() => out.emit('error', new EtcdCallError(GRPC_UNAVAILABLE, `etcd ${ep.url}: ${(err as Error).message}`)));
      return out;
    }
    if (conn.inflight++ === 0) conn.session.ref();
    stream.once('close', () => { if (--conn.inflight === 0 && !conn.session.destroyed) conn.session.unref(); });
    out.attach(stream, () => { if (!conn.connected) this.markDown(ep); });
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepaliveTimer);
    if (this.deadlineTimer) clearInterval(this.deadlineTimer);
    for (const p of [...this.pending]) p.fail(new EtcdCallError(1, 'etcd client closed'));
    for (const e of this.endpoints) { e.conn?.session.destroy(); e.conn = undefined; }
  }

  private unary(method: keyof typeof PATH, body: Buffer, idempotent: boolean): Promise<Buffer> {
    if (this.closed) return Promise.reject(new EtcdCallError(1, 'etcd client closed'));
    return new Promise<Buffer>((resolve, reject) => {
      let settled = false;
      let current: http2.ClientHttp2Stream | undefined;
      let attempts = 0;
      const p: Pending = {
        deadline: Date.now() + this.timeoutMs,
        fail: (err) => { current?.close(http2.constants.NGHTTP2_CANCEL); finish(err); },
      };
      const finish = (err: Error | undefined, msg?: Buffer) => {
        if (settled) return;
        settled = true;
        this.pending.delete(p);
        if (err) reject(err); else resolve(msg!);
      };
      // Retries on the next member while attempts are left and the call allows it: never sent, or a
      // read that failed as unavailable.
      const retryOr = (err: EtcdCallError, neverSent: boolean) => {
        if (settled) return;
        const retriable = neverSent || (idempotent && err.code === GRPC_UNAVAILABLE);
        if (retriable && attempts < this.endpoints.length && !this.closed && Date.now() < p.deadline) attempt();
        else finish(err);
      };
      const attempt = () => {
        attempts++;
        const ep = this.pick();
        let conn: Connection;
        let stream: http2.ClientHttp2Stream;
        try {
          conn = this.connectionOf(ep);
          stream = conn.session.request(HEADERS[method]);
        } catch (err) {
          this.markDown(ep);
          retryOr(new EtcdCallError(GRPC_UNAVAILABLE, `etcd ${ep.url}: ${(err as Error).message}`), true);
          return;
        }
        current = stream;
        // Only calls in flight keep the process alive, not an idle connection.
        if (conn.inflight++ === 0) conn.session.ref();
        stream.once('close', () => { if (--conn.inflight === 0 && !conn.session.destroyed) conn.session.unref(); });
        let over = false;                                            // this attempt has reported
        const end = (err: EtcdCallError | undefined, neverSent: boolean, msg?: Buffer) => {
          if (over) return;
          over = true;
          if (err) retryOr(err, neverSent); else finish(undefined, msg);
        };
        let status: string | undefined;
        let message = '';
        const chunks: Buffer[] = [];
        const onHeaders = (h: http2.IncomingHttpHeaders) => {
          if (h['grpc-status'] !== undefined) { status = String(h['grpc-status']); message = grpcMessage(h['grpc-message']); }
        };
        stream.on('response', (h) => {
          const code = h[':status'];
          if (code !== 200) { status ??= String(GRPC_UNAVAILABLE); message ||= `etcd answered HTTP ${code}`; }
          onHeaders(h);
        });
        stream.on('trailers', onHeaders);
        stream.on('data', (d: Buffer) => chunks.push(d));
        stream.on('error', (err: Error) => {
          // A connection that never came up cannot have carried the request: another member can
          // take it, even a write.
          const neverSent = !conn.connected;
          if (neverSent) this.markDown(ep);
          end(new EtcdCallError(GRPC_UNAVAILABLE, `etcd ${ep.url}: ${err.message}`), neverSent);
        });
        stream.on('close', () => {
          if (over || settled) return;
          if (status === undefined) {
            // REFUSED_STREAM (e.g. streams past a GOAWAY) means etcd did not process it: retry anywhere.
            const refused = stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;
            end(new EtcdCallError(GRPC_UNAVAILABLE, `etcd ${ep.url}: stream closed without a status (${stream.rstCode})`), refused || !conn.connected);
            return;
          }
          if (status !== '0') { end(new EtcdCallError(Number(status), message || `gRPC status ${status}`), false); return; }
          const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
          if (all.length < 5 || all[0] !== 0 || all.length < 5 + all.readUInt32BE(1)) {
            end(new EtcdCallError(13, 'etcd: malformed gRPC response'), false);
            return;
          }
          end(undefined, false, all.subarray(5, 5 + all.readUInt32BE(1)));
        });
        stream.end(body);
      };
      this.pending.add(p);
      this.armDeadlines();
      attempt();
    });
  }

  /** Round-robin over the members not marked down (all of them when every one is). */
  private pick(): Endpoint {
    const n = this.endpoints.length;
    const now = Date.now();
    for (let i = 0; i < n; i++) {
      const ep = this.endpoints[(this.next + i) % n]!;
      if (ep.downUntil <= now) { this.next = (this.next + i + 1) % n; return ep; }
    }
    const ep = this.endpoints[this.next % n]!;
    this.next = (this.next + 1) % n;
    return ep;
  }

  private markDown(ep: Endpoint): void {
    ep.downUntil = Date.now() + ep.downBackoffMs;
    ep.downBackoffMs = Math.min(ep.downBackoffMs * 2, DOWN_BACKOFF_MS[1]);
  }

  private connectionOf(ep: Endpoint): Connection {
    const cur = ep.conn;
    if (cur && !cur.session.closed && !cur.session.destroyed) return cur;
    const session = http2.connect(ep.url, this.connectOptions);
    const conn: Connection = { session, connected: false, inflight: 0 };
    ep.conn = conn;
    const drop = () => { if (ep.conn === conn) ep.conn = undefined; };
    session.on('connect', () => {
      conn.connected = true;
      ep.downBackoffMs = DOWN_BACKOFF_MS[0];
      ep.downUntil = 0;
      try { session.setLocalWindowSize(SESSION_WINDOW); } catch { /* closing */ }
    });
    session.on('error', (err: Error) => { this.log?.debug({ err, endpoint: ep.url }, 'Etcd connection failed'); drop(); });
    session.on('goaway', drop);
    session.on('close', drop);
    // Only calls in flight keep the process alive, not an idle connection.
    session.unref();
    return conn;
  }

  /** One interval checks every call's deadline (cheaper than a timer per call). */
  private armDeadlines(): void {
    if (this.deadlineTimer) return;
    const tick = Math.max(10, Math.min(250, Math.floor(this.timeoutMs / 10)));
    this.deadlineTimer = setInterval(() => {
      if (this.pending.size === 0) { clearInterval(this.deadlineTimer); this.deadlineTimer = undefined; return; }
      const now = Date.now();
      for (const p of this.pending) if (p.deadline <= now) p.fail(new EtcdCallError(GRPC_DEADLINE_EXCEEDED, 'context deadline exceeded'));
    }, tick);
    this.deadlineTimer.unref();
  }

  private keepalive(): void {
    for (const ep of this.endpoints) {
      const c = ep.conn;
      if (!c || !c.connected || c.session.destroyed || ep.pingPending) continue;
      const s = c.session;
      ep.pingPending = true;
      const timer = setTimeout(() => {
        this.log?.warn({ endpoint: ep.url }, 'Etcd keepalive ping timed out, dropping the connection');
        s.destroy();
      }, this.keepaliveTimeoutMs).unref();
      const sent = s.ping((err) => {
        ep.pingPending = false;
        clearTimeout(timer);
        if (err && !s.destroyed) s.destroy();
      });
      if (!sent) { ep.pingPending = false; clearTimeout(timer); }
    }
  }
}

/** grpc-message is percent-encoded (gRPC over HTTP/2 spec). */
function grpcMessage(v: string | string[] | undefined): string {
  const s = Array.isArray(v) ? v.join(',') : v ?? '';
  try { return decodeURIComponent(s); } catch { return s; }
}

/**
 * One etcd Watch stream: write() create and progress requests; 'data' (WatchResponse), then 'end'
 * (etcd closed it cleanly) or 'error'. cancel() ends it from this side (no further events).
 */
export class EtcdWatchStream extends EventEmitter<{ data: [WatchResponse]; error: [Error]; end: [] }> {
  private stream: http2.ClientHttp2Stream | undefined;
  private pending: Buffer | undefined;                              // an incomplete message frame
  private over = false;

  /** @internal */
  attach(stream: http2.ClientHttp2Stream, onNeverConnected: () => void): void {
    this.stream = stream;
    let status: string | undefined;
    let message = '';
    const onHeaders = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] !== undefined) { status = String(h['grpc-status']); message = grpcMessage(h['grpc-message']); }
    };
    stream.on('response', onHeaders);
    stream.on('trailers', onHeaders);
    stream.on('data', (d: Buffer) => this.onData(d));
    stream.on('error', (err: Error) => { onNeverConnected(); this.finish(new EtcdCallError(GRPC_UNAVAILABLE, err.message)); });
    stream.on('close', () => {
      if (status !== undefined && status !== '0') this.finish(new EtcdCallError(Number(status), message || `gRPC status ${status}`));
      else this.finish();
    });
  }

  write(req: { create: WatchCreateRequest } | { progress: true }): void {
    if (this.over || !this.stream || this.stream.destroyed) return;
    this.stream.write('create' in req ? encodeWatchCreate(req.create) : encodeWatchProgress());
  }

  /** Ends the stream from this side; no more events are emitted. */
  cancel(): void {
    this.over = true;
    if (this.stream && !this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
  }

  private onData(d: Buffer): void {
    let buf = this.pending ? Buffer.concat([this.pending, d]) : d;
    this.pending = undefined;
    while (!this.over && buf.length >= 5) {
      const len = buf.readUInt32BE(1);
      if (buf.length < 5 + len) break;
      let res: WatchResponse;
      try {
        res = decodeWatchResponse(buf.subarray(5, 5 + len));
      } catch (err) {
        this.finish(new EtcdCallError(13, `etcd watch: ${(err as Error).message}`));
        this.cancel();
        return;
      }
      buf = buf.subarray(5 + len);
      this.emit('data', res);
    }
    if (buf.length > 0 && !this.over) this.pending = buf;
  }

  private finish(err?: Error): void {
    if (this.over) return;
    this.over = true;
    if (err) this.emit('error', err); else this.emit('end');
  }
}
