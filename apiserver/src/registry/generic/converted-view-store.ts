/**
 * ConvertedViewStore: one stored resource served under a second group version with a real
 * conversion (upstream serves one storage under several versions and converts through the internal
 * version). Reads and watches convert what the owning Store returns (fresh objects, so the watch
 * cache's stored JSON is never sent for this view); writes convert the body to the stored version
 * and go through the owning Store (its strategy, defaults, validation, admission and etcd key).
 * Used for autoscaling/v1 HorizontalPodAutoscalers over the autoscaling/v2 store.
 */
import { apiVersionOf, type DeleteOptions, type KubeList, type KubeObject, type ResourceDescriptor, type WatchEvent } from '@mk8s/api';
import { Store, type DeleteResult, type ListParams, type RequestContext, type StoreOptions, type WatchParams } from './store.js';
import type { UpdateTarget } from './strategy.js';

export interface ConvertedViewOptions extends Omit<StoreOptions, 'strategy'> {
  /** The descriptor this view serves (same group/resource as owner's, another version). */
  view: ResourceDescriptor;
  /** The Store that owns the objects (the storage version). */
  owner: Store;
  /** Stored form → this view's form. Pure; must not mutate its input. */
  toView(o: KubeObject): KubeObject;
  /** This view's form → stored form. Pure; must not mutate its input. */
  fromView(o: KubeObject): KubeObject;
}

export class ConvertedViewStore extends Store {
  private readonly owner: Store;
  private readonly toView: (o: KubeObject) => KubeObject;
  private readonly fromView: (o: KubeObject) => KubeObject;
  private readonly ownerApiVersion: string;

  constructor(o: ConvertedViewOptions) {
    const { view, owner, toView, fromView, ...storeOpts } = o;
    super({ ...storeOpts, strategy: { ...owner.strategy, resource: view } });
    this.owner = owner;
    this.ownerApiVersion = apiVersionOf(owner.resource);
    this.toView = toView;
    this.fromView = fromView;
  }

  private view(o: KubeObject): KubeObject {
    return o.kind === this.owner.resource.kind ? this.toView(o) : o;
  }

  /** A body in this view's version (identity checked here) → the stored version. */
  private stored(body: KubeObject, namespace: string): KubeObject {
    return this.fromView(this.checkIdentity(body, namespace));
  }

  private wrap(p: ((o: KubeObject) => boolean) | undefined): ((o: KubeObject) => boolean) | undefined {
    return p ? (o) => p(this.view(o)) : undefined;
  }

  private listParams(p: ListParams): ListParams {
    const w = this.wrap(p.predicate);
    const { predicate: _drop, ...rest } = p;
    return w ? { ...rest, predicate: w } : rest;
  }

  private viewList(list: KubeList): KubeList {
    return { ...list, apiVersion: apiVersionOf(this.resource), kind: this.resource.listKind, items: list.items.map((o) => this.view(o)) };
  }

  override async get(namespace: string, name: string, opts: { resourceVersion?: string } = {}): Promise<KubeObject> {
    return this.view(await this.owner.get(namespace, name, opts));
  }

  override async list(namespace: string, p: ListParams = {}): Promise<KubeList> {
    return this.viewList(await this.owner.list(namespace, this.listParams(p)));
  }

  override async *watch(namespace: string, p: WatchParams): AsyncIterable<WatchEvent> {
    const w = this.wrap(p.predicate);
    const { predicate: _drop, ...rest } = p;
    for await (const ev of this.owner.watch(namespace, w ? { ...rest, predicate: w } : rest)) {
      if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') {
        yield ev.object.apiVersion === this.ownerApiVersion ? { type: ev.type, object: { ...ev.object, apiVersion: apiVersionOf(this.resource) } } : ev;
      } else {
        yield { type: ev.type, object: this.view(ev.object) };
      }
    }
  }

  override async create(rc: RequestContext, namespace: string, body: KubeObject, _opts: { bodyOwned?: boolean } = {}): Promise<KubeObject> {
    return this.view(await this.owner.create(rc, namespace, this.stored(body, namespace), { bodyOwned: true }));
  }

  override async update(rc: RequestContext, namespace: string, name: string, body: KubeObject, target: UpdateTarget = 'main'): Promise<{ object: KubeObject; created: boolean }> {
    const r = await this.owner.update(rc, namespace, name, this.stored(body, namespace), target);
    return { object: this.view(r.object), created: r.created };
  }

  override async updateWith(rc: RequestContext, namespace: string, name: string,
    computeNext: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>, target: UpdateTarget, hasResourceVersion = false): Promise<{ object: KubeObject; created: boolean }> {
    const r = await this.owner.updateWith(rc, namespace, name,
      async (current) => this.stored(await computeNext(current ? this.view(current) : undefined), namespace), target, hasResourceVersion);
    return { object: this.view(r.object), created: r.created };
  }

  override async delete(rc: RequestContext, namespace: string, name: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    const r = await this.owner.delete(rc, namespace, name, options);
    return { object: this.view(r.object), deleted: r.deleted };
  }

  override async deleteCollection(rc: RequestContext, namespace: string, params: ListParams, options: DeleteOptions): Promise<KubeList> {
    return this.viewList(await this.owner.deleteCollection(rc, namespace, this.listParams(params), options));
  }
}
