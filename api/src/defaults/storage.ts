/**
 * Defaults of the storage kinds, as upstream's SetDefaults_PersistentVolume,
 * SetDefaults_PersistentVolumeClaim (core/v1) and SetDefaults_StorageClass (storage/v1).
 */
import { canonicalizeResourceList } from './pod.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function defaultPersistentVolume(pv: Obj): void {
  const spec: Obj = isObj(pv.spec) ? pv.spec : (pv.spec = {});
  spec.persistentVolumeReclaimPolicy ||= 'Retain';
  spec.volumeMode ||= 'Filesystem';
  canonicalizeResourceList(spec.capacity);
  const status: Obj = isObj(pv.status) ? pv.status : (pv.status = {});
  status.phase ||= 'Pending';
}

export function defaultPersistentVolumeClaim(pvc: Obj): void {
  const spec: Obj = isObj(pvc.spec) ? pvc.spec : (pvc.spec = {});
  spec.volumeMode ||= 'Filesystem';
  if (isObj(spec.resources)) { canonicalizeResourceList(spec.resources.requests); canonicalizeResourceList(spec.resources.limits); }
  const status: Obj = isObj(pvc.status) ? pvc.status : (pvc.status = {});
  status.phase ||= 'Pending';
  canonicalizeResourceList(status.capacity);
}

export function defaultStorageClass(sc: Obj): void {
  sc.reclaimPolicy ||= 'Delete';
  sc.volumeBindingMode ||= 'Immediate';
}
