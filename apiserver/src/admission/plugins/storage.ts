/**
 * The storage admission plugins upstream enables by default (plugin/pkg/admission/storage):
 * - DefaultStorageClass: a new claim without spec.storageClassName gets the default class (the
 *   one annotated storageclass.kubernetes.io/is-default-class=true; the newest of several).
 *   An explicit "" means "no class" and is left alone.
 * - StorageObjectInUseProtection: new claims get the kubernetes.io/pvc-protection finalizer and
 *   new volumes kubernetes.io/pv-protection, which the protection controllers remove once nothing
 *   uses them.
 * - PersistentVolumeClaimResize: a claim's storage request may grow only when it is Bound and its
 *   class sets allowVolumeExpansion.
 */
import { compareQuantities, isValidQuantity, PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER, type KubeObject } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import { forbidden } from './namespace-lifecycle.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const IS_DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
export const BETA_IS_DEFAULT_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';
export { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER };

const isPVCs = (a: AdmissionAttributes) => a.resource.group === '' && a.resource.resource === 'persistentvolumeclaims' && a.subresource === '';
const isPVs = (a: AdmissionAttributes) => a.resource.group === '' && a.resource.resource === 'persistentvolumes' && a.subresource === '';

/** storageutil.IsDefaultAnnotation. */
export function isDefaultClass(sc: KubeObject): boolean {
  const a = sc.metadata.annotations ?? {};
  return a[IS_DEFAULT_CLASS_ANNOTATION] === 'true' || a[BETA_IS_DEFAULT_CLASS_ANNOTATION] === 'true';
}

/** The default class among classes: the newest of those marked default (then by name, as upstream). */
export function defaultClassOf(classes: readonly KubeObject[]): KubeObject | undefined {
  const defaults = classes.filter(isDefaultClass);
  defaults.sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name));
  return defaults[0];
}

export interface StorageClassLister {
  get(name: string): Promise<KubeObject | undefined>;
  list(): Promise<KubeObject[]>;
}

export class DefaultStorageClass implements AdmissionPlugin {
  readonly name = 'DefaultStorageClass';
  constructor(private readonly classes: StorageClassLister) {}
  handles(op: AdmissionOperation): boolean { return op === 'CREATE'; }
  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPVCs(a) || !a.object) return;
    const spec = ((a.object['spec'] ??= {}) as Obj);
    if (spec['storageClassName'] !== undefined && spec['storageClassName'] !== null) return;
    if (a.object.metadata.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] !== undefined) return;
    const def = defaultClassOf(await this.classes.list());
    if (def) spec['storageClassName'] = def.metadata.name;
  }
}

export class StorageObjectInUseProtection implements AdmissionPlugin {
  readonly name = 'StorageObjectInUseProtection';
  handles(op: AdmissionOperation): boolean { return op === 'CREATE'; }
  admit(a: AdmissionAttributes): Promise<void> {
    const finalizer = isPVCs(a) ? PVC_PROTECTION_FINALIZER : isPVs(a) ? PV_PROTECTION_FINALIZER : undefined;
    if (finalizer && a.object) {
      const m = a.object.metadata as { finalizers?: string[] };
      if (!(m.finalizers ?? []).includes(finalizer)) m.finalizers = [...(m.finalizers ?? []), finalizer];
    }
    return Promise.resolve();
  }
}

export class PersistentVolumeClaimResize implements AdmissionPlugin {
  readonly name = 'PersistentVolumeClaimResize';
  constructor(private readonly classes: StorageClassLister) {}
  handles(op: AdmissionOperation): boolean { return op === 'UPDATE'; }
  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPVCs(a) || !a.object || !a.oldObject) return;
    const size = (o: KubeObject) => ((o['spec'] as Obj | undefined)?.['resources']?.['requests']?.['storage']) as string | undefined;
    const next = size(a.object), prev = size(a.oldObject);
    if (next === undefined || prev === undefined || !isValidQuantity(next) || !isValidQuantity(prev) || compareQuantities(next, prev) <= 0) return;
    if ((a.oldObject['status'] as Obj | undefined)?.['phase'] !== 'Bound') {
      throw forbidden('persistentvolumeclaims', a.name, 'Only bound persistent volume claims can be expanded');
    }
    const className = (a.object['spec'] as Obj)['storageClassName'] as string | undefined;
    const sc = className ? await this.classes.get(className) : undefined;
    if (sc?.['allowVolumeExpansion'] !== true) {
      throw forbidden('persistentvolumeclaims', a.name, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    }
  }
}
