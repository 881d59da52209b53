/**
 * EtcdKvClient: the apiserver's calls to etcd's KV service (Range, Txn, Compact) and Watch streams,
 * on @grpc/grpc-js (one grpc.Client per member; unary calls on its Channel directly) with the protobufjs codec of etcd-kv-messages.ts.
 * Not the `etcd3` library's client: the retry rule for writes, `hasleader` watches that resume by
 * revision and number revisions are the storage's to state. CPU per call is grpc-js' call stack
 * either way (bench/README.md: about the etcd3 library's cost).
 *
 * Connection behaviour follows etcd's clientv3: calls go round-robin over the members; a member
 * whose connection cannot come up is skipped for a backoff; a call is retried on another member
 * only when it cannot have reached etcd (grpc-js' "No connection established": the channel never
 * got a connection to carry it) or when it is a read (clientv3's retry policy: mutations are
 * retried only when never sent). grpc-js itself retries streams that never started or that the
 * server refused (transparent retries). Connections are pinged every 30 s and dropped when no
 * answer comes in 10 s (the apiserver's etcd keepalive).
 */
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import type { Logger } from '@mk8s/component-base';
import {
  decodeCompaction, decodeRange, decodeTxn, decodeWatchResponse, encodeCompaction, encodeRange, encodeTxn, encodeWatchRequest,
  type CompactionRequest, type RangeRequest, type RangeResponse, type TxnRequest, type TxnResponse, type WatchRequest, type WatchResponse,
} from './etcd-kv-messages.js';

/** gRPC status codes the storage tells apart (grpc/status codes). */
export const GRPC_DEADLINE_EXCEEDED = grpc.status.DEADLINE_EXCEEDED;
export const GRPC_UNAVAILABLE = grpc.status.UNAVAILABLE;

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

const DOWN_BACKOFF_MS: [number, number] = [500, 5_000];
const CLOSED = 'etcd client closed';

/** A method of etcd's KV service: its path and codec. */
interface Method<Req, Res> { path: string; serialize: (r: Req) => Buffer; deserialize: (b: Buffer) => Res }
const RANGE: Method<RangeRequest, RangeResponse> = { path: '/etcdserverpb.KV/Range', serialize: encodeRange, deserialize: decodeRange };
const TXN: Method<TxnRequest, TxnResponse> = { path: '/etcdserverpb.KV/Txn', serialize: encodeTxn, deserialize: decodeTxn };
const COMPACT: Method<CompactionRequest, number> = { path: '/etcdserverpb.KV/Compact', serialize: encodeCompaction, deserialize: decodeCompaction };
const WATCH_PATH = '/etcdserverpb.Watch/Watch';

class Endpoint {
  downUntil = 0;
  downBackoffMs = DOWN_BACKOFF_MS[0];
  constructor(readonly url: string, readonly client: grpc.Client) {}
}

/**
 * Contract: every method may be called concurrently; errors are EtcdCallError (gRPC code and
 * message) and a call never outlives requestTimeoutMs (then GRPC_DEADLINE_EXCEEDED; a timed-out
 * write may still have been applied). close() fails calls in flight.
 */
export class EtcdKvClient {
  private readonly endpoints: Endpoint[];
  private readonly timeoutMs: number;
  private readonly log: Logger | undefined;
  private next = 0;
  private closed = false;
  private readonly inflight = new Set<UnaryCall<unknown> | grpc.ClientDuplexStream<WatchRequest, WatchResponse>>();

