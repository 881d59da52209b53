/**
 * Cacher: a Storage that serves watches (and resourceVersion=0 lists) from memory
 * (apiserver storage/cacher). Per resource prefix it runs ONE list+watch against the underlying
 * storage and fans the events out to every API watcher through a WatchCache, so etcd load does not
 * grow with the number of watchers. Writes, gets and consistent lists go straight to the
 * underlying storage. Objects it hands out are shared and deep-frozen: copy before changing.
 */
import { setMaxListeners } from 'node:events';
import { ApiError, isResourceExpired, type KubeObject } from '@mk8s/api';
import { realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';
import type { GuaranteedUpdateOptions, Preconditions, Storage, StorageEvent, StorageGetOptions, StorageList, StorageListOptions, StorageWatchOptions } from './interfaces.js';
import { WatchCache } from './watch-cache.js';
import { WatchQueue } from './watch-queue.js';
import { notFound, resourcePrefixOf } from './keys.js';

export interface CacherOptions {
  /** The storage to cache (Etcd3Storage in production). Closed by close(). */
  storage: Storage;
  /** Maps a key or watch prefix to the resource prefix that gets one cache. @default resourcePrefixOf */
  resourcePrefixOf?: (keyOrPrefix: string) => string;
  /** Events kept per resource for watches that resume from a recent resourceVersion. @default 1000 */
  capacity?: number;
  /** Undelivered events a watcher may lag behind before it is ended. @default 1000 */
  watcherBufferSize?: number;
  /** How often idle watchers that asked for progress get one. @default 5000 */
  progressIntervalMs?: number;
  /** How long a watch or an RV=0 list waits for a resource's first list. @default 10000 */
  readyTimeoutMs?: number;
  /**
   * Serve consistent lists (no resourceVersion, no limit/continue) from the cache once it has
   * caught up with the store's current revision (upstream 1.31+ ConsistentListFromCache).
   * @default true
   */
  consistentListFromCache?: boolean;
  /** How long a consistent list waits for the cache to catch up before reading the store. @default 3000 */
  consistentReadTimeoutMs?: number;
  /** Backoff between failed underlying lists/watches. @default [200, 5000] */
  retryBackoffMs?: [min: number, max: number];
  clock?: Clock;
  logger?: Logger;
}

interface Resource {
  prefix: string;
  cache: WatchCache;
  ready: boolean;
  readyPromise: Promise<void>;
  markReady: () => void;
  /** Consistent lists waiting for the cache to reach a revision. */
  waiters: { rv: number; resolve: (ok: boolean) => void }[];
}

export class Cacher implements Storage {
  private readonly storage: Storage;
  private readonly prefixOf: (k: string) => string;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly resources = new Map<string, Resource>();
  private readonly stop = new AbortController();
  private cancelTick: (() => void) | undefined;

  constructor(private readonly opts: CacherOptions) {
    this.storage = opts.storage;
    this.prefixOf = opts.resourcePrefixOf ?? resourcePrefixOf;
    this.clock = opts.clock ?? unrefClock;
    this.log = opts.logger ?? silentLogger();
    setMaxListeners(0, this.stop.signal);                              // one underlying watch + backoff per resource
    this.scheduleTick();
  }

  create(key: string, obj: KubeObject): Promise<KubeObject> { return this.storage.create(key, obj); }
  /**
   * resourceVersion '0': from the cache once it is initialized (NotFound if the cache does not
   * have it), as upstream; anything else reads the underlying storage.
   */
  async get(key: string, opts?: StorageGetOptions): Promise<KubeObject> {
    if (opts?.resourceVersion === '0') {
      const r = this.resource(key);
      if (r.ready) {
        const obj = r.cache.get(key);
        if (!obj) throw notFound(key);
        return obj;
      }
    }
    return this.storage.get(key);
  }
  guaranteedUpdate(key: string, tryUpdate: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>,
    opts?: GuaranteedUpdateOptions): Promise<KubeObject> {
    // As upstream's Cacher: the cached object as the suggestion, so an update needs no read first.
    const r = this.resources.get(this.prefixOf(key));
    const cached = r?.ready && !opts?.suggestion ? r.cache.get(key) : undefined;
    return this.storage.guaranteedUpdate(key, tryUpdate, cached ? { ...opts, suggestion: cached } : opts);
  }
  delete(key: string, opts?: { preconditions?: Preconditions; validateDeletion?: (current: KubeObject) => void | Promise<void> }): Promise<KubeObject> {
    return this.storage.delete(key, opts);
  }
  currentResourceVersion(): Promise<string> { return this.storage.currentResourceVersion(); }
  /** From the resource's cache once it is initialized (no etcd round trip per scrape), else the underlying storage's count. */
  async count(prefix: string): Promise<number> {
    const r = this.resources.get(this.prefixOf(prefix));
    if (r?.ready && this.prefixOf(prefix) === prefix) return r.cache.size;
    if (!this.storage.count) throw new Error('the underlying storage cannot count');
    return this.storage.count(prefix);
  }

  /**
   * resourceVersion '0' without continue: served from the cache (limit ignored, as upstream).
   * No resourceVersion, limit or continue: a consistent read, from the cache when it has reached
   * the store's current revision (so it reflects every write acknowledged before the list),
   * else from the underlying storage. Anything else reads the underlying storage.
   */
  async list(prefix: string, opts: StorageListOptions = {}): Promise<StorageList> {
    if (opts.resourceVersion === undefined && !opts.continue && !opts.limit && this.opts.consistentListFromCache !== false) {
      const r = this.resource(prefix);
      if (r.ready) {
        const rev = Number(await this.storage.currentResourceVersion());
        if (await this.waitFresh(r, rev)) return r.cache.list(prefix, opts.predicate);
      }
      return this.storage.list(prefix, opts);
    }
    if (opts.resourceVersion !== '0' || opts.continue) return this.storage.list(prefix, opts);
    const r = this.resource(prefix);
    try {
      await this.waitReady(r, undefined);
    } catch {
      return this.storage.list(prefix, opts);                          // cache not initialized yet: ask etcd
    }
    return r.cache.list(prefix, opts.predicate);
  }

  /** Served from the resource's cache; never opens another underlying watch. */
  watch(prefix: string, opts: StorageWatchOptions): AsyncIterable<StorageEvent> {
    const queue = new WatchQueue({ signal: opts.signal, onProgress: opts.onProgress });
    if (queue.done) return queue;
    const r = this.resource(prefix);
    this.waitReady(r, opts.signal).then(
      () => { r.cache.watch(prefix, opts, queue); },
      (err: unknown) => queue.fail(err),
    );
    return queue;
  }

  /** Starts caching the resource that prefix belongs to now instead of on first use; resolves when it is initialized. */
  async warm(prefix: string): Promise<void> {
    await this.resource(prefix).readyPromise;
  }

  /** Number of resource caches (= underlying watches) and API watchers. */
  stats(): { resources: number; watchers: number } {
    let watchers = 0;
    for (const r of this.resources.values()) watchers += r.cache.watcherCount;
    return { resources: this.resources.size, watchers };
  }

  /** Stops every cache, ends every watcher, and closes the underlying storage. */
  async close(): Promise<void> {
    this.stop.abort();
    this.cancelTick?.();
    for (const r of this.resources.values()) r.cache.terminateAll();
    await this.storage.close();
  }

  private resource(keyOrPrefix: string): Resource {
    const prefix = this.prefixOf(keyOrPrefix);
    let r = this.resources.get(prefix);
    if (r) return r;
    const cacheOpts: ConstructorParameters<typeof WatchCache>[0] = { resourcePrefix: prefix, logger: this.log };
    if (this.opts.capacity !== undefined) cacheOpts.capacity = this.opts.capacity;
    if (this.opts.watcherBufferSize !== undefined) cacheOpts.watcherBufferSize = this.opts.watcherBufferSize;
    r = { prefix, cache: new WatchCache(cacheOpts), ready: false, readyPromise: Promise.resolve(), markReady: () => undefined, waiters: [] };
    this.resetReady(r);
    this.resources.set(prefix, r);
    const res = r;
    this.reflect(res).catch((err: unknown) => this.log.error({ err, prefix }, 'Watch cache stopped'));
    return r;
  }

  /** Resolves true once r's cache is at rev or newer; false on timeout or relist (caller reads the store). */
  private waitFresh(r: Resource, rev: number): Promise<boolean> {
    if (r.cache.resourceVersion >= rev) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let cancel: (() => void) | undefined;
      const waiter = { rv: rev, resolve: (ok: boolean) => { cancel?.(); resolve(ok); } };
      r.waiters.push(waiter);
      cancel = this.clock.setTimeout(() => {
        r.waiters = r.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, this.opts.consistentReadTimeoutMs ?? 3_000);
      // An idle resource's cache only advances on progress: ask for it now rather than in 5 s.
      this.storage.requestWatchProgress?.();
    });
  }

  /** Wakes the consistent lists the cache of r has caught up for (after an event or progress). */
  private advanced(r: Resource): void {
    if (r.waiters.length === 0) return;
    const rv = r.cache.resourceVersion;
    const done = r.waiters.filter((w) => w.rv <= rv);
    if (done.length === 0) return;
    r.waiters = r.waiters.filter((w) => w.rv > rv);
    for (const w of done) w.resolve(r.ready);
  }

  private resetReady(r: Resource): void {
    r.ready = false;
    r.readyPromise = new Promise<void>((resolve) => { r.markReady = () => { r.ready = true; resolve(); }; });
  }

  private async waitReady(r: Resource, signal: AbortSignal | undefined): Promise<void> {
    if (r.ready) return;
    const timeoutMs = this.opts.readyTimeoutMs ?? 10_000;
    let cancel: (() => void) | undefined;
    const timeout = new Promise<never>((_, reject) => {
      cancel = this.clock.setTimeout(() => reject(new ApiError('TooManyRequests', 'storage is (re)initializing', { details: { retryAfterSeconds: 1 } })), timeoutMs);
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      if (signal?.aborted) reject(signal.reason);
      onAbort = () => reject(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      await Promise.race([r.readyPromise, timeout, aborted]);
    } finally {
      cancel?.();
      // A long-lived signal (a watch request's) must not collect one listener per wait.
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The one list+watch loop of a resource (upstream's reflector inside the cacher). */
  private async reflect(r: Resource): Promise<void> {
    const [min, max] = this.opts.retryBackoffMs ?? [200, 5_000];
    let delay = min;
    const backoff = async () => {
      await this.clock.sleep(delay, this.stop.signal).catch(() => undefined);
      delay = Math.min(delay * 2, max);
    };
    while (!this.stop.signal.aborted) {
      let list: StorageList;
      try {
        list = await this.storage.list(r.prefix);
      } catch (err) {
        if (this.stop.signal.aborted) return;
        this.log.warn({ err, prefix: r.prefix }, 'Failed to list for the watch cache, retrying');
        await backoff();
        continue;
      }
      // Watchers of an earlier generation cannot be continued across a relist: replace ends them with Expired.
      r.cache.replace(list.items, Number(list.resourceVersion));
      r.markReady();
      this.advanced(r);
      delay = min;
      this.log.debug({ prefix: r.prefix, items: list.items.length, resourceVersion: list.resourceVersion }, 'Initialized watch cache');
      for (;;) {
        try {
          const events = this.storage.watch(r.prefix, {
            resourceVersion: String(r.cache.resourceVersion),
            signal: this.stop.signal,
            onProgress: (rv) => { r.cache.progress(Number(rv)); this.advanced(r); },
          });
          for await (const ev of events) { r.cache.process(ev); this.advanced(r); delay = min; }
          if (this.stop.signal.aborted) return;
          this.log.warn({ prefix: r.prefix }, 'Watch cache lost its watch, resuming');
        } catch (err) {
          if (this.stop.signal.aborted) return;
          if (isResourceExpired(err)) {
            this.log.warn({ err, prefix: r.prefix }, 'Watch cache fell behind compaction, relisting');
            this.resetReady(r);
            for (const w of r.waiters.splice(0)) w.resolve(false);
            break;
          }
          this.log.warn({ err, prefix: r.prefix }, 'Watch cache watch failed, resuming');
        }
        await backoff();
        if (this.stop.signal.aborted) return;
      }
    }
  }

  private scheduleTick(): void {
    const interval = this.opts.progressIntervalMs ?? 5_000;
    if (interval <= 0 || this.stop.signal.aborted) return;
    this.cancelTick = this.clock.setTimeout(() => {
      for (const r of this.resources.values()) if (r.ready) r.cache.sendProgress();
      this.scheduleTick();
    }, interval);
  }
}

/** The wall clock, but its timers do not keep a process (a test that forgot close()) alive. */
const unrefClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) { const t = setTimeout(fn, ms); t.unref(); return () => clearTimeout(t); },
  sleep: (ms, signal) => realClock.sleep(ms, signal),
};
