/**
 * Pure PersistentVolume/claim matching, shared by the PV controller (binder) and the scheduler's
 * VolumeBinding plugin, as upstream's pkg/controller/volume/persistentvolume/util (which the
 * scheduler imports too). No I/O; objects are read, never changed.
 */
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { compareQuantities, isValidQuantity } from '../quantity.js';
import { labelSelectorFromObject } from '../selectors/labels.js';

/** The storage-object-in-use-protection finalizers (pkg/volume/util): the admission plugin adds them, the protection controllers remove them, the kubelet reads them. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/** Annotations of the binding protocol (pv_controller.go, volume/util). */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

export type PV = PersistentVolume & { metadata: { name: string } };
export type PVC = PersistentVolumeClaim & { metadata: { name: string } };

/** GetPersistentVolumeClaimClass: the beta annotation wins, then spec.storageClassName, else "". */
export function claimClass(c: PersistentVolumeClaim): string {
  return c.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS] ?? c.spec?.storageClassName ?? '';
}

/** GetPersistentVolumeClass. */
export function volumeClass(v: PersistentVolume): string {
  return v.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS] ?? v.spec?.storageClassName ?? '';
}

/** IsVolumeBoundToClaim: claimRef names the claim (and its uid, once set). */
export function isVolumeBoundToClaim(v: PersistentVolume, c: PersistentVolumeClaim): boolean {
  const ref = v.spec?.claimRef;
  if (!ref) return false;
  if (ref.name !== c.metadata?.name || (ref.namespace ?? '') !== (c.metadata?.namespace ?? '')) return false;
  return !ref.uid || ref.uid === c.metadata?.uid;
}

const storageOf = (res: Record<string, string> | undefined): string => res?.['storage'] ?? '0';
const sizeAtLeast = (have: string, want: string): boolean => isValidQuantity(have) && isValidQuantity(want) && compareQuantities(have, want) >= 0;

/** The volume offers every access mode the claim asks for (upstream indexes volumes by their modes). */
export function accessModesContain(volumeModes: readonly string[] | undefined, claimModes: readonly string[] | undefined): boolean {
  const have = new Set(volumeModes ?? []);
  return (claimModes ?? []).every((m) => have.has(m));
}

const volumeModeOf = (m: string | undefined) => m ?? 'Filesystem';

/**
 * checkVolumeSatisfyClaim: why a volume named by the claim (spec.volumeName) cannot serve it, or
 * undefined when it can. The reasons are upstream's error texts.
 */
export function volumeSatisfiesClaim(v: PersistentVolume, c: PersistentVolumeClaim): string | undefined {
  const requested = storageOf(c.spec?.resources?.requests);
  const capacity = storageOf(v.spec?.capacity);
  if (!sizeAtLeast(capacity, requested)) return 'requested PV is too small';
  if (volumeClass(v) !== claimClass(c)) return 'storageClassName does not match';
  if (volumeModeOf(v.spec?.volumeMode) !== volumeModeOf(c.spec?.volumeMode)) return 'incompatible volumeMode';
  if (!accessModesContain(v.spec?.accessModes, c.spec?.accessModes)) return 'incompatible accessMode';
  return undefined;
}

export interface MatchOptions {
  /** WaitForFirstConsumer without a chosen node: only a volume pre-bound to the claim matches. */
  delayBinding?: boolean;
  /**
   * The scheduler's path: whether the volume's node affinity admits the node under consideration.
   * Absent: node affinity is not considered (the controller's path).
   */
  nodeMatches?: (v: PersistentVolume) => boolean;
}

/**
 * FindMatchingVolume: the volume pre-bound to the claim if there is one, else the smallest
 * Available, unclaimed volume of the claim's class, volume mode and access modes that is at least
 * as large as the request and matches the claim's selector (and the node, on the scheduler's path).
 */
export function findMatchingVolume<V extends PersistentVolume>(c: PersistentVolumeClaim, volumes: readonly V[], o: MatchOptions = {}): V | undefined {
  const requested = storageOf(c.spec?.resources?.requests);
  const wantClass = claimClass(c);
  let selector: ReturnType<typeof labelSelectorFromObject> | undefined;
  if (c.spec?.selector) {
    try { selector = labelSelectorFromObject(c.spec.selector); } catch { return undefined; }
  }
  let best: V | undefined;
  for (const v of volumes) {
    if (volumeModeOf(v.spec?.volumeMode) !== volumeModeOf(c.spec?.volumeMode)) continue;
    if (v.metadata?.deletionTimestamp) continue;
    if (!accessModesContain(v.spec?.accessModes, c.spec?.accessModes)) continue;
    const nodeOk = o.nodeMatches ? o.nodeMatches(v) : true;
    if (isVolumeBoundToClaim(v, c)) return nodeOk ? v : undefined;
    if (!o.nodeMatches && o.delayBinding) continue;
    if (v.status?.phase !== 'Available' || v.spec?.claimRef) continue;
    if (selector && !selector.matches(v.metadata?.labels ?? {})) continue;
    if (volumeClass(v) !== wantClass || !nodeOk) continue;
    const cap = storageOf(v.spec?.capacity);
    if (!sizeAtLeast(cap, requested)) continue;
    if (!best || compareQuantities(storageOf(best.spec?.capacity), cap) > 0) best = v;
  }
  return best;
}
