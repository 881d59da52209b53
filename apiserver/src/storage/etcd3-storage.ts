/**
 * Etcd3Storage: Storage on etcd v3 (apiserver storage/etcd3/store.go). resourceVersion is the key's
 * mod_revision, a list's is the range's header revision; writes are compare-and-swap txns on
 * mod_revision. Watches own their gRPC stream so they can resume exactly after the last revision
 * delivered when a member dies, and defend against the watch bugs of etcd 3.4.23 (duplicate or
 * backwards revisions are dropped, never delivered).
 */
import { Etcd3, GRPCDeadlineExceededError, GRPCUnavailableError } from 'etcd3';
import { ApiError, errors, type KubeObject } from '@mk8s/api';
import { realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';
import type { GuaranteedUpdateOptions, Preconditions, Storage, StorageEvent, StorageList, StorageListOptions, StorageWatchOptions } from './interfaces.js';
import { WatchQueue } from './watch-queue.js';
import { filterWatchEvent } from './filter.js';
import { checkPreconditions } from './preconditions.js';
import { alreadyExists, notFound, parseResourceVersion, prefixEnd, tooOldResourceVersion } from './keys.js';
import { continueExpired, decodeContinue, encodeContinue } from './continue-token.js';
import { encode } from './memory-storage.js';
import { rememberJson, splitAtMetadata, withResourceVersion } from './encoded-json.js';
import { EtcdCallError, EtcdKvClient, GRPC_DEADLINE_EXCEEDED, GRPC_UNAVAILABLE, type EtcdWatchStream } from './etcd-kv-client.js';
import type { KeyValue, RangeResponse, WatchResponse } from './etcd-kv-messages.js';
import { IDENTITY_TRANSFORMER, type ValueTransformer } from './value-transformer.js';

export interface Etcd3StorageOptions {
  /** Client URLs; ignored when client is given. */
  endpoints?: string[];
  /** A client for watches (and the compactor) to use (and to close on close()); unary calls still go to endpoints. */
  client?: Etcd3;
  /**
   * TLS towards etcd (upstream --etcd-cafile/--etcd-certfile/--etcd-keyfile), PEM contents; the
   * endpoints are then https://. Ignored when client is given. @default plaintext
   */
  credentials?: { rootCertificate: Buffer; certChain?: Buffer; privateKey?: Buffer };
  /** Deadline for each unary etcd call. @default 10000 */
  requestTimeoutMs?: number;
  logger?: Logger;
  clock?: Clock;
  /** Watch reconnect backoff: starts at min, doubles up to max. @default [100, 2000] */
  watchBackoffMs?: [min: number, max: number];
  /**
   * What every value goes through on its way to and from etcd, watch events included (encryption
   * at rest: auth/encryption.ts). @default identity
   */
  transformer?: ValueTransformer;
}

/** Counters for tests and metrics: how many etcd watch streams this storage opened. */
export interface Etcd3StorageStats { watchesStarted: number; activeWatches: number; watchReconnects: number }

const MAX_PAGE = 10_000;

export class Etcd3Storage implements Storage {
  /** The etcd3 library's client, for the compactor (coordinated through compact_rev_key). */
  readonly client: Etcd3;
  /** KV calls and watch streams: grpc-js with etcd's .proto through protobufjs (etcd-kv-client.ts). */
  private readonly kv: EtcdKvClient;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly backoff: [number, number];
  private readonly stat: Etcd3StorageStats = { watchesStarted: 0, activeWatches: 0, watchReconnects: 0 };
  private readonly closers = new Set<() => void>();
  private readonly watches = new Set<EtcdWatch>();
  private readonly transformer: ValueTransformer;
  private readonly plain: boolean;

  constructor(opts: Etcd3StorageOptions) {
    const timeout = opts.requestTimeoutMs ?? 10_000;
    this.client = opts.client ?? new Etcd3({
      hosts: opts.endpoints ?? ['http://127.0.0.1:2379'],
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
      // The apiserver's etcd client keepalive (30 s / 10 s): a hung member must not hold a watch forever.
      // Unbounded responses as upstream's client (MaxCallRecvMsgSize = MaxInt32): a full range of
      // 10,000 pods is ~10 MB, over gRPC's 4 MiB default.
      grpcOptions: { 'grpc.keepalive_time_ms': 30_000, 'grpc.keepalive_timeout_ms': 10_000, 'grpc.max_receive_message_length': 2 ** 31 - 1 },
    });
    this.log = opts.logger ?? silentLogger();
    this.kv = new EtcdKvClient({
      endpoints: opts.endpoints ?? ['http://127.0.0.1:2379'], requestTimeoutMs: timeout, logger: this.log,
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
    });
    this.clock = opts.clock ?? realClock;
    this.backoff = opts.watchBackoffMs ?? [100, 2_000];
    this.transformer = opts.transformer ?? IDENTITY_TRANSFORMER;
    this.plain = this.transformer === IDENTITY_TRANSFORMER;
  }

  /** A stored value's plaintext JSON and whether its provider is not the current writer (upstream's stale). */
  private fromStorage(key: Buffer, value: Buffer): { data: string; stale: boolean } {
    if (this.plain) return { data: value.toString(), stale: false };
    const r = this.transformer.fromStorage(key.toString(), value);
    return { data: r.data.toString(), stale: r.stale };
  }

  /** @internal the object of a stored key-value (used by EtcdWatch too). */
  decodeKv(kv: KeyValue): KubeObject {
    return parse(this.fromStorage(kv.key, kv.value).data, String(kv.modRevision));
  }

  /** @internal a value to store under key. */
  toStorage(key: string, json: string): Buffer {
    return this.plain ? Buffer.from(json) : this.transformer.toStorage(key, Buffer.from(json));
  }

  get stats(): Readonly<Etcd3StorageStats> { return { ...this.stat }; }

  async create(key: string, obj: KubeObject): Promise<KubeObject> {
    const k = Buffer.from(key);
    const split = splitAtMetadata(obj);
    const value = split ? split.before + split.meta + split.after : encode(obj);
    const res = await call(() => this.kv.txn({
      compare: [{ key: k, target: 'Mod', result: 'Equal', operand: 0 }],
      success: [{ put: { key: k, value: this.toStorage(key, value) } }],
      failure: [],
    }));
    if (!res.succeeded) throw alreadyExists(key);
    // obj is exactly what was written (encode only drops resourceVersion): no need to parse it back.
    const rv = String(res.revision);
    const out = { ...obj, metadata: { ...obj.metadata, resourceVersion: rv } };
    // Its JSON is the stored JSON with resourceVersion appended to metadata: no second serialization.
    if (split) rememberJson(out, split.before + withResourceVersion(split.meta, rv) + split.after);
    return out;
  }

  async get(key: string): Promise<KubeObject> {
    const kv = await this.getKv(key);
    if (!kv) throw notFound(key);
    return this.decodeKv(kv);
  }

  async list(prefix: string, opts: StorageListOptions = {}): Promise<StorageList> {
    const end = prefixEnd(Buffer.from(prefix));
    let start = prefix;
    let revision: number | undefined;
    if (opts.continue) {
      const t = decodeContinue(opts.continue, prefix);
      start = t.startKey;
      revision = t.resourceVersion;
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const items: KubeObject[] = [];
    let batch = limit;
    let next: string | undefined;
    let remaining: number | undefined;
    for (;;) {
      let res: RangeResponse;
      try {
        res = await call(() => this.kv.range({ key: Buffer.from(start), rangeEnd: end, limit: batch, revision: revision ?? 0 }));
      } catch (err) {
        if (revision !== undefined && opts.continue && isCompacted(err)) throw continueExpired();
        throw err;
      }
      revision ??= res.revision;
      const kvs = res.kvs;
      let i = 0;
      for (; i < kvs.length && (limit === 0 || items.length < limit); i++) {
        const obj = this.decodeKv(kvs[i]!);
        if (!opts.predicate || opts.predicate(obj)) items.push(obj);
      }
      const last = kvs[i - 1];
      const moreHere = i < kvs.length;
      if (limit > 0 && items.length >= limit) {
        if ((moreHere || res.more) && last) {
          next = last.key.toString() + '\x00';
          if (!opts.predicate) remaining = res.count - i;
        }
        break;
      }
      if (!res.more || !last) break;
      start = last.key.toString() + '\x00';
      batch = Math.min(batch * 2, MAX_PAGE);                          // selective predicates: fetch wider, as upstream
    }
    const out: StorageList = { items, resourceVersion: String(revision) };
    if (next !== undefined) {
      out.continue = encodeContinue(next, prefix, revision);
      if (remaining !== undefined) out.remainingItemCount = remaining;
    }
    return out;
  }

  async guaranteedUpdate(key: string, tryUpdate: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>,
    opts: GuaranteedUpdateOptions = {}): Promise<KubeObject> {
    const k = Buffer.from(key);
    // As upstream's GuaranteedUpdate with the cacher's suggestion: the cached object saves the
    // quorum read; every way it can be stale ends in a real read and another try.
    let state = opts.suggestion ? this.suggested(opts.suggestion) : this.currentState(await this.getKv(key));
    for (;;) {
      if (!state.obj && !opts.ignoreNotFound) {
        if (!state.current) { state = this.currentState(await this.getKv(key)); continue; }
        throw notFound(key);
      }
      let next: KubeObject;
      try {
        if (state.obj) checkPreconditions(key, opts.preconditions, state.obj);
        next = await tryUpdate(state.obj);
      } catch (err) {
        if (!state.current) { state = this.currentState(await this.getKv(key)); continue; }
        throw err;
      }
      const value = encode(next);
      // Unchanged: no write, as upstream; unless the stored value is stale (plaintext from before
      // encryption, an older key): then it is written again under the current provider.
      if (state.obj && !state.stale && value === state.data) {
        if (!state.current) { state = this.currentState(await this.getKv(key)); continue; }
        return parse(state.data, String(state.modRevision));
      }
      const res = await call(() => this.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', operand: state.modRevision }],
        success: [{ put: { key: k, value: this.toStorage(key, value) } }],
        failure: [{ range: { key: k } }],
      }));
      if (res.succeeded) return parse(value, String(res.revision));
      state = this.currentState(res.responses[0]?.range?.kvs[0]);          // lost the race: retry on the fresh state
    }
  }

  /** The stored state of a key read from etcd (absent: modRevision 0). */
  private currentState(kv: KeyValue | undefined): UpdateState {
    if (!kv) return { current: true, modRevision: 0, data: '', stale: false };
    const plain = this.fromStorage(kv.key, kv.value);
    return { current: true, modRevision: kv.modRevision, data: plain.data, stale: plain.stale, obj: parse(plain.data, String(kv.modRevision)) };
  }

  /** The watch cache's copy as a state to try (a fresh copy: tryUpdate may change what it gets). */
  private suggested(cached: KubeObject): UpdateState {
    const data = encode(cached);
    const modRevision = Number(cached.metadata?.resourceVersion);
    if (!Number.isSafeInteger(modRevision) || modRevision <= 0) return { current: false, modRevision: -1, data: '', stale: false };
    return { current: false, modRevision, data, stale: false, obj: parse(data, String(modRevision)) };
  }

  async delete(key: string, opts: { preconditions?: Preconditions; validateDeletion?: (current: KubeObject) => void | Promise<void> } = {}): Promise<KubeObject> {
    const k = Buffer.from(key);
    let cur = await this.getKv(key);
    for (;;) {
      if (!cur) throw notFound(key);
      const curObj = this.decodeKv(cur);
      checkPreconditions(key, opts.preconditions, curObj);
      if (opts.validateDeletion) await opts.validateDeletion(this.decodeKv(cur));
      const res = await call(() => this.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', operand: cur!.modRevision }],
        success: [{ deleteRange: { key: k, prevKv: true } }],
        failure: [{ range: { key: k } }],
      }));
      if (res.succeeded) {
        const prev = res.responses[0]?.deleteRange?.prevKvs[0];
        return prev ? this.decodeKv(prev) : curObj;
      }
      cur = res.responses[0]?.range?.kvs[0];
    }
  }

  watch(prefix: string, opts: StorageWatchOptions): AsyncIterable<StorageEvent> {
    const w = new EtcdWatch(this, prefix, opts);
    return w.queue;
  }

  /**
   * Sends a progress_request on every open watch stream; etcd answers with an event-less response
   * at its current revision, which the watches report as progress (like the periodic notifications).
   */
  requestWatchProgress(): void {
    for (const w of this.watches) w.requestProgress();
  }

  /** Keys under prefix, counted by etcd without reading them (countOnly). */
  async count(prefix: string): Promise<number> {
    const res = await call(() => this.kv.range({ key: Buffer.from(prefix), rangeEnd: prefixEnd(Buffer.from(prefix)), countOnly: true }));
    return Number(res.count);
  }

  async currentResourceVersion(): Promise<string> {
    const res = await call(() => this.kv.range({ key: Buffer.from('\x00'), countOnly: true }));
    return String(res.revision);
  }

  /** Compacts etcd history before revision (upstream's compactor does this every 5 minutes). */
  async compact(revision: string | number): Promise<void> {
    try {
      await call(() => this.kv.compact(Number(revision), true));
    } catch (err) {
      if (!isCompacted(err)) throw err;                                  // already compacted further: fine
    }
  }

  async close(): Promise<void> {
    for (const c of [...this.closers]) c();
    this.kv.close();
    this.client.close();
  }

  private async getKv(key: string): Promise<KeyValue | undefined> {
    const res = await call(() => this.kv.range({ key: Buffer.from(key) }));
    return res.kvs[0];
  }

  /** @internal used by EtcdWatch */
  watchInternals() {
    return { client: this.client, kv: this.kv, log: this.log, clock: this.clock, backoff: this.backoff, stat: this.stat, closers: this.closers, watches: this.watches };
  }
}

