/**
 * InstrumentedStorage times every request to the storage it wraps (upstream storage/etcd3's
 * metrics.RecordEtcdRequest around each etcd call): etcd_request_duration_seconds,
 * etcd_requests_total and etcd_request_errors_total by operation and group-resource. Sits
 * between the Cacher and Etcd3Storage, so it counts what reaches etcd, not what the cache answers.
 */
import type { KubeObject } from '@mk8s/api';
import type { GuaranteedUpdateOptions, Preconditions, Storage, StorageEvent, StorageGetOptions, StorageList, StorageListOptions, StorageWatchOptions } from './interfaces.js';
import { groupResourceOf } from './keys.js';

/** Called once per request when it settles; failed is true when it rejected. */
export type StorageObserver = (operation: string, type: string, seconds: number, failed: boolean) => void;

export class InstrumentedStorage implements Storage {
  constructor(private readonly inner: Storage, private readonly observe: StorageObserver) {}

  private async timed<T>(operation: string, key: string, fn: () => Promise<T>): Promise<T> {
    const start = performance.now();
    let failed = true;
    try {
      const out = await fn();
      failed = false;
      return out;
    } finally {
      this.observe(operation, groupResourceOf(key), (performance.now() - start) / 1000, failed);
    }
  }

  create(key: string, obj: KubeObject): Promise<KubeObject> { return this.timed('create', key, () => this.inner.create(key, obj)); }
  get(key: string, opts?: StorageGetOptions): Promise<KubeObject> { return this.timed('get', key, () => this.inner.get(key, opts)); }
  list(prefix: string, opts?: StorageListOptions): Promise<StorageList> { return this.timed('listWithCount', prefix, () => this.inner.list(prefix, opts)); }
  guaranteedUpdate(key: string, tryUpdate: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>,
    opts?: GuaranteedUpdateOptions): Promise<KubeObject> {
    return this.timed('update', key, () => this.inner.guaranteedUpdate(key, tryUpdate, opts));
  }
  delete(key: string, opts?: { preconditions?: Preconditions; validateDeletion?: (current: KubeObject) => void | Promise<void> }): Promise<KubeObject> {
    return this.timed('delete', key, () => this.inner.delete(key, opts));
  }
  /** Long-running: not timed (upstream records only the watch's setup, which is the stream here). */
  watch(prefix: string, opts: StorageWatchOptions): AsyncIterable<StorageEvent> { return this.inner.watch(prefix, opts); }
  currentResourceVersion(): Promise<string> { return this.timed('getRevision', '', () => this.inner.currentResourceVersion()); }
  requestWatchProgress(): void { this.inner.requestWatchProgress?.(); }
  count(prefix: string): Promise<number> {
    const inner = this.inner;
    if (!inner.count) return Promise.reject(new Error('the underlying storage cannot count'));
    return this.timed('count', prefix, () => inner.count!(prefix));
  }
  close(): Promise<void> { return this.inner.close(); }
}