  constructor(o: EtcdKvClientOptions) {
    if (o.endpoints.length === 0) throw new Error('EtcdKvClient: no endpoints');
    this.timeoutMs = o.requestTimeoutMs ?? 10_000;
    this.log = o.logger;
    const [keepaliveTime, keepaliveTimeout] = o.keepaliveMs ?? [30_000, 10_000];
    const channelOptions: grpc.ChannelOptions = {
      'grpc.keepalive_time_ms': keepaliveTime,
      'grpc.keepalive_timeout_ms': keepaliveTimeout,
      // Unbounded responses as upstream's client (MaxCallRecvMsgSize = MaxInt32): a full range of
      // 10,000 pods is ~10 MB, over gRPC's 4 MiB default.
      'grpc.max_receive_message_length': -1,
      // Large ranges should not crawl through HTTP/2's 64 KiB default windows.
      'grpc-node.flow_control_window': 8 << 20,
      // A restarted member is reconnected within seconds (grpc's default backoff grows to 2 min).
      'grpc.initial_reconnect_backoff_ms': DOWN_BACKOFF_MS[0],
      'grpc.max_reconnect_backoff_ms': DOWN_BACKOFF_MS[1],
      // No channelz bookkeeping (per-call counters and traces nobody reads here).
      'grpc.enable_channelz': 0,
    };
    this.endpoints = o.endpoints.map((raw) => {
      const url = new URL(/^[a-z]+:\/\//.test(raw) ? raw : `http://${raw}`);
      const creds = url.protocol === 'https:'
        ? grpc.credentials.createSsl(o.credentials?.rootCertificate ?? null, o.credentials?.privateKey ?? null, o.credentials?.certChain ?? null)
        : grpc.credentials.createInsecure();
      return new Endpoint(url.href, new grpc.Client(url.host, creds, channelOptions));
    });
  }

  range(r: RangeRequest): Promise<RangeResponse> {
    return this.unary(RANGE, r, true);
  }

  /** A txn; idempotent (a read-only txn or one the caller may safely repeat) allows retries after it may have reached etcd. */
  txn(t: TxnRequest, idempotent = false): Promise<TxnResponse> {
    return this.unary(TXN, t, idempotent);
  }

  /** Compacts history before revision; resolves with the header revision. */
  compact(revision: number, physical: boolean): Promise<number> {
    return this.unary(COMPACT, { revision, physical }, true);
  }

  /**
   * Opens one Watch stream (bidirectional) on the next member. The caller writes create/progress
   * requests and gets decoded responses as 'data'; 'error' or 'end' ends the stream (the caller
   * reconnects). Never throws: a failed connection surfaces as 'error'.
   */
  watch(): EtcdWatchStream {
    const out = new EtcdWatchStream();
    if (this.closed) { queueMicrotask(() => out.emit('error', new EtcdCallError(grpc.status.CANCELLED, CLOSED))); return out; }
    const ep = this.pick();
    // hasleader: etcd ends the watch when its member loses the leader (clientv3.WithRequireLeader,
    // as upstream's apiserver watches), so a partitioned member cannot leave a watch silently stale.
    const md = new grpc.Metadata();
    md.set('hasleader', 'true');
    const call = ep.client.makeBidiStreamRequest<WatchRequest, WatchResponse>(WATCH_PATH, encodeWatchRequest, decodeWatchResponse, md);
    this.inflight.add(call);
    out.attach(call, (err) => {
      this.inflight.delete(call);
      if (err && neverConnected(err)) this.markDown(ep);
    });
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Cancelled calls report CANCELLED to their callbacks, which answer "closed".
    for (const c of [...this.inflight]) c.cancel();
    for (const e of this.endpoints) e.client.close();
  }

  private unary<Req, Res>(m: Method<Req, Res>, req: Req, idempotent: boolean): Promise<Res> {
    if (this.closed) return Promise.reject(new EtcdCallError(grpc.status.CANCELLED, CLOSED));
    const deadline = Date.now() + this.timeoutMs;
    const message = m.serialize(req);
    return new Promise<Res>((resolve, reject) => {
      let attempts = 0;
      const attempt = () => {
        attempts++;
        const ep = this.pick();
        let call: UnaryCall<Res> | undefined;
        const done = (err: CallStatus | null, res?: Res): void => {
          if (call) this.inflight.delete(call);
          if (!err) {
            if (ep.downBackoffMs !== DOWN_BACKOFF_MS[0]) ep.downBackoffMs = DOWN_BACKOFF_MS[0];
            resolve(res!);
            return;
          }
          if (this.closed) { reject(new EtcdCallError(grpc.status.CANCELLED, CLOSED)); return; }
          const neverSent = neverConnected(err);
          if (neverSent) this.markDown(ep);
          // Another member may take it when it never left (even a write), or when it is a read
          // that failed as unavailable; never after the deadline.
          const retriable = neverSent || (idempotent && err.code === grpc.status.UNAVAILABLE);
          if (retriable && attempts < this.endpoints.length && Date.now() < deadline) {
            this.log?.debug({ endpoint: ep.url, err: err.details }, 'Retrying etcd call on another member');
            attempt();
            return;
          }
          reject(new EtcdCallError(err.code, `etcd ${ep.url}: ${err.details}`));
        };
        try {
          call = new UnaryCall(ep.client.getChannel(), m.path, deadline, message, m.deserialize, done);
        } catch (err) {
          // grpc-js throws at once on a channel already shut down (a close() racing this call).
          reject(new EtcdCallError(grpc.status.CANCELLED, `etcd ${ep.url}: ${(err as Error).message}`));
          return;
        }
        this.inflight.add(call);
      };
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
}

type CallStatus = { code: number; details: string };

/**
 * One unary call on a grpc-js Channel's own call API (Channel.createCall: what grpc.Client builds
 * on), without the Client's interceptor and EventEmitter layers around it, which cost about a
 * tenth of the CPU of a call at the apiserver's create rate. The message goes out serialized; the
 * single answer is decoded here. Keeps grpc.Client's rules for a unary answer: exactly one message
 * with an OK status, a message that cannot be decoded fails the call as INTERNAL.
 */
class UnaryCall<Res> {
  private readonly call: ReturnType<grpc.ChannelInterface['createCall']>;
  private response: Res | undefined;
  private received = false;
  private failed: CallStatus | undefined;

  constructor(channel: grpc.ChannelInterface, path: string, deadline: number, message: Buffer, deserialize: (b: Buffer) => Res,
    done: (err: CallStatus | null, res?: Res) => void) {
    const call = this.call = channel.createCall(path, deadline, null, null, null);
    call.start(new grpc.Metadata(), {
      onReceiveMetadata: () => {},
      onReceiveMessage: (m: Buffer) => {
        if (this.received) { this.fail(grpc.status.UNIMPLEMENTED, 'Too many responses received'); return; }
        this.received = true;
        try { this.response = deserialize(m); } catch (e) { this.fail(grpc.status.INTERNAL, `Response message parsing error: ${(e as Error).message}`); }
      },
      onReceiveStatus: (st) => {
        if (this.failed) done(this.failed);
        else if (st.code !== grpc.status.OK) done({ code: st.code, details: st.details });
        else if (!this.received) done({ code: grpc.status.UNIMPLEMENTED, details: 'No message received' });
        else done(null, this.response);
      },
    });
    call.sendMessageWithContext({}, message);
    call.halfClose();
    call.startRead();
  }

  cancel(): void {
    this.call.cancelWithStatus(grpc.status.CANCELLED, 'Cancelled on client');
  }

  private fail(code: number, details: string): void {
    this.failed ??= { code, details };
    this.call.cancelWithStatus(code, details);
  }
}

/**
 * grpc-js fails a call with UNAVAILABLE "No connection established" when its channel has no
 * connection to put it on (connect refused or still failing): such a call never left this process.
 * Every other UNAVAILABLE (a connection dropped mid-call) may have reached etcd.
 */
function neverConnected(err: { code: number; details: string }): boolean {
  return err.code === grpc.status.UNAVAILABLE && err.details.includes('No connection established');
}

/**
 * One etcd Watch stream: write() create and progress requests; 'data' (WatchResponse), then 'end'
 * (etcd closed it cleanly) or 'error'. cancel() ends it from this side (no further events).
 */
export class EtcdWatchStream extends EventEmitter<{ data: [WatchResponse]; error: [Error]; end: [] }> {
  private call: grpc.ClientDuplexStream<WatchRequest, WatchResponse> | undefined;
  private over = false;

  /** @internal */
  attach(call: grpc.ClientDuplexStream<WatchRequest, WatchResponse>, onDone: (err?: grpc.ServiceError) => void): void {
    this.call = call;
    call.on('data', (res: WatchResponse) => { if (!this.over) this.emit('data', res); });
    // grpc-js reports every non-OK status as 'error' and an OK one as 'end' (etcd closed cleanly).
    call.on('error', (err: grpc.ServiceError) => {
      onDone(err);
      this.finish(new EtcdCallError(err.code, err.details || err.message));
    });
    call.on('end', () => { onDone(); this.finish(); });
  }

  write(req: WatchRequest): void {
    if (this.over || !this.call || this.call.writableEnded || this.call.destroyed) return;
    this.call.write(req);
  }

  /** Ends the stream from this side; no more events are emitted. */
  cancel(): void {
    if (this.over) return;
    this.over = true;
    this.call?.cancel();
  }

  private finish(err?: Error): void {
    if (this.over) return;
    this.over = true;
    if (err) this.emit('error', err); else this.emit('end');
  }
}
