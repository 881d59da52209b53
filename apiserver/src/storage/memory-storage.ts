/**
 * MemoryStorage: an in-process Storage with etcd's revision model (one global revision, per-key
 * create/mod revisions, history until compaction), for unit tests and the apiserver's fast tests.
 * Pinned to Etcd3Storage's behaviour by defineStorageConformance. Objects are stored as JSON text,
 * so callers always get private copies, as from etcd.
 */
import type { KubeObject } from '@mk8s/api';
import type { Clock } from '@mk8s/component-base';
import type { GuaranteedUpdateOptions, Preconditions, Storage, StorageEvent, StorageList, StorageListOptions, StorageWatchOptions } from './interfaces.js';
import { WatchQueue } from './watch-queue.js';
import { filterWatchEvent } from './filter.js';
import { checkPreconditions } from './preconditions.js';
import { alreadyExists, notFound, parseResourceVersion, tooOldResourceVersion } from './keys.js';
import { continueExpired, decodeContinue, encodeContinue } from './continue-token.js';

interface Entry { value: string; createRev: number; modRev: number }
interface Change { rev: number; key: string; next: Entry | undefined; prev: Entry | undefined }
interface MemWatcher { prefix: string; queue: WatchQueue; predicate: ((o: KubeObject) => boolean) | undefined }

export interface MemoryStorageOptions {
  /** With progressIntervalMs: emits progress marks to watchers that asked for them. */
  clock?: Clock;
  progressIntervalMs?: number;
}

export class MemoryStorage implements Storage {
  private rev = 1;                     // etcd starts an empty store at revision 1
  private compactRev = 0;
  private readonly data = new Map<string, Entry>();
  private history: Change[] = [];
  private readonly watchers = new Set<MemWatcher>();
  private cancelTicker: (() => void) | undefined;

  constructor(private readonly opts: MemoryStorageOptions = {}) {}

  async create(key: string, obj: KubeObject): Promise<KubeObject> {
    if (this.data.has(key)) throw alreadyExists(key);
    const entry = this.write(key, encode(obj));
    return decode(entry);
  }

  async get(key: string): Promise<KubeObject> {
    const e = this.data.get(key);
    if (!e) throw notFound(key);
    return decode(e);
  }

  async list(prefix: string, opts: StorageListOptions = {}): Promise<StorageList> {
    let rev = this.rev;
    let start = prefix;
    if (opts.continue) {
      const t = decodeContinue(opts.continue, prefix);
      if (t.resourceVersion < this.compactRev) throw continueExpired();
      rev = t.resourceVersion;
      start = t.startKey;
    }
    const snapshot = this.snapshotAt(rev);
    const keys = [...snapshot.keys()].filter((k) => k.startsWith(prefix) && k >= start).sort();
    const limit = opts.limit ?? 0;
    const items: KubeObject[] = [];
    let i = 0;
    for (; i < keys.length && (limit <= 0 || items.length < limit); i++) {
      const obj = decode(snapshot.get(keys[i]!)!);
      if (!opts.predicate || opts.predicate(obj)) items.push(obj);
    }
    const out: StorageList = { items, resourceVersion: String(rev) };
    if (limit > 0 && i < keys.length) {
      out.continue = encodeContinue(keys[i - 1]! + '\x00', prefix, rev);
      if (!opts.predicate) out.remainingItemCount = keys.length - i;
    }
    return out;
  }

  async guaranteedUpdate(key: string, tryUpdate: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>,
    opts: GuaranteedUpdateOptions = {}): Promise<KubeObject> {
    for (;;) {
      const cur = this.data.get(key);
      if (!cur && !opts.ignoreNotFound) throw notFound(key);
      const curObj = cur ? decode(cur) : undefined;
      if (curObj) checkPreconditions(key, opts.preconditions, curObj);
      const next = await tryUpdate(curObj);
      if (this.data.get(key) !== cur) continue;            // a concurrent write won: re-run tryUpdate
      const value = encode(next);
      if (cur && value === cur.value) return decode(cur);  // no change, no new revision (upstream)
      return decode(this.write(key, value));
    }
  }

  async delete(key: string, opts: { preconditions?: Preconditions; validateDeletion?: (current: KubeObject) => void | Promise<void> } = {}): Promise<KubeObject> {
    for (;;) {
      const cur = this.data.get(key);
      if (!cur) throw notFound(key);
      const curObj = decode(cur);
      checkPreconditions(key, opts.preconditions, curObj);
      if (opts.validateDeletion) await opts.validateDeletion(decode(cur));
      if (this.data.get(key) !== cur) continue;
      this.write(key, undefined);
      return curObj;
    }
  }

