/**
 * The PV controller's decisions, pure (upstream pv_controller.go syncClaim / syncVolume): given a
 * claim or a volume and what the caches hold, what should change. The controller executes them.
 */
import {
  ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER,
  claimClass, findMatchingVolume, isVolumeBoundToClaim, volumeSatisfiesClaim, type PV, type PVC, type StorageClass,
} from '@mk8s/api';

export interface Ev { type: 'Normal' | 'Warning'; reason: string; message: string }

export type ClaimDecision =
  /** Leave the claim Pending (status written when it differs); maybe annotate it for a provisioner. */
  | { kind: 'pending'; event?: Ev; provisioner?: string }
  /** Bind volume and claim to each other (volume first, as upstream), both end Bound. */
  | { kind: 'bind'; volume: PV }
  /** Both sides already point at each other: the claim's status must say Bound. */
  | { kind: 'bound'; volume: PV }
  | { kind: 'lost'; event: Ev };

export type VolumeDecision =
  | { kind: 'none' }
  | { kind: 'phase'; phase: 'Available' | 'Bound' | 'Released' | 'Failed'; message?: string; event?: Ev }
  /** The controller bound this volume to a claim that went elsewhere: clear claimRef, Available. */
  | { kind: 'unbind' }
  /** Released with Delete and no provisioner owns it: nothing here can delete the data. */
  | { kind: 'failDelete'; event: Ev };

export const WAIT_FOR_FIRST_CONSUMER_MSG = 'waiting for first consumer to be created before binding';
export const NO_VOLUMES_NO_CLASS_MSG = 'no persistent volumes available for this claim and no storage class is set';
export const externalProvisioningMsg = (p: string) =>
  `Waiting for a volume to be created either by the external provisioner '${p}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`;

const ann = (o: { metadata?: { annotations?: Record<string, string> } }, k: string) => o.metadata?.annotations?.[k];

/** syncClaim: claims without bind-completed go through the unbound path, the rest are checked. */
export function decideClaim(claim: PVC, volumes: readonly PV[], classes: ReadonlyMap<string, StorageClass>): ClaimDecision {
  const byName = (n: string) => volumes.find((v) => v.metadata.name === n);
  const volumeName = claim.spec?.volumeName ?? '';
  if (ann(claim, ANN_BIND_COMPLETED) === undefined) {
    if (!volumeName) {
      const cls = claimClass(claim);
      const sc = cls ? classes.get(cls) : undefined;
      const delay = sc?.volumeBindingMode === 'WaitForFirstConsumer' && ann(claim, ANN_SELECTED_NODE) === undefined;
      const match = findMatchingVolume(claim, volumes, { delayBinding: delay });
      if (match) return { kind: 'bind', volume: match };
      if (delay) return { kind: 'pending', event: { type: 'Normal', reason: 'WaitForFirstConsumer', message: WAIT_FOR_FIRST_CONSUMER_MSG } };
      if (cls) {
        if (!sc) return { kind: 'pending', event: { type: 'Warning', reason: 'ProvisioningFailed', message: `storageclass.storage.k8s.io "${cls}" not found` } };
        return { kind: 'pending', provisioner: sc.provisioner, event: { type: 'Normal', reason: 'ExternalProvisioning', message: externalProvisioningMsg(sc.provisioner) } };
      }
      return { kind: 'pending', event: { type: 'Normal', reason: 'FailedBinding', message: NO_VOLUMES_NO_CLASS_MSG } };
    }
    // The user (or the scheduler) asked for a particular volume.
    const v = byName(volumeName);
    if (!v) return { kind: 'pending' };
    if (!v.spec?.claimRef) {
      const why = volumeSatisfiesClaim(v, claim);
      if (why) return { kind: 'pending', event: { type: 'Warning', reason: 'VolumeMismatch', message: `Cannot bind to requested volume "${volumeName}": ${why}` } };
      return { kind: 'bind', volume: v };
    }
    if (isVolumeBoundToClaim(v, claim)) return { kind: 'bind', volume: v };
    return { kind: 'pending', event: { type: 'Warning', reason: 'FailedBinding', message: 'volume already bound to a different claim.' } };
  }
  // syncBoundClaim
  if (!volumeName) return { kind: 'lost', event: { type: 'Warning', reason: 'ClaimLost', message: 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!' } };
  const v = byName(volumeName);
  if (!v) return { kind: 'lost', event: { type: 'Warning', reason: 'ClaimLost', message: 'Bound claim has lost its PersistentVolume. Data on the volume is lost!' } };
  if (!v.spec?.claimRef) return { kind: 'bind', volume: v };
  if (v.spec.claimRef.uid === claim.metadata.uid) return { kind: 'bound', volume: v };
  return { kind: 'lost', event: { type: 'Warning', reason: 'ClaimMisbound', message: 'Two claims are bound to the same volume, this one is bound incorrectly' } };
}

/**
 * syncVolume. claim: the claim claimRef names, from the cache (undefined when absent; a claim
 * with another uid counts as absent: the named one was deleted and re-created).
 */
export function decideVolume(volume: PV, claim: PVC | undefined): VolumeDecision {
  const ref = volume.spec?.claimRef;
  const phase = volume.status?.phase;
  const set = (p: 'Available' | 'Bound' | 'Released' | 'Failed'): VolumeDecision => (phase === p ? { kind: 'none' } : { kind: 'phase', phase: p });
  if (!ref) return set('Available');
  // Pre-bound by name only: waiting for that claim.
  if (!ref.uid) return set('Available');
  const same = claim && claim.metadata.uid === ref.uid ? claim : undefined;
  if (!same) {
    if (phase === 'Failed') return { kind: 'none' };
    const policy = volume.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
    if (policy === 'Delete' && !ann(volume, ANN_DYNAMICALLY_PROVISIONED)) {
      return { kind: 'failDelete', event: { type: 'Warning', reason: 'VolumeFailedDelete', message: `error getting deleter volume plugin for volume "${volume.metadata.name}": no deletable volume plugin matched` } };
    }
    if (policy === 'Recycle') return { kind: 'phase', phase: 'Failed', message: 'Recycle is not supported', event: { type: 'Warning', reason: 'VolumeFailedRecycle', message: 'no volume plugin matched' } };
    // Retain keeps it Released; Delete of a provisioned volume is its provisioner's work.
    return set('Released');
  }
  if (!same.spec?.volumeName) {
    // The claim has not caught up yet (its sync binds it); a volume the controller bound stays as is.
    return { kind: 'none' };
  }
  if (same.spec.volumeName === volume.metadata.name) return set('Bound');
  // The claim is bound to another volume.
  if (ann(volume, ANN_BOUND_BY_CONTROLLER) !== undefined) return { kind: 'unbind' };
  return { kind: 'none' };
}

/** The provisioner a claim waits for, if any (volume.kubernetes.io/storage-provisioner). */
export const claimProvisioner = (c: PVC): string | undefined => ann(c, ANN_STORAGE_PROVISIONER);