/**
 * One Storage.watch: one etcd watch stream (its own gRPC call), reopened after a failure from the
 * revision after the last one delivered. Ends with Expired when that revision was compacted.
 */
class EtcdWatch {
  readonly queue: WatchQueue;
  private closed = false;
  private stream: EtcdWatchStream | undefined;
  /** The current stream has answered its create request (progress requests before that are pointless). */
  private streaming = false;
  private lastEventRev = 0;          // newest event revision delivered
  private lastProgressRev = 0;       // newest revision etcd vouched for with a progress notification
  private readonly key: Buffer;
  private readonly end: Buffer;
  private readonly i: ReturnType<Etcd3Storage['watchInternals']>;

  constructor(private readonly storage: Etcd3Storage, private readonly prefix: string, private readonly opts: StorageWatchOptions) {
    this.i = storage.watchInternals();
    this.key = Buffer.from(prefix);
    this.end = prefixEnd(this.key);
    const closer = () => this.queue.end();
    this.queue = new WatchQueue({
      signal: opts.signal,
      onProgress: opts.onProgress,
      onClose: () => { this.closed = true; this.i.closers.delete(closer); this.i.watches.delete(this); this.stream?.cancel(); },
    });
    if (this.queue.done) return;
    this.i.closers.add(closer);
    this.i.watches.add(this);
    this.run().catch((err: unknown) => this.queue.fail(err));
  }

