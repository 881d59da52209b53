/**
 * Storage: the apiserver's only way to persist objects (apiserver storage.Interface). Keys are
 * full etcd keys (`/registry/<group>/<resource>/<ns>/<name>`). Objects are JSON; the store sets
 * `metadata.resourceVersion` (the etcd mod revision) on every object it returns.
 * Implementations: Etcd3Storage (real), MemoryStorage (tests); both pass defineStorageConformance.
 * Errors: ApiError NotFound / AlreadyExists / Conflict / Expired (410) from @mk8s/api, built with a
 * generic resource name; the registry layer rewrites messages with the real resource name.
 */
import type { KubeObject } from '@mk8s/api';

export interface Preconditions { uid?: string; resourceVersion?: string }

export interface StorageListOptions {
  /** Max items; 0/undefined = all. */
  limit?: number;
  /** Opaque continue token from a previous page. */
  continue?: string;
  /** Filter applied before paging (selectors). */
  predicate?: (obj: KubeObject) => boolean;
  /**
   * Added for the watch cache: '0' = any recent state is fine (a Cacher serves it from memory,
   * ignoring limit, as upstream); unset = most recent (always read from etcd). Plain stores ignore it.
   */
  resourceVersion?: string;
}

/** Added for the watch cache's reads of single objects. */
export interface StorageGetOptions {
  /**
   * '0' = any recent state is fine (a Cacher serves it from memory, as upstream serves a GET with
   * resourceVersion=0 from the watch cache); unset = most recent (read from the store).
   * Plain stores ignore it.
   */
  resourceVersion?: string;
}

export interface StorageList { items: KubeObject[]; resourceVersion: string; continue?: string; remainingItemCount?: number }

export type StorageEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface StorageEvent {
  type: StorageEventType;
  /** For DELETED: the last state, with resourceVersion set to the deletion revision. */
  object: KubeObject;
  /** For MODIFIED/DELETED when known: the previous state (lets selector watches turn MODIFIED into ADDED/DELETED). */
  prevObject?: KubeObject;
  resourceVersion: string;
  /** Added for the watch cache: the object's storage key, when the store knows it (MemoryStorage and Etcd3Storage set it). */
  key?: string;
}

export interface StorageWatchOptions {
  /**
   * undefined or '0': first a synthetic ADDED for every existing object under the prefix, then
   * changes. 'N': only changes after revision N; a compacted N rejects / ends with ApiError Expired.
   */
  resourceVersion?: string;
  signal: AbortSignal;
  /** Emit a bookmark-able progress callback (current revision) when idle. */
  onProgress?: (resourceVersion: string) => void;
  /**
   * Added for the watch cache: per-watcher selector filter. A MODIFIED that makes an object start
   * matching arrives as ADDED, one that makes it stop matching as DELETED (upstream cacheWatcher);
   * see filterWatchEvent. Initial synthetic ADDED events are filtered too.
   */
  predicate?: (obj: KubeObject) => boolean;
}

export interface GuaranteedUpdateOptions {
  preconditions?: Preconditions;
  ignoreNotFound?: boolean;
  /**
   * The object as the watch cache last saw it (upstream's cachedExistingObject): tried first instead
   * of a read of the store; when it proves stale (the write's compare fails, tryUpdate or the
   * preconditions reject it, or it leaves the object unchanged) the current state is read and
   * tryUpdate run again. Never mutated.
   */
  suggestion?: KubeObject;
}

export interface Storage {
  /** Creates key; AlreadyExists if present. Returns the stored object with resourceVersion. */
  create(key: string, obj: KubeObject): Promise<KubeObject>;
  /** NotFound if absent. */
  get(key: string, opts?: StorageGetOptions): Promise<KubeObject>;
  /** Everything under prefix (a key prefix ending in '/'), sorted by key. */
  list(prefix: string, opts?: StorageListOptions): Promise<StorageList>;
  /**
   * Read-modify-write with compare-and-swap, retried on a concurrent write (the tryUpdate callback
   * is re-run with the fresh object). tryUpdate may throw to abort. Preconditions failing → Conflict.
   * If the object is absent: NotFound, unless ignoreNotFound (then tryUpdate gets undefined and its
   * result is created).
   */
  guaranteedUpdate(key: string, tryUpdate: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>,
    opts?: GuaranteedUpdateOptions): Promise<KubeObject>;
  /** Deletes key (NotFound if absent, Conflict if preconditions fail); returns the last state. */
  delete(key: string, opts?: { preconditions?: Preconditions; validateDeletion?: (current: KubeObject) => void | Promise<void> }): Promise<KubeObject>;
  /** Watches every key under prefix. The iterable ends when the signal aborts. */
  watch(prefix: string, opts: StorageWatchOptions): AsyncIterable<StorageEvent>;
  /** The store's current revision. */
  currentResourceVersion(): Promise<string>;
  /**
   * Added for consistent lists from the watch cache: asks every open watch to report progress
   * (onProgress with the store's current revision) soon, instead of at the next periodic
   * notification (etcd's progress_request). Optional; best effort.
   */
  requestWatchProgress?(): void;
  /**
   * Added for apiserver_storage_objects: how many keys lie under prefix now (upstream's
   * storage.Interface Count). Optional; a reject means "unknown" (-1 in the metric).
   */
  count?(prefix: string): Promise<number>;
  /** Releases connections. */
  close(): Promise<void>;
}
