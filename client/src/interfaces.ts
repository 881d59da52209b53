/**
 * The contracts of client/ (the client-go of this project). Every component codes against these
 * interfaces; `RestClientset` implements them over HTTP, `FakeClientset` (./testing) in memory.
 */
import type { KubeList, KubeObject, ResourceDescriptor, WatchEvent, DeleteOptions } from '@mk8s/api';

/** "namespace/name", or "name" for cluster-scoped objects (client-go MetaNamespaceKeyFunc). */
export type ObjectKey = string;

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this resourceVersion; '0' or undefined = synthetic ADDED for existing objects first. */
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
}

export interface WriteOptions {
  signal?: AbortSignal;
  /** @default the client's user agent name */
  fieldManager?: string;
  dryRun?: boolean;
}

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

/**
 * A client for one resource in one namespace (or cluster-wide). All methods reject with an
 * `ApiError` carrying the server's Status (test it with isNotFound, isConflict, ...).
 */
export interface ResourceClient<T extends KubeObject = KubeObject> {
  get(name: string, opts?: { signal?: AbortSignal }): Promise<T>;
  list(opts?: ListOptions & { signal?: AbortSignal }): Promise<KubeList<T>>;
  create(obj: T, opts?: WriteOptions): Promise<T>;
  /** Compare-and-swap on metadata.resourceVersion when set: a stale one rejects with Conflict. */
  update(obj: T, opts?: WriteOptions): Promise<T>;
  /** PUT to the /status subresource (only status changes are kept). */
  updateStatus(obj: T, opts?: WriteOptions): Promise<T>;
  patch(name: string, type: PatchType, patch: unknown, opts?: WriteOptions & { subresource?: string }): Promise<T>;
  delete(name: string, opts?: WriteOptions & DeleteOptions): Promise<void>;
  /**
   * Opens a watch. Yields events until the server ends the stream, the signal aborts, or the
   * connection breaks (then the iterator ends, or throws on an ERROR event with a Status such as
   * 410 Expired). Does not reconnect: informers do that.
   */
  watch(opts?: WatchOptions & { signal?: AbortSignal }): AsyncIterable<WatchEvent<T>>;
  /** POST to a subresource (binding, eviction) and return the parsed body. */
  createSubresource(name: string, subresource: string, body: unknown, opts?: WriteOptions): Promise<unknown>;
  /**
   * PUT to a subresource (scale: an autoscaling/v1 Scale; status) and return the parsed body. A
   * metadata.resourceVersion in body is a precondition: a stale one rejects with Conflict.
   */
  updateSubresource(name: string, subresource: string, body: unknown, opts?: WriteOptions): Promise<unknown>;
  /** GET a subresource (scale, log as text). */
  getSubresource(name: string, subresource: string, opts?: { signal?: AbortSignal; query?: Record<string, string> }): Promise<unknown>;
}

/** Clientset hands out per-resource clients. Safe to share across the whole process. */
export interface Clientset {
  /** namespace '' or undefined: all namespaces (list/watch) or a cluster-scoped resource. */
  resource<T extends KubeObject = KubeObject>(r: ResourceDescriptor<unknown>, namespace?: string): ResourceClient<T>;
}

/** Read-only view of an informer's cache. Objects returned are shared: never mutate them. */
export interface Lister<T extends KubeObject = KubeObject> {
  /** By key "ns/name" or "name". */
  get(key: ObjectKey): T | undefined;
  /** All objects, or those in one namespace. */
  list(namespace?: string): T[];
  /** Objects indexed under value by a named index (see SharedInformer.addIndexer). */
  byIndex(index: string, value: string): T[];
}

export interface EventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** obj is the last known state (a DeletedFinalStateUnknown is unwrapped). */
  onDelete?(obj: T): void;
}

/**
 * SharedInformer: list, then watch, into an indexed store; relists on 410 and on disconnect (with
 * backoff); resyncs handlers every resyncPeriodMs if set. Handlers run in event order.
 */
export interface SharedInformer<T extends KubeObject = KubeObject> {
  readonly lister: Lister<T>;
  addEventHandler(h: EventHandler<T>): void;
  /** Adds an index: fn returns the index values of an object. Call before run. */
  addIndexer(name: string, fn: (obj: T) => string[]): void;
  /** True once the first list has been delivered to the store. */
  hasSynced(): boolean;
  /** Runs until signal aborts. */
  run(signal: AbortSignal): Promise<void>;
}

/** Result of a reconcile: requeueAfterMs schedules another pass even on success. */
export interface Result { requeueAfterMs?: number }

/**
 * Reconciler: level-driven and idempotent. Called by runWorkers with one key at a time (never the
 * same key concurrently). Reject to retry with backoff; reject with TerminalError to give up.
 */
export interface Reconciler {
  reconcile(key: ObjectKey, signal: AbortSignal): Promise<Result | void>;
}

/**
 * Rate-limited workqueue (client-go util/workqueue): dedups keys, hands a key to one worker at a
 * time (a key added while processing is re-queued after done), per-key exponential backoff.
 */
export interface RateLimitingQueue<K = string> {
  add(key: K): void;
  addAfter(key: K, delayMs: number): void;
  addRateLimited(key: K): void;
  forget(key: K): void;
  numRequeues(key: K): number;
  /** Resolves with the next key, or undefined once shut down and drained. */
  get(): Promise<K | undefined>;
  done(key: K): void;
  len(): number;
  shutDown(): void;
}

/** Options selecting which objects one informer of a factory caches. */
export interface InformerOptions {
  /** '' or undefined: all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Redeliver every cached object to handlers as onUpdate(obj, obj) this often. @default the factory's (none) */
  resyncPeriodMs?: number;
}

/**
 * SharedInformerFactory (client-go informers.SharedInformerFactory): one informer per
 * resource + namespace + selectors, shared by every caller in the process.
 */
export interface SharedInformerFactory {
  /**
   * The shared informer for r with opts, created on first call. Informers asked for after start()
   * are started at once. Call from constructors (before start) so waitForCacheSync covers them.
   */
  informerFor<T extends KubeObject = KubeObject>(r: ResourceDescriptor<unknown>, opts?: InformerOptions): SharedInformer<T>;
  /** Runs every informer (now and later ones) until signal aborts. Idempotent; returns at once. */
  start(signal: AbortSignal): void;
  /** Resolves true once every informer started so far has synced, false if signal aborts first. */
  waitForCacheSync(signal?: AbortSignal): Promise<boolean>;
}

export type EventType = 'Normal' | 'Warning';

/**
 * EventRecorder (client-go record.EventRecorder): writes core/v1 Events about an object.
 * Non-blocking and never throws: events are best-effort evidence, written in the background.
 */
export interface EventRecorder {
  /** Records an event; messageFmt may hold %s/%d/%v placeholders filled from args. */
  event(obj: { readonly apiVersion?: string; readonly kind?: string; readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string; readonly resourceVersion?: string } },
    type: EventType, reason: string, messageFmt: string, ...args: unknown[]): void;
}
