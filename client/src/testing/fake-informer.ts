/**
 * Fake informers for controller unit tests (sample-controller's fixture): a store you seed
 * directly, hasSynced() always true, and methods that fire handlers as a watch event would.
 */
import type { KubeObject, ResourceDescriptor } from '@mk8s/api';
import type { EventHandler, InformerOptions, Lister, SharedInformer, SharedInformerFactory } from '../interfaces.js';
import { objectKey } from '../helpers.js';
import { Indexer } from '../store.js';
import { objectMatcher } from '../selector-match.js';
import type { FakeClientset } from './fake-clientset.js';

export class FakeInformer<T extends KubeObject = KubeObject> implements SharedInformer<T> {
  private readonly store = new Indexer<T>();
  private readonly handlers: EventHandler<T>[] = [];
  readonly lister: Lister<T> = this.store;
  constructor(readonly resource?: ResourceDescriptor, readonly options: InformerOptions = {}) {}

  /** Puts objects in the cache without calling handlers (the state before the test). */
  seed(...objs: T[]): void { for (const o of objs) this.store.upsert(o); }
  /** Adds or updates obj and calls onAdd / onUpdate, as a watch event would. */
  add(obj: T): void {
    const old = this.store.upsert(obj);
    for (const h of this.handlers) old ? h.onUpdate?.(old, obj) : h.onAdd?.(obj);
  }
  update(obj: T): void { this.add(obj); }
  /** Removes obj and calls onDelete. */
  delete(obj: T): void {
    const old = this.store.remove(objectKey(obj));
    for (const h of this.handlers) h.onDelete?.(old ?? obj);
  }
  /** Whether obj falls in this informer's namespace and selectors. */
  matches(obj: KubeObject): boolean {
    if (this.options.namespace && obj.metadata.namespace !== this.options.namespace) return false;
    return this.resource ? objectMatcher(this.resource, this.options)(obj) : true;
  }

  addEventHandler(h: EventHandler<T>): void { this.handlers.push(h); }
  addIndexer(name: string, fn: (obj: T) => string[]): void { this.store.addIndexer(name, fn); }
  hasSynced(): boolean { return true; }
  run(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => { if (signal.aborted) resolve(); else signal.addEventListener('abort', () => resolve(), { once: true }); });
  }
}

/**
 * FakeInformerFactory: informerFor returns FakeInformers, filled on creation from the
 * FakeClientset's tracker when one is given (so objects seeded before the controller is built show up).
 */
export class FakeInformerFactory implements SharedInformerFactory {
  private readonly informers = new Map<string, FakeInformer<KubeObject>>();
  constructor(private readonly client?: FakeClientset) {}

  informerFor<T extends KubeObject = KubeObject>(r: ResourceDescriptor<unknown>, opts: InformerOptions = {}): SharedInformer<T> & FakeInformer<T> {
    const key = informerKey(r as ResourceDescriptor, opts);
    let inf = this.informers.get(key);
    if (!inf) {
      inf = new FakeInformer<KubeObject>(r as ResourceDescriptor, opts);
      if (this.client) {
        const ns = (r as ResourceDescriptor).namespaced ? opts.namespace : undefined;
        inf.seed(...this.client.tracker.list(r as ResourceDescriptor, ns, opts).items);
      }
      this.informers.set(key, inf);
    }
    return inf as unknown as FakeInformer<T>;
  }
  /** Every informer created so far for r. */
  informersOf(r: ResourceDescriptor): FakeInformer<KubeObject>[] {
    return [...this.informers.values()].filter((i) => i.resource === r || (i.resource?.group === r.group && i.resource?.resource === r.resource));
  }
  start(_signal: AbortSignal): void {}
  waitForCacheSync(_signal?: AbortSignal): Promise<boolean> { return Promise.resolve(true); }
}

/** The factory's identity of an informer: resource + namespace + selectors. */
export function informerKey(r: ResourceDescriptor, o: InformerOptions): string {
  return [r.group, r.resource, r.namespaced ? o.namespace ?? '' : '', o.labelSelector ?? '', o.fieldSelector ?? ''].join('|');
}