  private async run(): Promise<void> {
    const rv = this.opts.resourceVersion;
    if (rv === undefined || rv === '0') {
      const res = await call(() => this.i.kv.range({ key: this.key, rangeEnd: this.end }));
      for (const kv of res.kvs) this.emit({ type: 'ADDED', object: this.storage.decodeKv(kv), resourceVersion: String(kv.modRevision), key: kv.key.toString() });
      this.lastEventRev = res.revision;
    } else {
      this.lastEventRev = parseResourceVersion(rv);
    }
    this.i.stat.watchesStarted++;
    this.i.stat.activeWatches++;
    try {
      let delay = this.i.backoff[0];
      while (!this.closed) {
        const connected = await this.streamOnce();
        if (this.closed) break;
        if (connected) delay = this.i.backoff[0];
        this.i.stat.watchReconnects++;
        this.i.log.warn({ prefix: this.prefix, fromRevision: this.nextRev(), delayMs: delay }, 'Lost etcd watch stream, reconnecting');
        await this.i.clock.sleep(delay, this.opts.signal).catch(() => undefined);
        delay = Math.min(delay * 2, this.i.backoff[1]);
      }
    } finally {
      this.i.stat.activeWatches--;
    }
  }

  requestProgress(): void {
    if (!this.streaming || this.closed) return;
    this.stream?.write({ progress: true });
  }

