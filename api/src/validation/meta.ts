/**
 * ObjectMeta, label, annotation and LabelSelector validation, as apimachinery's
 * api/validation (ValidateObjectMeta, ValidateObjectMetaUpdate) and metav1/validation.
 */
import { child, forbidden, GoRepr, goQuote, invalid, index as idx, required, tooLong, type FieldError } from './field.js';
import { isDNS1123Label, isQualifiedName, isValidLabelValue, pathSegmentName, type NameValidator } from './names.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** ValidateLabels: keys are qualified names, values label values (each message its own error). */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(labels)) return errs;
  for (const [k, v] of Object.entries(labels)) {
    for (const m of isQualifiedName(k)) errs.push(invalid(path, k, m));
    if (typeof v !== 'string') { errs.push(invalid(path, v, 'label values must be strings')); continue; }
    for (const m of isValidLabelValue(v)) errs.push(invalid(path, v, m));
  }
  return errs;
}

/** ValidateAnnotations: keys are qualified names (lower-cased first); total size ≤ 256 KiB. */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(annotations)) return errs;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, m));
    size += Buffer.byteLength(k) + Buffer.byteLength(typeof v === 'string' ? v : String(v));
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(tooLong(path, '', TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}

/** Go's %#v of a metav1.LabelSelector, for immutable-selector messages. */
export function labelSelectorRepr(sel: unknown): GoRepr {
  if (!isObj(sel)) return new GoRepr('null');
  const ml = isObj(sel.matchLabels) && Object.keys(sel.matchLabels).length
    ? `map[string]string{${Object.entries(sel.matchLabels).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${goQuote(k)}:${goQuote(String(v))}`).join(', ')}}`
    : 'map[string]string(nil)';
  const exprs = Array.isArray(sel.matchExpressions) && sel.matchExpressions.length
    ? `[]v1.LabelSelectorRequirement{${sel.matchExpressions.map((e: Obj) => `v1.LabelSelectorRequirement{Key:${goQuote(String(e.key ?? ''))}, Operator:${goQuote(String(e.operator ?? ''))}, Values:${Array.isArray(e.values) ? `[]string{${e.values.map((x: unknown) => goQuote(String(x))).join(', ')}}` : '[]string(nil)'}}`).join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return new GoRepr(`v1.LabelSelector{MatchLabels:${ml}, MatchExpressions:${exprs}}`);
}

/** metav1validation.ValidateLabelSelector. */
export function validateLabelSelector(sel: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(sel)) return errs;
  (Array.isArray(sel.matchExpressions) ? sel.matchExpressions : []).forEach((e: Obj, i: number) => {
    const p = idx(child(path, 'matchExpressions'), i);
    const values: unknown[] = Array.isArray(e?.values) ? e.values : [];
    switch (e?.operator) {
      case 'In': case 'NotIn':
        if (values.length === 0) errs.push(required(child(p, 'values'), 'must be specified when `operator` is \'In\' or \'NotIn\''));
        break;
      case 'Exists': case 'DoesNotExist':
        if (values.length > 0) errs.push(forbidden(child(p, 'values'), 'may not be specified when `operator` is \'Exists\' or \'DoesNotExist\''));
        break;
      default:
        errs.push(invalid(child(p, 'operator'), e?.operator, 'not a valid selector operator'));
    }
    for (const m of isQualifiedName(String(e?.key ?? ''))) errs.push(invalid(child(p, 'key'), e?.key, m));
    values.forEach((v, j) => { for (const m of isValidLabelValue(String(v))) errs.push(invalid(idx(child(p, 'values'), j), v, m)); });
  });
  errs.push(...validateLabels(sel.matchLabels, child(path, 'matchLabels')));
  return errs;
}

export interface ObjectMetaOptions {
  /** Whether metadata.namespace is required (namespaced resources). */
  namespaced: boolean;
  /** Name format; the generateName prefix is checked with prefix=true. */
  nameFn: NameValidator;
}

