/**
 * Namespace controller (upstream pkg/controller/namespace): a namespace being deleted is kept
 * Terminating while everything in it is deleted; once its content is gone the `kubernetes`
 * finalizer is removed through /finalize and the namespace disappears.
 * Watches Namespaces; lists and deletes every namespaced resource discovery reports with list and
 * delete (custom resources included; discovery is read afresh on every sync); writes
 * Namespace status (NamespaceDeletionDiscoveryFailure, NamespaceContentRemaining,
 * NamespaceDeletionContentFailure) and /finalize.
 */
import { isConflict, isNotFound, Namespaces, qualifiedResource, type KubeObject, type Namespace, type NamespaceCondition, type ResourceDescriptor } from '@mk8s/api';
import { partialResources, type Clientset, type DiscoveryClient, type SharedInformer } from '@mk8s/client';
import { BaseController, discoveryOf, type ControllerContext } from '../../controller.js';
import { clone, rfc3339, type Obj } from '../../util/meta.js';

type NsObj = Obj<Namespace>;
export const FINALIZER_KUBERNETES = 'kubernetes';

export interface NamespaceControllerOptions {
  /** Resources emptied out of a terminating namespace. @default every namespaced, deletable resource discovery reports */
  resources?: readonly ResourceDescriptor[];
  /** How soon to look again while content remains. @default 1000 */
  recheckMs?: number;
}

/** The resources a terminating namespace is emptied of (pure): namespaced, with list and delete. */
export function deletableNamespaced(resources: readonly ResourceDescriptor[]): ResourceDescriptor[] {
  return resources.filter((r) => r.namespaced && r.verbs.includes('list') && r.verbs.includes('delete'));
}

/** PUT /api/v1/namespaces/{name}/finalize (the one write ResourceClient has no method for). */
export async function finalizeNamespace(client: Clientset, ns: NsObj, signal: AbortSignal): Promise<NsObj> {
  const raw = client as Clientset & { requestRaw?: (req: { method: 'PUT'; path: string; body: unknown; contentType: string; signal: AbortSignal }) => Promise<{ body: { json(): Promise<unknown> } }> };
  if (typeof raw.requestRaw === 'function') {
    const res = await raw.requestRaw({ method: 'PUT', path: `/api/v1/namespaces/${encodeURIComponent(ns.metadata.name)}/finalize`, body: ns, contentType: 'application/json', signal });
    return (await res.body.json()) as NsObj;
  }
  // Fakes: a plain update of spec.finalizers has the same effect on their store.
  return client.resource<NsObj>(Namespaces).update(ns, { signal });
}

export class NamespaceController extends BaseController {
  static readonly NAME = 'namespace';
  readonly name = NamespaceController.NAME;
  readonly namespaces: SharedInformer<NsObj>;
  private readonly fixed: readonly ResourceDescriptor[] | undefined;
  private readonly discovery: DiscoveryClient;
  private readonly recheckMs: number;

  constructor(ctx: ControllerContext, o: NamespaceControllerOptions = {}) {
    super(ctx, 'namespace');
    this.fixed = o.resources;
    // Read afresh on every sync, as upstream's deleter does: a cached answer could miss a CRD
    // established moments ago and finalize the namespace with its custom objects left behind.
    this.discovery = discoveryOf(ctx, 0);
    this.recheckMs = o.recheckMs ?? 1000;
    this.namespaces = ctx.informers.informerFor<NsObj>(Namespaces);
    this.namespaces.addEventHandler({
      onAdd: (n) => { if (n.metadata.deletionTimestamp) this.enqueue(n.metadata.name); },
      onUpdate: (_, n) => { if (n.metadata.deletionTimestamp) this.enqueue(n.metadata.name); },
    });
  }