  private nextRev(): number { return Math.max(this.lastEventRev, this.lastProgressRev) + 1; }

  /** Runs one gRPC watch stream until it breaks; resolves whether it got as far as being created. Throws Expired. */
  private async streamOnce(): Promise<boolean> {
    const stream = this.i.kv.watch();
    if (this.closed) { stream.on('error', () => undefined); stream.cancel(); return false; }
    this.stream = stream;
    this.streaming = false;
    const startRev = this.nextRev();
    let created = false;
    return new Promise<boolean>((resolve, reject) => {
      let settled = false;
      const finish = (err?: unknown) => {
        if (settled) return;
        settled = true;
        this.streaming = false;
        stream.on('error', () => undefined);                              // late errors after cancel
        stream.cancel();
        if (err) reject(err); else resolve(created);
      };
      stream.on('data', (res: WatchResponse) => {
        if (settled) return;
        try {
          if (res.compactRevision) {
            finish(tooOldResourceVersion(startRev - 1, String(res.compactRevision)));
            return;
          }
          if (res.created) { created = true; this.streaming = true; if (!res.canceled) return; }
          if (res.canceled) {
            this.i.log.warn({ prefix: this.prefix, reason: res.cancelReason }, 'Etcd canceled watch');
            finish();
            return;
          }
          this.handle(res);
        } catch (err) {
          finish(err);
        }
      });
      stream.on('error', (err: Error) => { this.i.log.debug({ err }, 'Etcd watch stream failed'); finish(); });
      stream.on('end', () => finish());
      stream.write({ create: { key: this.key, rangeEnd: this.end, startRevision: startRev, prevKv: true, progressNotify: true } });
    });
  }

