/**
 * SharedInformer and SharedInformerFactory (client-go tools/cache Reflector + sharedIndexInformer,
 * informers.SharedInformerFactory). List, then watch from the list's resourceVersion into an
 * indexed store; re-watch from the last seen resourceVersion when a watch ends; relist with
 * jittered backoff on 410 Expired or errors, delivering the difference to handlers so no add,
 * update or delete is lost across an apiserver restart. Bookmarks keep the resourceVersion fresh.
 *
 * Objects in the store and passed to handlers are shared: never mutate them (structuredClone first).
 */
import { isResourceExpired, type KubeObject, type ResourceDescriptor, type WatchEvent } from '@mk8s/api';
import { realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';
import type { Clientset, EventHandler, InformerOptions, Lister, ResourceClient, SharedInformer, SharedInformerFactory } from './interfaces.js';
import { objectKey } from './helpers.js';
import { Indexer } from './store.js';

/** Options for {@link createSharedInformer}. */
export interface SharedInformerOptions extends InformerOptions {
  client: Clientset;
  resource: ResourceDescriptor<unknown>;
  clock?: Clock;
  logger?: Logger;
  /** Relist backoff: first delay. @default 500 */
  initialBackoffMs?: number;
  /** Relist backoff cap. @default 30_000 */
  maxBackoffMs?: number;
  /** Server-side watch timeout, randomised in [t, 2t) as client-go does to spread reconnects. @default 300 */
  watchTimeoutSeconds?: number;
  /** Page size of the initial list; 0 = unpaged. @default 500 */
  pageSize?: number;
}

export interface SharedInformerWithStatus<T extends KubeObject> extends SharedInformer<T> {
  /** Resolves once synced (never rejects). */
  whenSynced(): Promise<void>;
  /** The resourceVersion the informer last observed ('' before the first list). */
  lastSyncResourceVersion(): string;
}

/** createSharedInformer returns an informer; call run(signal) to start it. */
export function createSharedInformer<T extends KubeObject = KubeObject>(o: SharedInformerOptions): SharedInformerWithStatus<T> {
  return new Informer<T>(o);
}

const isAbort = (err: unknown, signal: AbortSignal) => signal.aborted || (err as Error | undefined)?.name === 'AbortError';

class Informer<T extends KubeObject> implements SharedInformerWithStatus<T> {
  private readonly store = new Indexer<T>();
  readonly lister: Lister<T> = this.store;
  private readonly handlers: EventHandler<T>[] = [];
  private readonly rc: ResourceClient<T>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private synced = false;
  private resolveSynced!: () => void;
  private readonly syncedPromise = new Promise<void>((r) => { this.resolveSynced = r; });
  private lastRv = '';
  private running = false;

  constructor(private readonly o: SharedInformerOptions) {
    const r = o.resource as ResourceDescriptor;
    this.rc = o.client.resource<T>(r, r.namespaced ? o.namespace ?? '' : '');
    this.clock = o.clock ?? realClock;
    this.log = (o.logger ?? silentLogger()).child({ informer: r.group ? `${r.resource}.${r.group}` : r.resource, ...(o.namespace ? { namespace: o.namespace } : {}) });
  }

  addEventHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
    // A handler added late still hears about everything already cached, as in client-go.
    if (this.synced) for (const obj of this.store.list()) this.call(h, 'onAdd', obj);
  }
  addIndexer(name: string, fn: (obj: T) => string[]): void { this.store.addIndexer(name, fn); }
  hasSynced(): boolean { return this.synced; }
  whenSynced(): Promise<void> { return this.syncedPromise; }
  lastSyncResourceVersion(): string { return this.lastRv; }

  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error('informer already running');
    this.running = true;
    const stopResync = this.startResync(signal);
    let backoff = this.o.initialBackoffMs ?? 500;
    const maxBackoff = this.o.maxBackoffMs ?? 30_000;
    let failures = 0;
    try {
      while (!signal.aborted) {
        try {
          await this.list(signal);
          await this.watchLoop(signal, () => { backoff = this.o.initialBackoffMs ?? 500; failures = 0; });
        } catch (err) {
          if (isAbort(err, signal)) break;
          failures++;
          if (isResourceExpired(err)) this.log.info({ rv: this.lastRv }, 'Watch expired, relisting');
          else this.log.warn({ err }, 'List/watch failed, relisting after backoff');
          // A first 410 relists at once (the normal way to catch up); anything repeated backs off,
          // with jitter to spread the relists of many informers after an apiserver restart.
          const delay = isResourceExpired(err) && failures === 1 ? 0 : Math.min(maxBackoff, backoff) * (1 + Math.random());
          if (delay > 0) backoff = Math.min(maxBackoff, backoff * 2);
          if (delay > 0) await this.clock.sleep(delay, signal).catch(() => undefined);
        }
      }
    } finally {
      stopResync();
      this.running = false;
    }
  }

  /** Lists everything and replaces the store, delivering the differences as add/update/delete. */
  private async list(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    const limit = this.o.pageSize ?? 500;
    do {
      const page = await this.rc.list({
        ...(this.o.labelSelector ? { labelSelector: this.o.labelSelector } : {}),
        ...(this.o.fieldSelector ? { fieldSelector: this.o.fieldSelector } : {}),
        ...(limit ? { limit } : {}),
        ...(cont ? { continue: cont } : {}),
        signal,
      });
      items.push(...page.items);
      rv = page.metadata.resourceVersion ?? rv;
      cont = page.metadata.continue || undefined;
    } while (cont);
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.store.get(key);
      if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) continue;
      this.store.upsert(obj);
      if (old) this.emit('onUpdate', old, obj); else this.emit('onAdd', obj);
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const old = this.store.remove(key);
      if (old) this.emit('onDelete', old);
    }
    this.lastRv = rv;
    this.log.debug({ rv, items: items.length }, 'Listed objects');
    if (!this.synced) { this.synced = true; this.resolveSynced(); }
  }

  /** Watches from lastRv until an error; a cleanly ended watch is re-opened from the last seen rv. */
  private async watchLoop(signal: AbortSignal, onProgress: () => void): Promise<void> {
    const base = this.o.watchTimeoutSeconds ?? 300;
    while (!signal.aborted) {
      const started = this.clock.now();
      let events = 0;
      for await (const ev of this.rc.watch({
        resourceVersion: this.lastRv,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.floor(base * (1 + Math.random())),
        ...(this.o.labelSelector ? { labelSelector: this.o.labelSelector } : {}),
        ...(this.o.fieldSelector ? { fieldSelector: this.o.fieldSelector } : {}),
        signal,
      })) {
        events++;
        this.handle(ev);
      }
      // A watch that delivered events, or stayed open a while, proves the connection healthy.
      if (events > 0 || this.clock.now() - started >= 1000) onProgress();
      // A watch that ends at once without events (a server going away) must not become a hot loop.
      if (events === 0 && this.clock.now() - started < 1000 && !signal.aborted) {
        await this.clock.sleep(this.o.initialBackoffMs ?? 500, signal).catch(() => undefined);
      }
    }
  }

  private handle(ev: WatchEvent<T>): void {
    const rv = ev.object?.metadata?.resourceVersion;
    if (ev.type === 'BOOKMARK') { if (rv) this.lastRv = rv; return; }
    const obj = ev.object;
    const key = objectKey(obj);
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const old = this.store.upsert(obj);
        if (old) this.emit('onUpdate', old, obj); else this.emit('onAdd', obj);
        break;
      }
      case 'DELETED': {
        const old = this.store.remove(key);
        if (old) this.emit('onDelete', obj);
        break;
      }
      default:
        this.log.warn({ type: ev.type }, 'Ignored unknown watch event type');
    }
    if (rv) this.lastRv = rv;
  }

  private startResync(signal: AbortSignal): () => void {
    const period = this.o.resyncPeriodMs;
    if (!period || period <= 0) return () => undefined;
    let cancel = () => {};
    const tick = () => {
      if (signal.aborted) return;
      if (this.synced) for (const obj of this.store.list()) this.emit('onUpdate', obj, obj);
      cancel = this.clock.setTimeout(tick, period);
    };
    cancel = this.clock.setTimeout(tick, period);
    return () => cancel();
  }

  private emit(kind: 'onAdd' | 'onDelete', obj: T): void;
  private emit(kind: 'onUpdate', oldObj: T, obj: T): void;
  private emit(kind: 'onAdd' | 'onUpdate' | 'onDelete', a: T, b?: T): void {
    for (const h of this.handlers) this.call(h, kind, a, b);
  }

  private call(h: EventHandler<T>, kind: 'onAdd' | 'onUpdate' | 'onDelete', a: T, b?: T): void {
    try {
      if (kind === 'onUpdate') h.onUpdate?.(a, b!);
      else h[kind]?.(a);
    } catch (err) {
      // One broken handler must not stop the others or the informer.
      this.log.error({ err, handler: kind }, 'Event handler failed');
    }
  }
}