  watch(prefix: string, opts: StorageWatchOptions): AsyncIterable<StorageEvent> {
    const w: MemWatcher = { prefix, predicate: opts.predicate, queue: undefined as unknown as WatchQueue };
    w.queue = new WatchQueue({ signal: opts.signal, onProgress: opts.onProgress, onClose: () => { this.watchers.delete(w); this.stopTickerIfIdle(); } });
    if (w.queue.done) return w.queue;
    try {
      if (opts.resourceVersion === undefined || opts.resourceVersion === '0') {
        for (const k of [...this.data.keys()].filter((k) => k.startsWith(prefix)).sort()) {
          deliver(w, { type: 'ADDED', object: decode(this.data.get(k)!), resourceVersion: String(this.data.get(k)!.modRev), key: k });
        }
      } else {
        const rv = parseResourceVersion(opts.resourceVersion);
        if (rv + 1 < this.compactRev) throw tooOldResourceVersion(rv, this.compactRev);
        for (const c of this.history) if (c.rev > rv && c.key.startsWith(prefix)) deliver(w, toEvent(c));
      }
    } catch (err) {
      w.queue.fail(err);
      return w.queue;
    }
    this.watchers.add(w);
    this.startTicker();
    return w.queue;
  }

  async currentResourceVersion(): Promise<string> { return String(this.rev); }
  async count(prefix: string): Promise<number> { let n = 0; for (const k of this.data.keys()) if (k.startsWith(prefix)) n++; return n; }

  async close(): Promise<void> {
    for (const w of this.watchers) w.queue.end();
    this.watchers.clear();
    this.cancelTicker?.();
    this.cancelTicker = undefined;
  }

  /** Test hook: discards history before revision (etcd compaction); older watches/continues get Expired. */
  compact(revision: number | string): void {
    const r = Number(revision);
    if (r <= this.compactRev) return;
    this.compactRev = Math.min(r, this.rev);
    this.history = this.history.filter((c) => c.rev >= this.compactRev);   // etcd keeps the compaction revision itself
  }

  /** Test hook: sends a progress mark with the current revision to every watcher. */
  requestWatchProgress(): void { this.notifyProgress(); }

  notifyProgress(): void {
    for (const w of this.watchers) w.queue.progress(String(this.rev));
  }

  private write(key: string, value: string | undefined): Entry {
    const prev = this.data.get(key);
    const rev = ++this.rev;
    const next = value === undefined ? undefined : { value, createRev: prev?.createRev ?? rev, modRev: rev };
    if (next) this.data.set(key, next); else this.data.delete(key);
    const change: Change = { rev, key, next, prev };
    this.history.push(change);
    let ev: StorageEvent | undefined;
    for (const w of this.watchers) {
      if (!key.startsWith(w.prefix)) continue;
      ev ??= toEvent(change);
      deliver(w, ev);
    }
    return next ?? prev!;
  }

  /** The key space as of revision rev: current data with later changes undone. */
  private snapshotAt(rev: number): Map<string, Entry> {
    const snap = new Map(this.data);
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rev > rev; i--) {
      const c = this.history[i]!;
      if (c.prev) snap.set(c.key, c.prev); else snap.delete(c.key);
    }
    return snap;
  }

  private startTicker(): void {
    const { clock, progressIntervalMs } = this.opts;
    if (!clock || !progressIntervalMs || this.cancelTicker) return;
    const tick = () => { this.notifyProgress(); this.cancelTicker = clock.setTimeout(tick, progressIntervalMs); };
    this.cancelTicker = clock.setTimeout(tick, progressIntervalMs);
  }

  private stopTickerIfIdle(): void {
    if (this.watchers.size > 0) return;
    this.cancelTicker?.();
    this.cancelTicker = undefined;
  }
}

function deliver(w: MemWatcher, ev: StorageEvent): void {
  // Each watcher gets its own copies, as each etcd watch decodes its own.
  const own: StorageEvent = { ...ev, object: structuredClone(ev.object) };
  if (ev.prevObject) own.prevObject = structuredClone(ev.prevObject);
  const out = filterWatchEvent(own, w.predicate);
  if (out) w.queue.push(out);
}

function toEvent(c: Change): StorageEvent {
  const resourceVersion = String(c.rev);
  const key = c.key;
  if (!c.next) return { type: 'DELETED', object: decode(c.prev!, c.rev), prevObject: decode(c.prev!), resourceVersion, key };
  if (!c.prev) return { type: 'ADDED', object: decode(c.next), resourceVersion, key };
  return { type: 'MODIFIED', object: decode(c.next), prevObject: decode(c.prev), resourceVersion, key };
}

/** Stored form: the object without resourceVersion (etcd's mod revision is the truth). */
export function encode(obj: KubeObject): string {
  const { resourceVersion: _rv, ...metadata } = obj.metadata ?? ({} as KubeObject['metadata']);
  return JSON.stringify({ ...obj, metadata });
}

function decode(e: Entry, rev = e.modRev): KubeObject {
  const obj = JSON.parse(e.value) as KubeObject;
  obj.metadata = { ...obj.metadata, resourceVersion: String(rev) };
  return obj;
}
