/**
 * WatchCache: the in-memory state of one resource prefix (apiserver storage/cacher/watch_cache.go):
 * the current objects, a bounded ring of recent events, and the watchers fed from them. It is
 * synchronous and does no I/O; the Cacher feeds it from one underlying storage watch.
 *
 * Objects and events held here are shared by every watcher and list caller and are deep-frozen:
 * consumers must copy before changing anything.
 */
import type { KubeObject } from '@mk8s/api';
import { silentLogger, type Logger } from '@mk8s/component-base';
import type { StorageEvent } from './interfaces.js';
import { WatchQueue } from './watch-queue.js';
import { filterWatchEvent } from './filter.js';
import { parseResourceVersion, tooOldResourceVersion } from './keys.js';

export interface WatchCacheOptions {
  /** The resource prefix this cache holds, ending in '/' (`/registry/pods/`). */
  resourcePrefix: string;
  /** Events kept for watches that resume from a recent resourceVersion. @default 1000 */
  capacity?: number;
  /** Undelivered live events a watcher may have queued before it is ended (it then re-watches). @default 1000 */
  watcherBufferSize?: number;
  logger?: Logger;
}

export interface CacheWatchOptions {
  resourceVersion?: string | undefined;
  signal: AbortSignal;
  onProgress?: ((resourceVersion: string) => void) | undefined;
  predicate?: ((obj: KubeObject) => boolean) | undefined;
}

interface Entry { key: string; rv: number; event: StorageEvent }

interface CacheWatcher {
  prefix: string;
  predicate: ((obj: KubeObject) => boolean) | undefined;
  queue: WatchQueue;
  /** Events at or below this revision are not for this watcher (it started after them). */
  minRv: number;
  /** Newest revision announced to this watcher, by event or progress mark. */
  sentRv: number;
  limit: number;
  wantsProgress: boolean;
}

/** The storage key an object lives at, by the `/registry/<resource>/<ns>/<name>` convention. */
export function objectKey(resourcePrefix: string, obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return `${resourcePrefix}${ns ? `${ns}/` : ''}${obj.metadata.name}`;
}

export class WatchCache {
  readonly resourcePrefix: string;
  private readonly capacity: number;
  private readonly bufferSize: number;
  private readonly log: Logger;
  private readonly store = new Map<string, { obj: KubeObject; rv: number }>();
  /** The store's keys in order, rebuilt lazily after a key comes or goes (not on updates). */
  private sorted: string[] | undefined;
  private ring: (Entry | undefined)[];
  private start = 0;
  private count = 0;
  private rv = 0;
  /** Oldest revision a watch may resume from: everything after it is in the ring. */
  private oldestRv = 0;
  private readonly watchers = new Set<CacheWatcher>();

  constructor(opts: WatchCacheOptions) {
    this.resourcePrefix = opts.resourcePrefix;
    this.capacity = Math.max(1, opts.capacity ?? 1000);
    this.bufferSize = Math.max(1, opts.watcherBufferSize ?? 1000);
    this.log = opts.logger ?? silentLogger();
    this.ring = new Array<Entry | undefined>(this.capacity);
  }

  /** The revision the cache is current at. */
  get resourceVersion(): number { return this.rv; }
  get watcherCount(): number { return this.watchers.size; }
  get size(): number { return this.store.size; }

  /**
   * Replaces the whole state with a fresh list at revision rv and forgets the event history.
   * Every current watcher is ended with Expired: events between its position and rv are unknown.
   */
  replace(items: KubeObject[], rv: number): void {
    for (const w of this.watchers) w.queue.fail(tooOldResourceVersion(w.sentRv, rv));
    this.watchers.clear();
    this.store.clear();
    this.sorted = undefined;
    for (const obj of items) {
      deepFreeze(obj);
      this.store.set(objectKey(this.resourcePrefix, obj), { obj, rv: Number(obj.metadata.resourceVersion ?? rv) });
    }
    this.ring = new Array<Entry | undefined>(this.capacity);
    this.start = 0;
    this.count = 0;
    this.rv = rv;
    this.oldestRv = rv;
  }

  /** Applies one event from the underlying watch and fans it out. Events not newer than the cache are dropped. */
  process(event: StorageEvent): void {
    const rv = Number(event.resourceVersion);
    if (!(rv > this.rv)) {
      // Storage watches are monotonic; etcd 3.4.23 is known not to always be. Never go back in time.
      this.log.warn({ prefix: this.resourcePrefix, revision: rv, cacheRevision: this.rv }, 'Dropped watch event not newer than the cache');
      return;
    }
    deepFreeze(event);
    const key = event.key ?? objectKey(this.resourcePrefix, event.object);
    if (event.type === 'DELETED') {
      if (this.store.delete(key)) this.sorted = undefined;
    } else {
      if (!this.store.has(key)) this.sorted = undefined;
      this.store.set(key, { obj: event.object, rv });
    }
    this.rv = rv;
    if (this.count === this.capacity) {
      this.oldestRv = this.ring[this.start]!.rv;                       // evicted: no longer replayable
      this.start = (this.start + 1) % this.capacity;
      this.count--;
    }
    const entry: Entry = { key, rv, event };
    this.ring[(this.start + this.count) % this.capacity] = entry;
    this.count++;
    for (const w of this.watchers) this.dispatch(w, entry);
  }