/** Options for {@link newInformerFactory}. */
export interface InformerFactoryOptions {
  client: Clientset;
  clock?: Clock;
  logger?: Logger;
  /** Resync period of informers that do not set one. @default none */
  defaultResyncMs?: number;
  /** Passed to every informer (backoff tuning, page size). */
  informerDefaults?: Partial<Pick<SharedInformerOptions, 'initialBackoffMs' | 'maxBackoffMs' | 'watchTimeoutSeconds' | 'pageSize'>>;
}

/** newInformerFactory returns a SharedInformerFactory over client. */
export function newInformerFactory(o: InformerFactoryOptions): SharedInformerFactory & { informers(): SharedInformerWithStatus<KubeObject>[] } {
  const informers = new Map<string, SharedInformerWithStatus<KubeObject>>();
  let started: AbortSignal | undefined;
  const runs: Promise<void>[] = [];
  const launch = (inf: SharedInformerWithStatus<KubeObject>, signal: AbortSignal) => {
    runs.push(inf.run(signal).catch((err: unknown) => o.logger?.error({ err }, 'Informer stopped with an error')));
  };
  return {
    informerFor<T extends KubeObject = KubeObject>(r: ResourceDescriptor<unknown>, opts: InformerOptions = {}): SharedInformer<T> {
      const rd = r as ResourceDescriptor;
      const key = [rd.group, rd.resource, rd.namespaced ? opts.namespace ?? '' : '', opts.labelSelector ?? '', opts.fieldSelector ?? ''].join('|');
      let inf = informers.get(key);
      if (!inf) {
        const resync = opts.resyncPeriodMs ?? o.defaultResyncMs;
        inf = createSharedInformer<KubeObject>({
          client: o.client, resource: rd, ...opts, ...o.informerDefaults,
          ...(resync !== undefined ? { resyncPeriodMs: resync } : {}),
          ...(o.clock ? { clock: o.clock } : {}),
          ...(o.logger ? { logger: o.logger } : {}),
        });
        informers.set(key, inf);
        if (started) launch(inf, started);
      }
      return inf as unknown as SharedInformer<T>;
    },
    start(signal: AbortSignal): void {
      if (started) return;
      started = signal;
      for (const inf of informers.values()) launch(inf, signal);
    },
    async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
      const all = Promise.all([...informers.values()].map((i) => i.whenSynced())).then(() => true);
      if (!signal) return all;
      if (signal.aborted) return false;
      const aborted = new Promise<boolean>((resolve) => signal.addEventListener('abort', () => resolve(false), { once: true }));
      return Promise.race([all, aborted]);
    },
    informers: () => [...informers.values()],
  };
}
