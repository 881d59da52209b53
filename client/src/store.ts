/**
 * Indexer: the informer's cache (client-go tools/cache threadSafeMap + Indexers). A namespace
 * index is built in. JS is single-threaded, so every method is atomic with respect to handlers.
 * Objects stored are shared with every reader: never mutate them.
 */
import type { KubeObject } from '@mk8s/api';
import type { Lister, ObjectKey } from './interfaces.js';
import { objectKey } from './helpers.js';

export const NAMESPACE_INDEX = 'namespace';

export class Indexer<T extends KubeObject = KubeObject> implements Lister<T> {
  private readonly items = new Map<ObjectKey, T>();
  private readonly indexers = new Map<string, (obj: T) => string[]>();
  private readonly indices = new Map<string, Map<string, Set<ObjectKey>>>();

  constructor() {
    this.addIndexer(NAMESPACE_INDEX, (o) => [o.metadata?.namespace ?? '']);
  }

  /** Adds an index and builds it over current contents. Replaces one of the same name. */
  addIndexer(name: string, fn: (obj: T) => string[]): void {
    this.indexers.set(name, fn);
    const idx = new Map<string, Set<ObjectKey>>();
    this.indices.set(name, idx);
    for (const [k, o] of this.items) for (const v of fn(o)) addTo(idx, v, k);
  }

  get(key: ObjectKey): T | undefined { return this.items.get(key); }

  list(namespace?: string): T[] {
    if (!namespace) return [...this.items.values()];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  byIndex(index: string, value: string): T[] {
    const keys = this.indices.get(index)?.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) { const o = this.items.get(k); if (o) out.push(o); }
    return out;
  }

  keys(): ObjectKey[] { return [...this.items.keys()]; }
  size(): number { return this.items.size; }

  /** Inserts or replaces obj; returns the previous object under its key. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) for (const v of fn(obj)) addTo(this.indices.get(name)!, v, key);
    return old;
  }

  /** Removes key; returns what was there. */
  remove(key: ObjectKey): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private unindex(key: ObjectKey, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indices.get(name)!;
      for (const v of fn(obj)) {
        const s = idx.get(v);
        if (!s) continue;
        s.delete(key);
        if (s.size === 0) idx.delete(v);
      }
    }
  }
}

function addTo(idx: Map<string, Set<ObjectKey>>, v: string, k: ObjectKey): void {
  let s = idx.get(v);
  if (!s) { s = new Set(); idx.set(v, s); }
  s.add(k);
}