  /** The underlying store vouched that nothing under the prefix changed up to rv. */
  progress(rv: number): void {
    if (rv > this.rv) this.rv = rv;
  }

  /** Sends a progress mark with the cache revision to every idle watcher that asked for them and is behind it. */
  sendProgress(): void {
    for (const w of this.watchers) {
      if (w.wantsProgress && w.queue.size === 0 && this.rv > w.sentRv) {
        w.sentRv = this.rv;
        w.queue.progress(String(this.rv));
      }
    }
  }

  /** The current object at key, if any (shared and frozen). */
  get(key: string): KubeObject | undefined {
    return this.store.get(key)?.obj;
  }

  /** Current objects under prefix passing predicate, sorted by key, and the cache revision. */
  list(prefix: string, predicate?: (obj: KubeObject) => boolean): { items: KubeObject[]; resourceVersion: string } {
    const items: KubeObject[] = [];
    for (const k of this.keysUnder(prefix)) {
      const obj = this.store.get(k)!.obj;
      if (!predicate || predicate(obj)) items.push(obj);
    }
    return { items, resourceVersion: String(this.rv) };
  }

  /** The keys under prefix in order: a binary search in the sorted keys, not a scan and sort per call. */
  private keysUnder(prefix: string): string[] {
    // Plain code-unit order, as the previous sort() and etcd's byte order for ASCII keys.
    const keys = this.sorted ??= [...this.store.keys()].sort();
    let lo = 0; let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid]! < prefix) lo = mid + 1; else hi = mid;
    }
    let end = lo;
    while (end < keys.length && keys[end]!.startsWith(prefix)) end++;
    return keys.slice(lo, end);
  }

  /**
   * Starts a watch: '0'/unset replays the current state as ADDED, 'N' replays the buffered events
   * after N (Expired if N is older than the ring). Returns the watcher's queue.
   */
  watch(prefix: string, opts: CacheWatchOptions, queue?: WatchQueue): WatchQueue {
    const q = queue ?? new WatchQueue({ signal: opts.signal, onProgress: opts.onProgress });
    if (q.done) return q;
    const w: CacheWatcher = {
      prefix, predicate: opts.predicate, queue: q, minRv: this.rv, sentRv: this.rv, limit: this.bufferSize, wantsProgress: !!opts.onProgress,
    };
    const rvParam = opts.resourceVersion;
    try {
      if (rvParam === undefined || rvParam === '' || rvParam === '0') {
        let initial = 0;
        for (const k of this.keysUnder(prefix)) {
          const { obj, rv } = this.store.get(k)!;
          if (w.predicate && !w.predicate(obj)) continue;
          q.push({ type: 'ADDED', object: obj, resourceVersion: String(rv), key: k });
          initial++;
        }
        w.limit += initial;                                            // the initial state does not count as lag
      } else {
        const rv = parseResourceVersion(rvParam);
        if (rv < this.oldestRv) throw tooOldResourceVersion(rv, this.oldestRv);
        w.minRv = rv;
        w.sentRv = rv;
        w.limit = Infinity;                                            // the replay does not count as lag either
        for (let i = 0; i < this.count; i++) this.dispatch(w, this.ring[(this.start + i) % this.capacity]!);
        w.limit = this.bufferSize + q.size;
      }
    } catch (err) {
      q.fail(err);
      return q;
    }
    if (q.done) return q;
    this.watchers.add(w);
    // The queue reports its own end (abort, consumer gone, overflow) so the watcher is dropped.
    q.onClosed(() => this.watchers.delete(w));
    return q;
  }

  /** Ends every watcher: with err, or cleanly (they re-watch from their last resourceVersion). */
  terminateAll(err?: unknown): void {
    for (const w of this.watchers) { if (err) w.queue.fail(err); else w.queue.end(); }
    this.watchers.clear();
  }

  private dispatch(w: CacheWatcher, e: Entry): void {
    if (e.rv <= w.minRv || !e.key.startsWith(w.prefix)) return;
    const out = filterWatchEvent(e.event, w.predicate);
    if (!out) return;
    if (w.queue.size >= w.limit) {
      // A slow watcher must not hold memory or block the others: end it; the client re-watches
      // from the last resourceVersion it saw (served from the ring if still there).
      this.log.info({ prefix: w.prefix, buffered: w.queue.size }, 'Ended slow watcher');
      this.watchers.delete(w);
      w.queue.end();
      return;
    }
    w.queue.push(out);
    w.sentRv = e.rv;
  }
}

function deepFreeze(o: unknown): void {
  if (o === null || typeof o !== 'object' || Object.isFrozen(o)) return;
  Object.freeze(o);
  for (const v of Object.values(o)) deepFreeze(v);
}
