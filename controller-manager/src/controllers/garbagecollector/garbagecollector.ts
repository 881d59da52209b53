/**
 * Garbage collector (upstream pkg/controller/garbagecollector), level-driven: every object with
 * ownerReferences is checked against its owners; an object none of whose owners exists any more
 * is deleted (background by default). Owners deleted with propagationPolicy Foreground carry the
 * `foregroundDeletion` finalizer until their blocking dependents are gone; with Orphan the
 * `orphan` finalizer until their dependents' ownerReferences to them are removed.
 * The ownership graph is the informers' caches plus an index of ownerReference uids; an owner
 * missing from the cache is confirmed with a live GET before anything is deleted.
 * Watches every deletable resource except Events: the built-in scheme at once, and whatever discovery
 * adds (custom resources) every resyncMs (upstream's resync of its monitors), starting informers for
 * them; writes deletions, ownerReference and finalizer patches.
 */
import { apiVersionOf, isConflict, isNotFound, lookupKind, qualifiedResource, RESOURCES, Events, type KubeObject, type OwnerReference, type ResourceDescriptor } from '@mk8s/api';
import { objectKey, partialResources, type DiscoveryClient, type SharedInformer } from '@mk8s/client';
import { BaseController, discoveryOf, type ControllerContext } from '../../controller.js';

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';
const OWNER_INDEX = 'ownerUid';

export interface GarbageCollectorOptions {
  /** Resources whose objects are collected. @default every served resource with list, watch and delete, except Events */
  resources?: readonly ResourceDescriptor[];
  /** How often discovery is read for new resources (only without `resources`). @default 30000 */
  resyncMs?: number;
}

/**
 * The resources the collector monitors (pure): list, watch and delete, not Events, one version of
 * each group/resource (the first listed: the preferred one; autoscaling/v1 HPAs are the v2 objects).
 */
export function collectable(resources: readonly ResourceDescriptor[]): ResourceDescriptor[] {
  const seen = new Set<string>();
  return resources.filter((r) => !seen.has(`${r.group}/${r.resource}`) && seen.add(`${r.group}/${r.resource}`) && !(r.group === Events.group && r.resource === Events.resource) && !(r.group === 'events.k8s.io' && r.resource === 'events')
    && ['list', 'watch', 'delete'].every((v) => r.verbs.includes(v as never)));
}

type Dependent = { r: ResourceDescriptor; obj: KubeObject };

export class GarbageCollector extends BaseController {
  static readonly NAME = 'garbagecollector';
  readonly name = GarbageCollector.NAME;
  private readonly informers = new Map<string, { r: ResourceDescriptor; inf: SharedInformer<KubeObject> }>();
  /** apiVersion|kind -> descriptor of every monitored resource. */
  private readonly kinds = new Map<string, ResourceDescriptor>();
  private readonly discovery: DiscoveryClient | undefined;
  private readonly resyncMs: number;

  constructor(ctx: ControllerContext, o: GarbageCollectorOptions = {}) {
    super(ctx, 'garbage_collector_attempt_to_delete');
    this.defaultWorkers = 10; // most passes are cache lookups; a few wait on a live GET
    this.discovery = o.resources ? undefined : discoveryOf(ctx);
    this.resyncMs = o.resyncMs ?? 30_000;
    for (const r of collectable(o.resources ?? RESOURCES)) this.monitor(r);
  }

  /** Starts watching r (its informer starts at once if the factory already runs). False when already watched. */
  monitor(r: ResourceDescriptor): boolean {
    if (this.informers.has(qualifiedResource(r))) return false;
    {
      const ctx = this.ctx;
      const inf = ctx.informers.informerFor<KubeObject>(r);
      inf.addIndexer(OWNER_INDEX, (obj) => (obj.metadata.ownerReferences ?? []).map((ref) => ref.uid));
      const key = (obj: KubeObject) => `${qualifiedResource(r)}|${objectKey(obj)}`;
      inf.addEventHandler({
        onAdd: (obj) => this.changed(obj, key(obj)),
        onUpdate: (old, obj) => {
          if (old.metadata.resourceVersion === obj.metadata.resourceVersion && old.metadata.resourceVersion !== undefined) return;
          this.changed(obj, key(obj));
        },
        onDelete: (obj) => {
          // Its dependents may now be orphans; owners waiting on it may now finish.
          this.enqueueDependents(obj);
          this.enqueueOwners(obj);
        },
      });
      this.informers.set(qualifiedResource(r), { r, inf });
      this.kinds.set(`${apiVersionOf(r)}|${r.kind}`, r);
    }
    return true;
  }