  async reconcile(name: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const cached = this.namespaces.lister.get(name);
    if (!cached?.metadata.deletionTimestamp) return;
    const nsClient = this.ctx.client.resource<NsObj>(Namespaces);
    // Work from the server's copy: the finalize write must not be based on a stale cache.
    let ns: NsObj;
    try { ns = await nsClient.get(name, { signal }); } catch (err) { if (isNotFound(err)) return; throw err; }
    if (!ns.metadata.deletionTimestamp) return;
    if (ns.status?.phase !== 'Terminating') ns = await nsClient.updateStatus({ ...clone(ns), status: { ...(ns.status ?? {}), phase: 'Terminating' } }, { signal });
    if (!(ns.spec?.finalizers ?? []).includes(FINALIZER_KUBERNETES)) return this.deleteNamespace(ns, signal);

    let resources: readonly ResourceDescriptor[];
    let discoveryErr: unknown;
    try {
      resources = this.fixed ?? deletableNamespaced(await this.discovery.serverPreferredResources(signal));
    } catch (err) {
      if (signal.aborted) throw err;
      discoveryErr = err;
      // Upstream deletes what the groups that answered report, and finalizes only once discovery is whole.
      try { resources = deletableNamespaced(partialResources(err)); } catch { resources = []; }
    }
    const { remaining, failures } = await this.deleteAllContent(name, resources, signal);
    if (discoveryErr !== undefined || remaining.size > 0 || failures.length > 0) {
      await this.setContentConditions(ns, remaining, failures, discoveryErr, signal);
      if (discoveryErr !== undefined) throw discoveryErr;
      if (failures.length) throw failures[0]!.err;
      return { requeueAfterMs: this.recheckMs };
    }
    const next = clone(ns);
    next.spec = { ...(next.spec ?? {}), finalizers: (ns.spec?.finalizers ?? []).filter((f) => f !== FINALIZER_KUBERNETES) };
    try {
      ns = await finalizeNamespace(this.ctx.client, next, signal);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    this.log.info({ namespace: name }, 'Namespace content deleted, finalized namespace');
    if ((ns.spec?.finalizers ?? []).length === 0) return this.deleteNamespace(ns, signal);
  }

  private async deleteNamespace(ns: NsObj, signal: AbortSignal): Promise<void> {
    // Finalized and marked: the apiserver removes it once metadata.finalizers are empty too; a
    // delete is the nudge upstream gives (harmless when it is already gone).
    if ((ns.metadata.finalizers ?? []).length) return;
    try {
      await this.ctx.client.resource<NsObj>(Namespaces).delete(ns.metadata.name, { signal, ...(ns.metadata.uid ? { preconditions: { uid: ns.metadata.uid } } : {}) });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  /** Deletes everything in the namespace; returns what still exists (by resource) and what failed. */
  private async deleteAllContent(namespace: string, resources: readonly ResourceDescriptor[], signal: AbortSignal): Promise<{ remaining: Map<string, number>; failures: { resource: string; err: unknown }[] }> {
    const remaining = new Map<string, number>();
    const failures: { resource: string; err: unknown }[] = [];
    await Promise.all(resources.map(async (r) => {
      const client = this.ctx.client.resource<KubeObject>(r, namespace);
      try {
        const { items } = await client.list({ signal });
        if (items.length === 0) return;
        remaining.set(qualifiedResource(r), items.length);
        await Promise.all(items.filter((o) => !o.metadata.deletionTimestamp).map(async (o) => {
          try {
            await client.delete(o.metadata.name, { signal, propagationPolicy: 'Background' });
          } catch (err) {
            if (!isNotFound(err) && !isConflict(err)) throw err;
          }
        }));
      } catch (err) {
        if (isNotFound(err)) return;
        failures.push({ resource: qualifiedResource(r), err });
      }
    }));
    return { remaining, failures };
  }

  /** The NamespaceContentRemaining / NamespaceDeletionContentFailure conditions `kubectl describe ns` shows. */
  private async setContentConditions(ns: NsObj, remaining: Map<string, number>, failures: { resource: string; err: unknown }[], discoveryErr: unknown, signal: AbortSignal): Promise<void> {
    const now = rfc3339(this.ctx.clock.now());
    const cond = (type: string, ok: boolean, reason: string, message: string): NamespaceCondition =>
      ({ type, status: ok ? 'False' : 'True', reason, message, lastTransitionTime: now });
    const want: NamespaceCondition[] = [
      discoveryErr !== undefined
        ? cond('NamespaceDeletionDiscoveryFailure', false, 'DiscoveryFailed', `Discovery failed for some groups: ${(discoveryErr as Error).message ?? String(discoveryErr)}`)
        : cond('NamespaceDeletionDiscoveryFailure', true, 'ResourcesDiscovered', 'All resources successfully discovered'),
      remaining.size
        ? cond('NamespaceContentRemaining', false, 'SomeResourcesRemain', `Some resources are remaining: ${[...remaining].sort().map(([r, n]) => `${r} has ${n} resource instances`).join(', ')}`)
        : cond('NamespaceContentRemaining', true, 'ContentRemoved', 'All content successfully removed'),
      failures.length
        ? cond('NamespaceDeletionContentFailure', false, 'ContentDeletionFailed', `Failed to delete all resource types, ${failures.length} remaining: ${failures.map((f) => (f.err as Error).message).join(', ')}`)
        : cond('NamespaceDeletionContentFailure', true, 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'),
    ];
    const cur = ns.status?.conditions ?? [];
    const same = want.every((w) => cur.some((c) => c.type === w.type && c.status === w.status && c.message === w.message));
    if (same) return;
    const merged = [...cur.filter((c) => !want.some((w) => w.type === c.type)), ...want.map((w) => {
      const old = cur.find((c) => c.type === w.type);
      return old && old.status === w.status ? { ...w, lastTransitionTime: old.lastTransitionTime ?? now } : w;
    })];
    try {
      await this.ctx.client.resource<NsObj>(Namespaces).updateStatus({ ...clone(ns), status: { ...(ns.status ?? {}), conditions: merged } }, { signal });
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err)) throw err;
    }
  }
}