  private handle(res: WatchResponse): void {
    if (res.events.length === 0) {
      // Progress notification: every event up to header.revision has been sent.
      const rev = res.revision;
      if (rev > this.lastProgressRev && rev >= this.lastEventRev) {
        this.lastProgressRev = rev;
        this.queue.progress(String(rev));
      }
      return;
    }
    const floor = this.lastEventRev;                                     // events of one revision share a response
    for (const e of res.events) {
      const rev = e.kv.modRevision;
      if (rev <= floor) {
        this.i.log.warn({ prefix: this.prefix, revision: rev, lastRevision: floor }, 'Dropped duplicate or backwards etcd watch event');
        continue;
      }
      if (rev <= this.lastProgressRev) {
        // etcd vouched for this revision already; delivering it now would break bookmarks. Reset.
        throw errors.expired(`too old resource version: ${rev} (${this.lastProgressRev})`);
      }
      this.lastEventRev = rev;
      const resourceVersion = String(rev);
      const key = e.kv.key.toString();
      if (e.type === 'Delete') {
        const object = e.prevKv ? this.storage.decodeKv({ ...e.prevKv, modRevision: rev }) : stub(key, resourceVersion);
        const ev: StorageEvent = { type: 'DELETED', object, resourceVersion, key };
        if (e.prevKv) ev.prevObject = this.storage.decodeKv(e.prevKv);
        this.emit(ev);
      } else if (e.kv.createRevision === e.kv.modRevision) {
        this.emit({ type: 'ADDED', object: this.storage.decodeKv(e.kv), resourceVersion, key });
      } else {
        const ev: StorageEvent = { type: 'MODIFIED', object: this.storage.decodeKv(e.kv), resourceVersion, key };
        if (e.prevKv) ev.prevObject = this.storage.decodeKv(e.prevKv);
        this.emit(ev);
      }
    }
  }

