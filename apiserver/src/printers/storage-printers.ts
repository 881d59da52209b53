/**
 * Printers of the storage kinds (pv, pvc, sc), after upstream's printPersistentVolume,
 * printPersistentVolumeClaim and printStorageClass (pkg/printers/internalversion/printers.go).
 */
import type { TableColumnDefinition } from './table.js';
import { AGE, NAME, age, col, define, wide, type Printer } from './printer-kit.js';

type Res = Record<string, string | undefined>;
interface PV { spec?: { capacity?: Res; accessModes?: string[]; persistentVolumeReclaimPolicy?: string; claimRef?: { namespace?: string; name?: string }; storageClassName?: string; volumeAttributesClassName?: string; volumeMode?: string }; status?: { phase?: string; reason?: string } }
interface PVC { spec?: { resources?: { requests?: Res }; volumeName?: string; storageClassName?: string; volumeAttributesClassName?: string; volumeMode?: string }; status?: { phase?: string; capacity?: Res; accessModes?: string[] } }
interface SC { provisioner?: string; reclaimPolicy?: string; volumeBindingMode?: string; allowVolumeExpansion?: boolean }

const SHORT: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };

/** helper.GetAccessModesAsString: RWO,ROX,RWX,RWOP in that order, each once. */
export function accessModesAsString(modes: readonly string[] | undefined): string {
  const set = new Set(modes ?? []);
  return ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'].filter((m) => set.has(m)).map((m) => SHORT[m]).join(',');
}

const VOLUME_MODE: TableColumnDefinition = wide(col('VolumeMode', 'string', 'The mode of the volume (Filesystem or Block).'));
const VAC = col('VolumeAttributesClass', 'string', 'The name of the VolumeAttributesClass.');

const pvPrinter = define<PV>([
  NAME,
  col('Capacity', 'string', 'capacity is the description of the persistent volume\'s resources and capacity.'),
  col('Access Modes', 'string', 'accessModes contains all ways the volume can be mounted.'),
  col('Reclaim Policy', 'string', 'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.'),
  col('Status', 'string', 'phase indicates if a volume is available, bound to a claim, or released by a claim.'),
  col('Claim', 'string', 'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.'),
  col('StorageClass', 'string', 'storageClassName is the name of StorageClass to which this persistent volume belongs.'),
  VAC,
  col('Reason', 'string', 'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.'),
  AGE, VOLUME_MODE,
], (pv, meta, now) => {
  const s = pv.spec ?? {};
  const claim = s.claimRef ? `${s.claimRef.namespace ?? ''}/${s.claimRef.name ?? ''}` : '';
  const phase = meta.metadata.deletionTimestamp ? 'Terminating' : pv.status?.phase ?? '';
  return [meta.metadata.name, s.capacity?.['storage'] ?? '0', accessModesAsString(s.accessModes), s.persistentVolumeReclaimPolicy ?? '', phase, claim,
    s.storageClassName ?? '', s.volumeAttributesClassName ?? '<unset>', pv.status?.reason ?? '', age(meta, now), s.volumeMode ?? '<unset>'];
});

const pvcPrinter = define<PVC>([
  NAME,
  col('Status', 'string', 'phase represents the current phase of PersistentVolumeClaim.'),
  col('Volume', 'string', 'volumeName is the binding reference to the PersistentVolume backing this claim.'),
  col('Capacity', 'string', 'capacity represents the actual resources of the underlying volume.'),
  col('Access Modes', 'string', 'accessModes contains the desired access modes the volume should have.'),
  col('StorageClass', 'string', 'storageClassName is the name of the StorageClass required by the claim.'),
  VAC, AGE, VOLUME_MODE,
], (pvc, meta, now) => {
  const s = pvc.spec ?? {};
  const phase = meta.metadata.deletionTimestamp ? 'Terminating' : pvc.status?.phase ?? '';
  const bound = !!s.volumeName;
  return [meta.metadata.name, phase, s.volumeName ?? '', bound ? pvc.status?.capacity?.['storage'] ?? '0' : '', bound ? accessModesAsString(pvc.status?.accessModes) : '',
    s.storageClassName ?? '', s.volumeAttributesClassName ?? '<unset>', age(meta, now), s.volumeMode ?? '<unset>'];
});

const storageClassPrinter = define<SC>([
  NAME,
  col('Provisioner', 'string', 'provisioner indicates the type of the provisioner.'),
  col('ReclaimPolicy', 'string', 'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.'),
  col('VolumeBindingMode', 'string', 'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.'),
  col('AllowVolumeExpansion', 'string', 'allowVolumeExpansion shows whether the storage class allow volume expand.'),
  AGE,
], (sc, meta, now) => {
  const a = meta.metadata.annotations ?? {};
  const isDefault = a['storageclass.kubernetes.io/is-default-class'] === 'true' || a['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
  return [isDefault ? `${meta.metadata.name} (default)` : meta.metadata.name, sc.provisioner ?? '', sc.reclaimPolicy ?? 'Delete', sc.volumeBindingMode ?? 'Immediate',
    sc.allowVolumeExpansion ?? false, age(meta, now)];
});

export const STORAGE_PRINTERS: Record<string, Printer> = {
  '/persistentvolumes': pvPrinter,
  '/persistentvolumeclaims': pvcPrinter,
  'storage.k8s.io/storageclasses': storageClassPrinter,
};
