/**
 * PersistentVolume, PersistentVolumeClaim (core/v1) and StorageClass (storage/v1) validation, as
 * upstream's ValidatePersistentVolume / ValidatePersistentVolumeClaim(Update) in
 * pkg/apis/core/validation and ValidateStorageClass(Update) in pkg/apis/storage/validation.
 */
import { compareQuantities, isValidQuantity } from '../quantity.js';
import { child, forbidden, index, invalid, key, notSupported, required, tooLong, type FieldError } from './field.js';
import { deepEqual, validateImmutableField } from './meta.js';
import { isDNS1123Subdomain, isQualifiedName } from './names.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;
export const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'] as const;
export const VOLUME_MODES = ['Block', 'Filesystem'] as const;
export const VOLUME_BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'] as const;

/** The spec fields of a PV that are not its volume source (the rest is PersistentVolumeSource). */
const PV_NON_SOURCE_FIELDS = new Set(['accessModes', 'capacity', 'claimRef', 'persistentVolumeReclaimPolicy', 'storageClassName', 'mountOptions', 'volumeMode', 'nodeAffinity', 'volumeAttributesClassName']);

function validateAccessModes(modes: unknown, path: string): FieldError[] {
  const list = Array.isArray(modes) ? modes : [];
  if (list.length === 0) return [required(path, 'must specify at least 1 access mode')];
  const errs: FieldError[] = [];
  for (const m of list) if (!(ACCESS_MODES as readonly string[]).includes(m)) errs.push(notSupported(path, m, ACCESS_MODES));
  if (list.includes('ReadWriteOncePod') && list.length > 1) errs.push(forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

function validateClassName(name: unknown, path: string): FieldError[] {
  if (typeof name !== 'string' || name === '') return [];
  return isDNS1123Subdomain(name).map((m) => invalid(path, name, m));
}

function validateVolumeMode(mode: unknown, path: string): FieldError[] {
  if (mode === undefined || mode === null) return [];
  return (VOLUME_MODES as readonly string[]).includes(mode as string) ? [] : [notSupported(path, mode, VOLUME_MODES)];
}

/** A NodeSelector with at least one term, each with at least one requirement. */
function validateNodeSelector(ns: unknown, path: string): FieldError[] {
  const terms = isObj(ns) && Array.isArray(ns.nodeSelectorTerms) ? ns.nodeSelectorTerms : [];
  if (terms.length === 0) return [required(child(path, 'nodeSelectorTerms'), 'must have at least one node selector term')];
  const errs: FieldError[] = [];
  terms.forEach((t: unknown, i: number) => {
    const p = index(child(path, 'nodeSelectorTerms'), i);
    const exprs = isObj(t) && Array.isArray(t.matchExpressions) ? t.matchExpressions : [];
    exprs.forEach((e: unknown, j: number) => {
      const ep = index(child(p, 'matchExpressions'), j);
      const op = isObj(e) ? e.operator : undefined;
      if (!['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'].includes(op)) errs.push(notSupported(child(ep, 'operator'), op ?? '', ['DoesNotExist', 'Exists', 'Gt', 'In', 'Lt', 'NotIn']));
      const vals = isObj(e) && Array.isArray(e.values) ? e.values : [];
      if ((op === 'In' || op === 'NotIn') && vals.length === 0) errs.push(required(child(ep, 'values'), 'must be specified when `operator` is \'In\' or \'NotIn\''));
    });
  });
  return errs;
}

/** ValidatePersistentVolumeSpec (the parts this cluster serves: hostPath, local, and any other source as opaque). */
export function validatePersistentVolume(pv: unknown): FieldError[] {
  const spec: Obj = isObj((pv as Obj)?.spec) ? (pv as Obj).spec : {};
  const errs: FieldError[] = [];
  errs.push(...validateAccessModes(spec.accessModes, 'spec.accessModes'));
  const cap: Obj = isObj(spec.capacity) ? spec.capacity : {};
  if (Object.keys(cap).length === 0) errs.push(required('spec.capacity', ''));
  for (const [k, v] of Object.entries(cap)) {
    if (k !== 'storage') { errs.push(notSupported('spec.capacity', k, ['storage'])); continue; }
    if (!isValidQuantity(v as string) || compareQuantities(v as string, 0) <= 0) errs.push(invalid(key('spec.capacity', k), v, 'must be a valid resource quantity'));
  }
  const rp = spec.persistentVolumeReclaimPolicy;
  if (rp !== undefined && !(RECLAIM_POLICIES as readonly string[]).includes(rp)) errs.push(notSupported('spec.persistentVolumeReclaimPolicy', rp, RECLAIM_POLICIES));
  errs.push(...validateClassName(spec.storageClassName, 'spec.storageClassName'));
  errs.push(...validateVolumeMode(spec.volumeMode, 'spec.volumeMode'));
  const sources = Object.keys(spec).filter((k) => !PV_NON_SOURCE_FIELDS.has(k) && spec[k] !== undefined && spec[k] !== null);
  if (sources.length === 0) errs.push(required('spec', 'must specify a volume type'));
  else if (sources.length > 1) errs.push(forbidden(child('spec', sources[1]!), 'may not specify more than 1 volume type'));
  if (isObj(spec.hostPath) && !spec.hostPath.path) errs.push(required('spec.hostPath.path', ''));
  if (isObj(spec.local)) {
    if (!spec.local.path) errs.push(required('spec.local.path', ''));
    if (!isObj(spec.nodeAffinity)) errs.push(required('spec.nodeAffinity', 'Local volume requires node affinity'));
  }
  if (isObj(spec.nodeAffinity)) {
    if (!isObj(spec.nodeAffinity.required)) errs.push(required('spec.nodeAffinity.required', 'must specify required node constraints'));
    else errs.push(...validateNodeSelector(spec.nodeAffinity.required, 'spec.nodeAffinity.required'));
  }
  if (spec.claimRef !== undefined && spec.claimRef !== null) {
    if (!isObj(spec.claimRef) || !spec.claimRef.name) errs.push(required('spec.claimRef.name', ''));
  }
  return errs;
}

/** ValidatePersistentVolumeUpdate: the volume source, volumeMode and a set nodeAffinity are fixed. */
export function validatePersistentVolumeUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj((next as Obj)?.spec) ? (next as Obj).spec : {};
  const o: Obj = isObj((prev as Obj)?.spec) ? (prev as Obj).spec : {};
  const source = (s: Obj) => Object.fromEntries(Object.entries(s).filter(([k]) => !PV_NON_SOURCE_FIELDS.has(k)));
  const errs: FieldError[] = [];
  if (!deepEqual(source(n), source(o))) errs.push(forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation'));
  errs.push(...validateImmutableField(n.volumeMode, o.volumeMode, 'volumeMode'));
  if (o.nodeAffinity !== undefined && o.nodeAffinity !== null) errs.push(...validateImmutableField(n.nodeAffinity, o.nodeAffinity, 'nodeAffinity'));
  return errs;
}

/** ValidatePersistentVolumeClaimSpec. */
export function validatePersistentVolumeClaim(pvc: unknown): FieldError[] {
  const spec: Obj = isObj((pvc as Obj)?.spec) ? (pvc as Obj).spec : {};
  const errs: FieldError[] = [];
  errs.push(...validateAccessModes(spec.accessModes, 'spec.accessModes'));
  if (spec.selector !== undefined && spec.selector !== null && !isObj(spec.selector)) errs.push(invalid('spec.selector', spec.selector, 'must be a label selector'));
  const requests: Obj = isObj(spec.resources?.requests) ? spec.resources.requests : {};
  const storage = requests['storage'];
  if (storage === undefined) errs.push(required('spec.resources[storage]', ''));
  else if (!isValidQuantity(storage) || compareQuantities(storage, 0) <= 0) errs.push(invalid('spec.resources.requests[storage]', storage, 'must be greater than zero'));
  errs.push(...validateClassName(spec.storageClassName, 'spec.storageClassName'));
  errs.push(...validateVolumeMode(spec.volumeMode, 'spec.volumeMode'));
  return errs;
}

export const PVC_SPEC_IMMUTABLE_MSG = 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims';

/**
 * ValidatePersistentVolumeClaimUpdate: the spec is fixed, except that volumeName may be set once
 * (by the binder), storageClassName may be set once when it was absent, and a Bound claim's
 * resources.requests.storage may grow (expansion; whether the class allows it is admission's
 * call: PersistentVolumeClaimResize). A request never shrinks.
 */
export function validatePersistentVolumeClaimUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = structuredClone(isObj((next as Obj)?.spec) ? (next as Obj).spec : {});
  const o: Obj = structuredClone(isObj((prev as Obj)?.spec) ? (prev as Obj).spec : {});
  const errs: FieldError[] = [];
  const oldSize = o.resources?.requests?.storage;
  const newSize = n.resources?.requests?.storage;
  if (!o.volumeName) o.volumeName = n.volumeName;
  if (o.storageClassName === undefined || o.storageClassName === null) o.storageClassName = n.storageClassName;
  const bound = (next as Obj)?.status?.phase === 'Bound' || (prev as Obj)?.status?.phase === 'Bound';
  if (bound && isObj(n.resources?.requests) && oldSize !== undefined) n.resources.requests.storage = oldSize;
  if (!deepEqual(n, o)) errs.push(forbidden('spec', PVC_SPEC_IMMUTABLE_MSG));
  if (oldSize !== undefined && newSize !== undefined && isValidQuantity(oldSize) && isValidQuantity(newSize) && compareQuantities(newSize, oldSize) < 0) {
    errs.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
  }
  return errs;
}

/** ValidateStorageClass. */
export function validateStorageClass(sc: unknown): FieldError[] {
  const s: Obj = isObj(sc) ? sc : {};
  const errs: FieldError[] = [];
  const prov = s.provisioner;
  if (typeof prov !== 'string' || prov === '') errs.push(required('provisioner', prov ?? ''));
  else if (prov.length > 253) errs.push(tooLong('provisioner', '', 253));
  else errs.push(...isQualifiedName(prov.toLowerCase()).map((m) => invalid('provisioner', prov, m)));
  if (s.parameters !== undefined && !isObj(s.parameters)) errs.push(invalid('parameters', s.parameters, 'must be a map of strings'));
  if (isObj(s.parameters) && Object.keys(s.parameters).length > 512) errs.push(invalid('parameters', '', 'can not have more than 512 parameters'));
  if (s.reclaimPolicy !== undefined && !['Delete', 'Retain'].includes(s.reclaimPolicy)) errs.push(notSupported('reclaimPolicy', s.reclaimPolicy, ['Delete', 'Retain']));
  if (s.volumeBindingMode === undefined) errs.push(required('volumeBindingMode', ''));
  else if (!(VOLUME_BINDING_MODES as readonly string[]).includes(s.volumeBindingMode)) errs.push(notSupported('volumeBindingMode', s.volumeBindingMode, VOLUME_BINDING_MODES));
  return errs;
}

/** ValidateStorageClassUpdate: parameters, provisioner, reclaimPolicy and volumeBindingMode are fixed. */
export function validateStorageClassUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj(next) ? next : {};
  const o: Obj = isObj(prev) ? prev : {};
  const errs: FieldError[] = [];
  if (!deepEqual(n.parameters ?? {}, o.parameters ?? {})) errs.push(forbidden('parameters', 'updates to parameters are forbidden.'));
  if (n.provisioner !== o.provisioner) errs.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (n.reclaimPolicy !== o.reclaimPolicy) errs.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  errs.push(...validateImmutableField(n.volumeBindingMode, o.volumeBindingMode, 'volumeBindingMode'));
  return errs;
}