  private emit(ev: StorageEvent): void {
    const out = filterWatchEvent(ev, this.opts.predicate);
    if (out) this.queue.push(out);
  }
}

/** One try of guaranteedUpdate: the state tryUpdate sees and the revision the write compares against. */
interface UpdateState {
  /** Read from etcd just now (false: the watch cache's suggestion). */
  current: boolean;
  modRevision: number;
  /** The stored JSON (decrypted); '' when absent. */
  data: string;
  /** Stored under an old encryption provider (or plaintext): rewrite even when unchanged. */
  stale: boolean;
  obj?: KubeObject;
}

function parse(value: string, rev: string): KubeObject {
  const obj = JSON.parse(value) as KubeObject;
  // Freshly parsed, so ours to change: set the field rather than copy metadata.
  if (typeof obj.metadata === 'object' && obj.metadata !== null) obj.metadata.resourceVersion = String(rev);
  else obj.metadata = { resourceVersion: String(rev) } as KubeObject['metadata'];
  return obj;
}

/** A DELETED whose previous value etcd no longer has (compacted): name and namespace from the key. */
function stub(key: string, rev: string): KubeObject {
  const segs = key.split('/').filter(Boolean);
  const name = segs[segs.length - 1] ?? key;
  const meta: KubeObject['metadata'] = { name, resourceVersion: rev };
  if (segs.length >= 4) meta.namespace = segs[segs.length - 2]!;
  return { metadata: meta };
}

const isCompacted = (err: unknown) => err instanceof Error && err.message.includes('required revision has been compacted');

/** Maps etcd client errors onto API errors (upstream storage/etcd3 interpretListError & co). */
async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError || !(err instanceof Error)) throw err;
    const msg = err.message;
    if (msg.includes('required revision has been compacted')) throw errors.expired(msg);
    if (msg.includes('request is too large')) throw new ApiError('RequestEntityTooLarge', `etcdserver: request is too large`);
    // A timed-out write may still have been applied: 504 says "unknown", never "failed".
    if (err instanceof EtcdCallError && err.code === GRPC_DEADLINE_EXCEEDED) {
      throw new ApiError('Timeout', `etcd request timed out: ${msg}`, { details: { retryAfterSeconds: 1 } });
    }
    if (err instanceof EtcdCallError && err.code === GRPC_UNAVAILABLE) {
      throw new ApiError('ServiceUnavailable', `etcd cluster is unavailable: ${msg}`, { details: { retryAfterSeconds: 1 } });
    }
    if (err instanceof GRPCDeadlineExceededError || /deadline exceeded|request timed out/i.test(msg)) {
      throw new ApiError('Timeout', `etcd request timed out: ${msg}`, { details: { retryAfterSeconds: 1 } });
    }
    if (err instanceof GRPCUnavailableError || /no leader/i.test(msg)) {
      throw new ApiError('ServiceUnavailable', `etcd cluster is unavailable: ${msg}`, { details: { retryAfterSeconds: 1 } });
    }
    throw errors.internal(msg);
  }
}