  /** One discovery pass: monitors resources that appeared (custom resources). Returns how many were added. */
  async resyncMonitors(signal?: AbortSignal): Promise<number> {
    if (!this.discovery) return 0;
    let added = 0;
    let found: ResourceDescriptor[];
    let partial: unknown;
    try { found = await this.discovery.serverPreferredResources(signal); } catch (err) { found = partialResources(err); partial = err; }
    for (const r of collectable(found)) if (this.monitor(r)) added++;
    if (added) this.log.info({ added }, 'Garbage collector monitoring new resources');
    if (partial !== undefined) throw partial;
    return added;
  }

  protected override async background(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try { await this.resyncMonitors(signal); } catch (err) { if (!signal.aborted) this.log.warn({ err }, 'Garbage collector discovery failed'); }
      try { await this.ctx.clock.sleep(this.resyncMs, signal); } catch { return; }
    }
  }

  private kindOf(apiVersion: string, kind: string): ResourceDescriptor | undefined {
    return this.kinds.get(`${apiVersion}|${kind}`) ?? lookupKind(apiVersion, kind);
  }

  private changed(obj: KubeObject, key: string): void {
    const m = obj.metadata;
    if (m.ownerReferences?.length) this.enqueue(key);
    if (m.deletionTimestamp && (m.finalizers ?? []).some((f) => f === FINALIZER_ORPHAN || f === FINALIZER_FOREGROUND)) {
      this.enqueue(key);
      this.enqueueDependents(obj);
    }
    if (m.deletionTimestamp) this.enqueueOwners(obj);
  }

  private enqueueDependents(owner: KubeObject): void {
    for (const d of this.dependentsOf(owner.metadata.uid)) this.enqueue(`${qualifiedResource(d.r)}|${objectKey(d.obj)}`);
  }

  private enqueueOwners(obj: KubeObject): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const or = this.kindOf(ref.apiVersion, ref.kind);
      if (!or || !this.informers.has(qualifiedResource(or))) continue;
      const ns = or.namespaced ? obj.metadata.namespace ?? '' : '';
      this.enqueue(`${qualifiedResource(or)}|${ns ? `${ns}/` : ''}${ref.name}`);
    }
  }

  /** Every cached object with an ownerReference to uid. */
  dependentsOf(uid: string | undefined): Dependent[] {
    if (!uid) return [];
    const out: Dependent[] = [];
    for (const { r, inf } of this.informers.values()) for (const obj of inf.lister.byIndex(OWNER_INDEX, uid)) out.push({ r, obj });
    return out;
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const bar = key.indexOf('|');
    const entry = this.informers.get(key.slice(0, bar));
    if (!entry) return;
    const objKey = key.slice(bar + 1);
    const obj = entry.inf.lister.get(objKey);
    if (!obj) return;
    const m = obj.metadata;
    if (m.deletionTimestamp) {
      if (m.finalizers?.includes(FINALIZER_ORPHAN)) return this.orphanDependents(entry.r, obj, signal);
      if (m.finalizers?.includes(FINALIZER_FOREGROUND)) await this.processDeletingDependents(entry.r, obj, signal);
      return;
    }
    if (!m.ownerReferences?.length) return;
    await this.attemptToDelete(entry.r, obj, signal);
  }

  /** Looks an owner up in the cache, then (to rule out a lagging cache) on the server. */
  private async resolveOwner(obj: KubeObject, ref: OwnerReference, signal: AbortSignal): Promise<KubeObject | 'absent' | 'unknown'> {
    const or = this.kindOf(ref.apiVersion, ref.kind);
    if (!or) return 'unknown';
    const ns = or.namespaced ? obj.metadata.namespace ?? '' : '';
    const cached = this.informers.get(qualifiedResource(or))?.inf.lister.get(ns ? `${ns}/${ref.name}` : ref.name);
    if (cached && cached.metadata.uid === ref.uid) return cached;
    try {
      const live = await this.ctx.client.resource<KubeObject>(or, ns).get(ref.name, { signal });
      return live.metadata.uid === ref.uid ? live : 'absent';
    } catch (err) {
      if (isNotFound(err)) return 'absent';
      throw err;
    }
  }

  /** attemptToDeleteItem: delete obj when no owner of it remains; drop references to owners that are gone. */
  private async attemptToDelete(r: ResourceDescriptor, obj: KubeObject, signal: AbortSignal): Promise<void> {
    const solid: OwnerReference[] = [], dangling: OwnerReference[] = [], waiting: OwnerReference[] = [];
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const owner = await this.resolveOwner(obj, ref, signal);
      if (owner === 'unknown') { solid.push(ref); continue; } // a kind we cannot check is never assumed gone
      if (owner === 'absent') { dangling.push(ref); continue; }
      if (owner.metadata.deletionTimestamp && owner.metadata.finalizers?.includes(FINALIZER_FOREGROUND)) waiting.push(ref);
      else solid.push(ref);
    }
    const client = this.ctx.client.resource<KubeObject>(r, obj.metadata.namespace);
    if (solid.length) {
      if (dangling.length === 0 && waiting.length === 0) return;
      const drop = new Set([...dangling, ...waiting].map((x) => x.uid));
      await client.patch(obj.metadata.name, 'merge', {
        metadata: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion, ownerReferences: (obj.metadata.ownerReferences ?? []).filter((x) => !drop.has(x.uid)) },
      }, { signal });
      return;
    }
    let policy: 'Foreground' | 'Background' | 'Orphan' = 'Background';
    if (waiting.length && this.dependentsOf(obj.metadata.uid).length) policy = 'Foreground'; // it blocks a foreground deletion: its own dependents go first
    else if (obj.metadata.finalizers?.includes(FINALIZER_ORPHAN)) policy = 'Orphan';
    else if (obj.metadata.finalizers?.includes(FINALIZER_FOREGROUND)) policy = 'Foreground';
    this.log.debug({ object: objectKey(obj), resource: qualifiedResource(r), policy }, 'Deleting object whose owners are gone');
    try {
      await client.delete(obj.metadata.name, { signal, propagationPolicy: policy, ...(obj.metadata.uid ? { preconditions: { uid: obj.metadata.uid } } : {}) });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  /** processDeletingDependentsItem: wait for blocking dependents, then drop the foregroundDeletion finalizer. */
  private async processDeletingDependents(r: ResourceDescriptor, owner: KubeObject, signal: AbortSignal): Promise<void> {
    const deps = this.dependentsOf(owner.metadata.uid);
    const blocking = deps.filter((d) => d.obj.metadata.ownerReferences?.some((ref) => ref.uid === owner.metadata.uid && ref.blockOwnerDeletion));
    if (blocking.length === 0) {
      // The cache may lag a dependent's creation; it would be orphaned and then collected anyway.
      await this.removeFinalizer(r, owner, FINALIZER_FOREGROUND, signal);
      return;
    }
    for (const d of deps) if (!d.obj.metadata.deletionTimestamp) this.enqueue(`${qualifiedResource(d.r)}|${objectKey(d.obj)}`);
  }

  /** orphanDependents: remove the owner from its dependents' ownerReferences, then the orphan finalizer. */
  private async orphanDependents(r: ResourceDescriptor, owner: KubeObject, signal: AbortSignal): Promise<void> {
    const uid = owner.metadata.uid;
    for (const d of this.dependentsOf(uid)) {
      try {
        await this.ctx.client.resource<KubeObject>(d.r, d.obj.metadata.namespace).patch(d.obj.metadata.name, 'merge', {
          metadata: { uid: d.obj.metadata.uid, resourceVersion: d.obj.metadata.resourceVersion, ownerReferences: (d.obj.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid) },
        }, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    await this.removeFinalizer(r, owner, FINALIZER_ORPHAN, signal);
  }

  private async removeFinalizer(r: ResourceDescriptor, obj: KubeObject, finalizer: string, signal: AbortSignal): Promise<void> {
    try {
      await this.ctx.client.resource<KubeObject>(r, obj.metadata.namespace).patch(obj.metadata.name, 'merge', {
        metadata: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion, finalizers: (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer) },
      }, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

