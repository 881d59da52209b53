/**
 * ObjectCache: the ConfigMaps and Secrets pods reference, as upstream's cache-based manager
 * (`pkg/kubelet/util/manager/cache_based_manager.go`, the `Cache` change-detection strategy):
 * a read within ttlMs of the last fetch is answered from the cache, and reads while a fetch is in
 * flight share it. Without it every sync of every pod read its volumes' and env's objects live
 * (a 110-pod burst made 466 GETs of `kube-root-ca.crt`, and those requests queued behind the
 * client's rate limit, before any sandbox). A missing object is not cached (it is asked again at
 * the next read, so a pod waiting for it starts as soon as it exists); an error is not cached.
 * Object changes reach the pods' files within ttlMs plus one sync (upstream's TTL: 1 min).
 */
import type { Clock } from '@mk8s/component-base';

interface Entry<T> { value?: T; fetchedAtMs: number; inflight?: Promise<T | undefined> }

export class ObjectCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  /**
   * @param o.keep which fetched objects may be answered from the cache (default all): one that is
   * not is asked again at the next read, like a missing one (a claim not Bound yet must be seen
   * Bound as soon as it is).
   */
  constructor(private readonly o: { fetch: (namespace: string, name: string) => Promise<T | undefined>; clock: Clock; ttlMs: number; keep?: (v: T) => boolean }) {}

  /** The object (undefined when it does not exist), from the cache when fetched less than ttlMs ago. */
  get(namespace: string, name: string): Promise<T | undefined> {
    const key = `${namespace}/${name}`;
    const now = this.o.clock.now();
    const e = this.entries.get(key);
    if (e?.value !== undefined && now - e.fetchedAtMs < this.o.ttlMs) return Promise.resolve(e.value);
    if (e?.inflight) return e.inflight;
    const entry: Entry<T> = e ?? { fetchedAtMs: 0 };
    this.entries.set(key, entry);
    const inflight = this.o.fetch(namespace, name).then(
      (v) => {
        if (v === undefined || (this.o.keep && !this.o.keep(v))) this.entries.delete(key);
        else { entry.value = v; entry.fetchedAtMs = now; delete entry.inflight; }
        return v;
      },
      (err: unknown) => { delete entry.inflight; if (entry.value === undefined) this.entries.delete(key); throw err; },
    );
    entry.inflight = inflight;
    return inflight;
  }

  /** Drops entries fetched ttlMs or more ago (housekeeping): a pod gone, its objects go too. */
  prune(): void {
    const now = this.o.clock.now();
    for (const [k, e] of this.entries) if (!e.inflight && now - e.fetchedAtMs >= this.o.ttlMs) this.entries.delete(k);
  }

  get size(): number { return this.entries.size; }
}
