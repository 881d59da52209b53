/**
 * Resource quota controller (upstream pkg/controller/resourcequota): keeps every ResourceQuota's
 * status.hard equal to spec.hard and status.used equal to what the namespace really holds, so
 * that usage the ResourceQuota admission plugin charged is released when objects go away (or a
 * charged write never happened). Watches ResourceQuotas and the kinds the quotas count (pods,
 * services, configmaps, secrets, replicationcontrollers, resourcequotas at start; any other
 * `count/<resource>.<group>` kind on first use, as upstream's quota monitor); key: the quota's
 * "namespace/name"; writes resourcequotas/status. Full recalculation every resyncMs.
 */
import {
  ConfigMaps, equalLists, canonicalList, countedResource, lookupResource, matchesResourceName, matchesScopes, Pods,
  ReplicationControllers, ResourceQuotas, Secrets, Services, usageOf, addLists, maskList,
  type KubeObject, type ResourceAmounts, type ResourceDescriptor, type ResourceQuota,
} from '@mk8s/api';
import { objectKey, splitKey, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { clone, type Obj } from '../../util/meta.js';

export const NAME = 'resourcequota';
/** Upstream's --resource-quota-sync-period. */
export const DEFAULT_RESYNC_MS = 5 * 60_000;

type RQ = Obj<ResourceQuota>;
type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ResourceQuotaControllerOptions { resyncMs?: number }

/**
 * CalculateUsage: for each name in quota.spec.hard, the sum over objects (by resource) of what
 * they cost, counting only objects the quota's scopes select. Names no served kind counts are 0.
 */
export function calculateUsage(quota: Any, objectsOf: (r: Pick<ResourceDescriptor, 'group' | 'resource'>) => readonly KubeObject[], nowMs: number): ResourceAmounts {
  const hard = Object.keys(quota.spec?.hard ?? {});
  const used: ResourceAmounts = {};
  for (const n of hard) used[n] = '0';
  const kinds = new Map<string, Pick<ResourceDescriptor, 'group' | 'resource'>>();
  for (const n of hard) {
    const gr = countedResource(n) ?? { group: '', resource: 'pods' };
    kinds.set(`${gr.group}/${gr.resource}`, gr);
  }
  for (const r of kinds.values()) {
    const names = hard.filter((n) => matchesResourceName(r, n));
    if (names.length === 0) continue;
    let sum: ResourceAmounts = {};
    for (const o of objectsOf(r)) {
      if (!matchesScopes(quota, r, o as Any)) continue;
      sum = addLists(sum, maskList(usageOf(r, o as Any, nowMs), names));
    }
    Object.assign(used, canonicalList(sum));
  }
  return used;
}

export class ResourceQuotaController extends BaseController {
  readonly name = NAME;
  readonly quotas: SharedInformer<RQ>;
  private readonly monitors = new Map<string, SharedInformer<KubeObject>>();
  private readonly resyncMs: number;

  constructor(ctx: ControllerContext, o: ResourceQuotaControllerOptions = {}) {
    super(ctx, NAME);
    this.resyncMs = o.resyncMs ?? DEFAULT_RESYNC_MS;
    this.quotas = ctx.informers.informerFor<RQ>(ResourceQuotas);
    this.quotas.addEventHandler({
      onAdd: (q) => this.enqueue(objectKey(q)),
      // Only a change of spec needs a recalculation; status writes (ours, admission's) do not.
      onUpdate: (old, q) => { if (JSON.stringify(old.spec) !== JSON.stringify(q.spec) || !equalLists(q.status?.hard, canonicalList(q.spec?.hard))) this.enqueue(objectKey(q)); },
    });
    for (const r of [Pods, Services, ConfigMaps, Secrets, ReplicationControllers, ResourceQuotas]) this.monitor(r);
  }

  /** The informer of r, created (and handlers added) on first use. */
  private monitor(r: ResourceDescriptor): SharedInformer<KubeObject> {
    const k = `${r.group}/${r.resource}`;
    let inf = this.monitors.get(k);
    if (inf) return inf;
    inf = r === ResourceQuotas ? (this.quotas as unknown as SharedInformer<KubeObject>) : this.ctx.informers.informerFor<KubeObject>(r);
    this.monitors.set(k, inf);
    const replenish = (o: KubeObject) => { for (const q of this.quotas.lister.list(o.metadata.namespace)) this.enqueue(objectKey(q)); };
    inf.addEventHandler({
      onAdd: replenish,
      onDelete: replenish,
      // Pods release compute when they finish; services' node ports and load balancers change with their type.
      onUpdate: (old, cur) => {
        if (r === Pods && (old as Any).status?.phase !== (cur as Any).status?.phase) replenish(cur);
        else if (r === Services && JSON.stringify((old as Any).spec) !== JSON.stringify((cur as Any).spec)) replenish(cur);
      },
    });
    return inf;
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const quota = this.quotas.lister.get(key);
    if (!quota) return;
    const { namespace } = splitKey(key);
    // Informers of kinds first counted here must sync before their counts mean anything.
    let pending = false;
    for (const n of Object.keys(quota.spec?.hard ?? {})) {
      const gr = countedResource(n);
      const r = gr && lookupResource(gr.group, gr.resource);
      if (r && !this.monitor(r).hasSynced()) pending = true;
    }
    if (pending) return { requeueAfterMs: 1000 };
    const used = calculateUsage(quota, (gr) => {
      const r = lookupResource(gr.group, gr.resource);
      return r ? this.monitor(r).lister.list(namespace) : [];
    }, this.ctx.clock.now());
    const hard = canonicalList(quota.spec?.hard);
    if (!equalLists(quota.status?.hard, hard) || !equalLists(quota.status?.used, used)) {
      const next = clone(quota);
      next.status = { hard, used };
      await this.ctx.client.resource<RQ>(ResourceQuotas, namespace).updateStatus(next, { signal });
      this.log.debug({ quota: key, used }, 'Updated quota usage');
    }
    return { requeueAfterMs: this.resyncMs };
  }
}
