/**
 * The protection controllers (upstream pkg/controller/volume/pvcprotection and pvprotection): a
 * claim being deleted keeps kubernetes.io/pvc-protection while any pod that is not finished
 * names it; a volume being deleted keeps kubernetes.io/pv-protection while it is Bound. Watch
 * claims and pods / volumes; write only metadata.finalizers.
 */
import { isConflict, isNotFound, PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER, PersistentVolumeClaims, PersistentVolumes, Pods, type PersistentVolume, type PersistentVolumeClaim, type Pod } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import type { Obj } from '../../util/meta.js';

export { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER };

/** The claims a pod's volumes name. */
export const podClaimNames = (pod: Pod): string[] =>
  (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));

/** A pod uses its claims until it has finished (Succeeded/Failed) or is gone. */
export const podUsesClaim = (pod: Pod, claim: string): boolean =>
  pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed' && podClaimNames(pod).includes(claim);

/** Whether the pvc-protection finalizer may go: the claim is being deleted and no pod uses it. */
export function canReleaseClaim(claim: PersistentVolumeClaim, pods: readonly Pod[]): boolean {
  const m = claim.metadata ?? {};
  if (!m.deletionTimestamp || !(m.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER)) return false;
  return !pods.some((p) => p.metadata?.namespace === m.namespace && podUsesClaim(p, m.name ?? ''));
}

/** Whether the pv-protection finalizer may go: the volume is being deleted and not Bound. */
export function canReleaseVolume(pv: PersistentVolume): boolean {
  const m = pv.metadata ?? {};
  return !!m.deletionTimestamp && (m.finalizers ?? []).includes(PV_PROTECTION_FINALIZER) && pv.status?.phase !== 'Bound';
}

export class PVCProtectionController extends BaseController {
  static readonly NAME = 'persistentvolumeclaim-protection';
  readonly name = PVCProtectionController.NAME;
  readonly claims: SharedInformer<Obj<PersistentVolumeClaim>>;
  readonly pods: SharedInformer<Obj<Pod>>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'pvcprotection');
    this.claims = ctx.informers.informerFor<Obj<PersistentVolumeClaim>>(PersistentVolumeClaims);
    this.pods = ctx.informers.informerFor<Obj<Pod>>(Pods);
    const onClaim = (c: Obj<PersistentVolumeClaim>) => { if (c.metadata.deletionTimestamp) this.enqueue(`${c.metadata.namespace}/${c.metadata.name}`); };
    this.claims.addEventHandler({ onAdd: onClaim, onUpdate: (_, c) => onClaim(c) });
    const onPod = (p: Obj<Pod>) => { for (const n of podClaimNames(p)) this.enqueue(`${p.metadata.namespace}/${n}`); };
    this.pods.addEventHandler({ onUpdate: (_, p) => onPod(p), onDelete: onPod });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const claim = this.claims.lister.get(key);
    if (!claim || !canReleaseClaim(claim, this.pods.lister.list(claim.metadata.namespace))) return;
    // The cache may lag behind a pod just created: ask the apiserver before letting go (upstream askAPIServer).
    const ns = claim.metadata.namespace ?? '';
    const live = await this.ctx.client.resource<Obj<Pod>>(Pods, ns).list({ signal });
    if (!canReleaseClaim(claim, live.items)) return;
    const finalizers = (claim.metadata.finalizers ?? []).filter((f) => f !== PVC_PROTECTION_FINALIZER);
    try {
      await this.ctx.client.resource(PersistentVolumeClaims, ns).update({ ...structuredClone(claim), metadata: { ...structuredClone(claim.metadata), finalizers } }, { signal });
      this.log.info({ claim: key }, 'Removed protection finalizer from claim');
    } catch (err) {
      if (isNotFound(err)) return;
      if (isConflict(err)) { this.queue.addRateLimited(key); return; }
      throw err;
    }
  }
}

export class PVProtectionController extends BaseController {
  static readonly NAME = 'persistentvolume-protection';
  readonly name = PVProtectionController.NAME;
  readonly volumes: SharedInformer<Obj<PersistentVolume>>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'pvprotection');
    this.volumes = ctx.informers.informerFor<Obj<PersistentVolume>>(PersistentVolumes);
    const on = (v: Obj<PersistentVolume>) => { if (v.metadata.deletionTimestamp) this.enqueue(v.metadata.name); };
    this.volumes.addEventHandler({ onAdd: on, onUpdate: (_, v) => on(v) });
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const pv = this.volumes.lister.get(name);
    if (!pv || !canReleaseVolume(pv)) return;
    const finalizers = (pv.metadata.finalizers ?? []).filter((f) => f !== PV_PROTECTION_FINALIZER);
    try {
      await this.ctx.client.resource(PersistentVolumes).update({ ...structuredClone(pv), metadata: { ...structuredClone(pv.metadata), finalizers } }, { signal });
      this.log.info({ volume: name }, 'Removed protection finalizer from volume');
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}