/** ValidateObjectMeta: name/generateName format, namespace presence, labels, annotations, owners, finalizers. */
export function validateObjectMeta(meta: unknown, opts: ObjectMetaOptions, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  const m: Obj = isObj(meta) ? meta : {};
  const nameFn: NameValidator = (n, prefix) => [...pathSegmentName(n, prefix), ...opts.nameFn(n, prefix)];
  if (typeof m.generateName === 'string' && m.generateName) {
    for (const msg of nameFn(m.generateName, true)) errs.push(invalid(child(path, 'generateName'), m.generateName, msg));
  }
  if (!m.name) errs.push(required(child(path, 'name'), 'name or generateName is required'));
  else for (const msg of nameFn(String(m.name), false)) errs.push(invalid(child(path, 'name'), m.name, msg));
  if (opts.namespaced) {
    if (!m.namespace) errs.push(required(child(path, 'namespace'), ''));
    else for (const msg of isDNS1123Label(String(m.namespace))) errs.push(invalid(child(path, 'namespace'), m.namespace, msg));
  } else if (m.namespace) {
    errs.push(forbidden(child(path, 'namespace'), 'not allowed on this type'));
  }
  if (typeof m.generation === 'number' && m.generation < 0) errs.push(invalid(child(path, 'generation'), m.generation, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(m.labels, child(path, 'labels')));
  errs.push(...validateAnnotations(m.annotations, child(path, 'annotations')));
  errs.push(...validateOwnerReferences(m.ownerReferences, child(path, 'ownerReferences')));
  errs.push(...validateFinalizers(m.finalizers, child(path, 'finalizers')));
  return errs;
}

function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(refs)) return errs;
  const controllers: string[] = [];
  refs.forEach((raw: unknown) => {
    const r: Obj = isObj(raw) ? raw : {};
    const version = String(r.apiVersion ?? '').split('/').pop() ?? '';
    if (!version) errs.push(invalid(child(path, 'apiVersion'), r.apiVersion ?? '', 'version must not be empty'));
    for (const f of ['kind', 'name', 'uid']) if (!r[f]) errs.push(invalid(child(path, f), r[f] ?? '', 'must not be empty'));
    if (r.controller === true) controllers.push(`${r.kind}/${r.name}`);
  });
  if (controllers.length > 1) {
    errs.push(invalid(path, new GoRepr(`[]v1.OwnerReference{...}`), `Only one reference can have Controller set to true. Found "true" in references for ${controllers[0]} and ${controllers[1]}`));
  }
  return errs;
}

function validateFinalizers(finalizers: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(finalizers)) return errs;
  finalizers.forEach((f: unknown, i: number) => {
    const s = String(f);
    // Finalizers are qualified names; the ones without a '/' must be the standard ones.
    for (const m of isQualifiedName(s)) errs.push(invalid(idx(path, i), f, m));
  });
  return errs;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** ValidateImmutableField: `Invalid value: <new>: field is immutable`. */
export function validateImmutableField(next: unknown, prev: unknown, path: string, repr?: (v: unknown) => unknown): FieldError[] {
  return deepEqual(next, prev) ? [] : [invalid(path, repr ? repr(next) : next, 'field is immutable')];
}

/** ValidateObjectMetaUpdate: name, namespace, uid, creationTimestamp and deletion fields are fixed. */
export function validateObjectMetaUpdate(next: unknown, prev: unknown, path = 'metadata'): FieldError[] {
  const n: Obj = isObj(next) ? next : {};
  const o: Obj = isObj(prev) ? prev : {};
  const errs: FieldError[] = [];
  for (const f of ['name', 'namespace', 'uid', 'creationTimestamp']) {
    if (f === 'uid' && !n.uid) continue; // the registry carries uid over when a PUT omits it
    if (f === 'creationTimestamp' && !n.creationTimestamp) continue;
    errs.push(...validateImmutableField(n[f] ?? '', o[f] ?? '', child(path, f)));
  }
  if (o.deletionTimestamp && n.deletionTimestamp && !same(n.deletionTimestamp, o.deletionTimestamp)) {
    errs.push(invalid(child(path, 'deletionTimestamp'), n.deletionTimestamp, 'field is immutable; may only be changed via deletion'));
  }
  if (o.deletionGracePeriodSeconds !== undefined && n.deletionGracePeriodSeconds !== undefined && n.deletionGracePeriodSeconds !== o.deletionGracePeriodSeconds) {
    errs.push(invalid(child(path, 'deletionGracePeriodSeconds'), n.deletionGracePeriodSeconds, 'field is immutable; may only be changed via deletion'));
  }
  return errs;
}

/** Structural equality of JSON values (key order ignored; undefined members ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Obj, bo = b as Obj;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && deepEqual(ao[k], bo[k]));
}
