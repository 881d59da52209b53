/**
 * PersistentVolume controller, the binder (upstream pkg/controller/volume/persistentvolume):
 * binds claims to volumes (static, by size, access modes, class, selector, volumeName/claimRef),
 * keeps both sides' phases (Pending/Bound/Lost for claims; Pending/Available/Bound/Released/Failed
 * for volumes), hands claims of a class to its provisioner (volume.kubernetes.io/storage-provisioner)
 * and releases volumes whose claim is gone (Retain keeps them Released; a provisioned volume with
 * Delete is deleted by its provisioner). Decisions are pure (decisions.ts).
 * Watches PVs, PVCs and StorageClasses; keys are `claim:<ns>/<name>` and `volume:<name>`.
 * Writes PVs and PVCs (spec/metadata for binding, status for phases) and Events.
 */
import {
  ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_STORAGE_PROVISIONER, claimClass,
  isConflict, isNotFound, PersistentVolumeClaims, PersistentVolumes, StorageClasses,
  type PersistentVolume, type PersistentVolumeClaim, type PV, type PVC, type StorageClass,
} from '@mk8s/api';
import { resourceVersionCaughtUp, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import type { Obj } from '../../util/meta.js';
import { decideClaim, decideVolume, type Ev } from './decisions.js';

type Claim = Obj<PersistentVolumeClaim>;
type Volume = Obj<PersistentVolume>;

export class PersistentVolumeController extends BaseController {
  static readonly NAME = 'persistentvolume-binder';
  readonly name = PersistentVolumeController.NAME;
  readonly volumes: SharedInformer<Volume>;
  readonly claims: SharedInformer<Claim>;
  readonly classes: SharedInformer<Obj<StorageClass>>;
  /**
   * The resourceVersion of this controller's last write per object (`claim:<ns>/<name>`,
   * `volume:<name>`). A cached object older than that is stale: its sync waits for the informer
   * to bring the write back (which enqueues it again) instead of writing twice or conflicting.
   * Upstream's binder gets the same by storing its writes into its own caches.
   */
  private readonly written = new Map<string, string>();

  constructor(ctx: ControllerContext) {
    super(ctx, 'persistentvolume');
    this.defaultWorkers = 10; // each bind is three or four writes in a row; a burst of claims waits on the apiserver, not on CPU here
    this.volumes = ctx.informers.informerFor<Volume>(PersistentVolumes);
    this.claims = ctx.informers.informerFor<Claim>(PersistentVolumeClaims);
    this.classes = ctx.informers.informerFor<Obj<StorageClass>>(StorageClasses);
    const onVolume = (v: Volume) => {
      this.enqueue(`volume:${v.metadata.name}`);
      const ref = v.spec?.claimRef;
      if (ref?.name) this.enqueue(`claim:${ref.namespace ?? ''}/${ref.name}`);
      // A volume that is free now may be what a pending claim waits for (upstream's periodic claim resync).
      if (!ref && v.status?.phase === 'Available') this.enqueuePendingClaims();
    };
    this.volumes.addEventHandler({ onAdd: onVolume, onUpdate: (_, v) => onVolume(v), onDelete: onVolume });
    const onClaim = (c: Claim) => {
      this.enqueue(`claim:${c.metadata.namespace}/${c.metadata.name}`);
      if (c.spec?.volumeName) this.enqueue(`volume:${c.spec.volumeName}`);
    };
    this.claims.addEventHandler({ onAdd: onClaim, onUpdate: (_, c) => onClaim(c), onDelete: onClaim });
    this.classes.addEventHandler({ onAdd: () => this.enqueuePendingClaims(), onUpdate: () => this.enqueuePendingClaims() });
  }

  /** Records obj (the server's answer to a write) as the newest version of key. */
  private wrote<T extends { metadata: { resourceVersion?: string } }>(key: string, obj: T): T {
    this.written.set(key, obj.metadata.resourceVersion ?? '');
    return obj;
  }

  /** Whether the cached obj is older than this controller's last write of it (forgets the write once caught up). */
  private stale(key: string, obj: { metadata: { resourceVersion?: string } } | undefined): boolean {
    const w = this.written.get(key);
    if (w === undefined) return false;
    if (!obj || w === '' || resourceVersionCaughtUp(obj.metadata.resourceVersion, w)) { this.written.delete(key); return false; }
    return true;
  }

  private enqueuePendingClaims(): void {
    for (const c of this.claims.lister.list()) if (!c.spec?.volumeName) this.enqueue(`claim:${c.metadata.namespace}/${c.metadata.name}`);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    try {
      if (key.startsWith('claim:')) await this.syncClaim(key.slice(6), signal);
      else if (key.startsWith('volume:')) await this.syncVolume(key.slice(7), signal);
    } catch (err) {
      // Someone wrote meanwhile: the informer brings the new version and this key again.
      if (isConflict(err) || isNotFound(err)) { this.queue.addRateLimited(key); return; }
      throw err;
    }
  }

  private classMap(): Map<string, StorageClass> {
    return new Map(this.classes.lister.list().map((s) => [s.metadata.name, s]));
  }

  private event(obj: Claim | Volume, e: Ev | undefined): void {
    if (e) this.ctx.recorder.event(obj, e.type, e.reason, '%s', e.message);
  }

  private async syncClaim(key: string, signal: AbortSignal): Promise<void> {
    const claim = this.claims.lister.get(key);
    if (this.stale(`claim:${key}`, claim)) return;
    if (!claim || claim.metadata.deletionTimestamp) return;
    const d = decideClaim(claim as PVC, this.volumes.lister.list() as PV[], this.classMap());
    const pvcs = this.ctx.client.resource<Claim>(PersistentVolumeClaims, claim.metadata.namespace ?? '');
    switch (d.kind) {
      case 'pending': {
        let c = claim;
        if (d.provisioner && c.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== d.provisioner) {
          const next = structuredClone(c);
          next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [ANN_STORAGE_PROVISIONER]: d.provisioner, [ANN_BETA_STORAGE_PROVISIONER]: d.provisioner };
          c = this.wrote(`claim:${key}`, await pvcs.update(next, { signal }));
          this.event(c, d.event);
        } else if (!d.provisioner) {
          this.event(c, d.event);
        }
        if (c.status?.phase !== 'Pending') this.wrote(`claim:${key}`, await pvcs.updateStatus({ ...structuredClone(c), status: { ...(c.status ?? {}), phase: 'Pending' } }, { signal }));
        return;
      }
      case 'lost':
        if (claim.status?.phase !== 'Lost') {
          this.wrote(`claim:${key}`, await pvcs.updateStatus({ ...structuredClone(claim), status: { ...(claim.status ?? {}), phase: 'Lost' } }, { signal }));
          this.event(claim, d.event);
        }
        return;
      case 'bind':
      case 'bound':
        await this.bind(d.volume as Volume, claim, signal);
        return;
    }
  }

  /** bind: volume.claimRef, volume Bound, claim.volumeName + bind-completed, claim Bound (upstream order). Idempotent. */
  private async bind(volume: Volume, claim: Claim, signal: AbortSignal): Promise<void> {
    const pvs = this.ctx.client.resource<Volume>(PersistentVolumes);
    const pvcs = this.ctx.client.resource<Claim>(PersistentVolumeClaims, claim.metadata.namespace ?? '');
    const vKey = `volume:${volume.metadata.name}`;
    const cKey = `claim:${claim.metadata.namespace}/${claim.metadata.name}`;
    // The volume's own write comes back through its informer, which enqueues this claim again.
    if (this.stale(vKey, volume)) return;
    let v = volume;
    const ref = v.spec?.claimRef;
    if (!ref || ref.uid !== claim.metadata.uid || ref.name !== claim.metadata.name || ref.namespace !== claim.metadata.namespace) {
      const next = structuredClone(v);
      next.spec = { ...(next.spec ?? {}), claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claim.metadata.namespace ?? '', name: claim.metadata.name, uid: claim.metadata.uid ?? '', ...(claim.metadata.resourceVersion ? { resourceVersion: claim.metadata.resourceVersion } : {}) } };
      if (!ref) next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
      v = this.wrote(vKey, await pvs.update(next, { signal }));
    }
    if (v.status?.phase !== 'Bound') v = this.wrote(vKey, await pvs.updateStatus({ ...structuredClone(v), status: { ...(v.status ?? {}), phase: 'Bound' } }, { signal }));
    let c = claim;
    if (c.spec?.volumeName !== v.metadata.name || c.metadata.annotations?.[ANN_BIND_COMPLETED] === undefined) {
      const next = structuredClone(c);
      const byController = !c.spec?.volumeName;
      next.spec = { ...(next.spec ?? {}), volumeName: v.metadata.name };
      next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [ANN_BIND_COMPLETED]: 'yes', ...(byController ? { [ANN_BOUND_BY_CONTROLLER]: 'yes' } : {}) };
      c = this.wrote(cKey, await pvcs.update(next, { signal }));
      this.log.info({ claim: `${c.metadata.namespace}/${c.metadata.name}`, volume: v.metadata.name, class: claimClass(c as PVC) }, 'Bound claim to volume');
    }
    const capacity = v.spec?.capacity ?? {};
    const accessModes = v.spec?.accessModes ?? [];
    const st = c.status ?? {};
    if (st.phase !== 'Bound' || JSON.stringify(st.capacity ?? {}) !== JSON.stringify(capacity) || JSON.stringify(st.accessModes ?? []) !== JSON.stringify(accessModes)) {
      this.wrote(cKey, await pvcs.updateStatus({ ...structuredClone(c), status: { ...st, phase: 'Bound', capacity: { ...capacity }, accessModes: [...accessModes] } }, { signal }));
    }
  }

  private async syncVolume(name: string, signal: AbortSignal): Promise<void> {
    const volume = this.volumes.lister.get(name);
    if (this.stale(`volume:${name}`, volume)) return;
    if (!volume) return;
    const ref = volume.spec?.claimRef;
    const claim = ref?.name ? this.claims.lister.get(`${ref.namespace ?? ''}/${ref.name}`) : undefined;
    const d = decideVolume(volume as PV, claim as PVC | undefined);
    const pvs = this.ctx.client.resource<Volume>(PersistentVolumes);
    switch (d.kind) {
      case 'none': return;
      case 'phase':
        this.wrote(`volume:${name}`, await pvs.updateStatus({ ...structuredClone(volume), status: { ...(volume.status ?? {}), phase: d.phase, ...(d.message ? { message: d.message } : {}) } }, { signal }));
        this.event(volume, d.event);
        if (d.phase === 'Released') this.log.info({ volume: name, policy: volume.spec?.persistentVolumeReclaimPolicy }, 'Released volume');
        return;
      case 'failDelete':
        this.wrote(`volume:${name}`, await pvs.updateStatus({ ...structuredClone(volume), status: { ...(volume.status ?? {}), phase: 'Failed', message: d.event.message } }, { signal }));
        this.event(volume, d.event);
        return;
      case 'unbind': {
        const next = structuredClone(volume);
        if (next.spec) delete next.spec.claimRef;
        if (next.metadata.annotations) delete next.metadata.annotations[ANN_BOUND_BY_CONTROLLER];
        const v = await pvs.update(next, { signal });
        this.wrote(`volume:${name}`, await pvs.updateStatus({ ...structuredClone(v), status: { ...(v.status ?? {}), phase: 'Available' } }, { signal }));
        return;
      }
    }
  }
}
