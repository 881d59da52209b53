/**
 * core/v1 ResourceQuota and LimitRange validation, as upstream's ValidateResourceQuota(Spec),
 * ValidateLimitRange and their resource-name and quantity checks.
 */
import { ERR_FORMAT_WRONG, canonicalQuantity, isValidQuantity, parseQuantityExact } from '../quantity.js';
import { QUOTA_SCOPES } from '../quota/evaluator.js';
import { compareQuantity } from '../quota/resource-list.js';
import { duplicate, forbidden, GoRepr, invalid, key, notSupported, required, index, type FieldError } from './field.js';
import { isQualifiedName } from './names.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** IsStandardQuotaResourceName (names without a '/'). */
const STANDARD_QUOTA = new Set(['pods', 'services', 'replicationcontrollers', 'resourcequotas', 'secrets', 'configmaps', 'persistentvolumeclaims',
  'services.nodeports', 'services.loadbalancers', 'cpu', 'memory', 'ephemeral-storage', 'storage', 'requests.cpu', 'requests.memory',
  'requests.storage', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage']);
/** Quota names whose values must be whole numbers. */
const isIntegerResource = (n: string): boolean => n.startsWith('count/') || ['pods', 'services', 'replicationcontrollers', 'resourcequotas', 'secrets', 'configmaps',
  'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers'].includes(n);

function validateQuantityValue(name: string, v: unknown, path: string, errs: FieldError[]): void {
  if ((typeof v !== 'string' && typeof v !== 'number') || !isValidQuantity(v)) { errs.push(invalid(path, v, ERR_FORMAT_WRONG)); return; }
  const q = parseQuantityExact(v);
  if (q.num < 0n) errs.push(invalid(path, new GoRepr(canonicalQuantity(v)), 'must be greater than or equal to 0'));
  if (isIntegerResource(name) && q.num % q.den !== 0n) errs.push(invalid(path, new GoRepr(canonicalQuantity(v)), 'must be an integer'));
}

function validateQuotaResourceName(n: string, path: string, errs: FieldError[]): void {
  for (const m of isQualifiedName(n)) errs.push(invalid(path, n, m));
  if (!n.includes('/') && !STANDARD_QUOTA.has(n) && !n.startsWith('hugepages-') && !n.startsWith('requests.hugepages-') && !n.startsWith('limits.hugepages-')) {
    errs.push(invalid(path, n, 'must be a standard resource for quota'));
  }
}

/** ValidateResourceQuota: hard names and quantities, scopes. */
export function validateResourceQuota(rq: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isObj((rq as Obj)?.spec) ? (rq as Obj).spec : {};
  for (const [n, v] of Object.entries(isObj(spec.hard) ? spec.hard : {})) {
    const path = key('spec.hard', n);
    validateQuotaResourceName(n, path, errs);
    validateQuantityValue(n, v, path, errs);
  }
  const scopes: unknown[] = Array.isArray(spec.scopes) ? spec.scopes : [];
  scopes.forEach((s) => { if (!(QUOTA_SCOPES as readonly unknown[]).includes(s)) errs.push(notSupported('spec.scopes', s, QUOTA_SCOPES)); });
  if (scopes.includes('BestEffort') && scopes.includes('NotBestEffort')) errs.push(invalid('spec.scopes', scopes, 'conflicting scopes'));
  if (scopes.includes('Terminating') && scopes.includes('NotTerminating')) errs.push(invalid('spec.scopes', scopes, 'conflicting scopes'));
  const status: Obj = isObj((rq as Obj)?.status) ? (rq as Obj).status : {};
  for (const part of ['hard', 'used'] as const) {
    for (const [n, v] of Object.entries(isObj(status[part]) ? status[part] : {})) {
      const path = key(`status.${part}`, n);
      validateQuotaResourceName(n, path, errs);
      validateQuantityValue(n, v, path, errs);
    }
  }
  return errs;
}


/** ValidateLimitRange: types, quantities and the min ≤ defaultRequest ≤ default ≤ max ordering. */
export function validateLimitRange(lr: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const limits: unknown[] = Array.isArray((lr as Obj)?.spec?.limits) ? (lr as Obj).spec.limits : [];
  const seen = new Set<string>();
  limits.forEach((raw, i) => {
    const p = index('spec.limits', i);
    const item: Obj = isObj(raw) ? raw : {};
    if (!item.type) errs.push(required(`${p}.type`, ''));
    else {
      for (const m of isQualifiedName(String(item.type))) errs.push(invalid(`${p}.type`, item.type, m));
      if (seen.has(item.type)) errs.push(duplicate(`${p}.type`, item.type));
      seen.add(item.type);
    }
    const part = (name: string): Obj => (isObj(item[name]) ? item[name] : {});
    const parts = { min: part('min'), max: part('max'), default: part('default'), defaultRequest: part('defaultRequest'), maxLimitRequestRatio: part('maxLimitRequestRatio') };
    for (const [pn, list] of Object.entries(parts)) {
      for (const [n, v] of Object.entries(list)) {
        const path = key(`${p}.${pn}`, n);
        for (const m of isQualifiedName(n)) errs.push(invalid(path, n, m));
        validateQuantityValue(n, v, path, errs);
      }
    }
    if (item.type === 'Pod') {
      if (Object.keys(parts.default).length) errs.push(forbidden(`${p}.default`, "may not be specified when `type` is 'Pod'"));
      if (Object.keys(parts.defaultRequest).length) errs.push(forbidden(`${p}.defaultRequest`, "may not be specified when `type` is 'Pod'"));
    }
    const keys = new Set(Object.values(parts).flatMap((l) => Object.keys(l)));
    const valid = (v: unknown) => (typeof v === 'string' || typeof v === 'number') && isValidQuantity(v);
    const s = (v: unknown) => canonicalQuantity(v as string);
    for (const k of [...keys].sort()) {
      const min = parts.min[k], max = parts.max[k], def = parts.default[k], defReq = parts.defaultRequest[k], ratio = parts.maxLimitRequestRatio[k];
      const has = (v: unknown) => v !== undefined && valid(v);
      if (has(min) && has(max) && compareQuantity(min, max) > 0) errs.push(invalid(key(`${p}.min`, k), new GoRepr(s(min)), `min value ${s(min)} is greater than max value ${s(max)}`));
      if (has(defReq) && has(min) && compareQuantity(min, defReq) > 0) errs.push(invalid(key(`${p}.defaultRequest`, k), new GoRepr(s(defReq)), `min value ${s(min)} is greater than default request value ${s(defReq)}`));
      if (has(defReq) && has(max) && compareQuantity(defReq, max) > 0) errs.push(invalid(key(`${p}.defaultRequest`, k), new GoRepr(s(defReq)), `default request value ${s(defReq)} is greater than max value ${s(max)}`));
      if (has(defReq) && has(def) && compareQuantity(defReq, def) > 0) errs.push(invalid(key(`${p}.defaultRequest`, k), new GoRepr(s(defReq)), `default request value ${s(defReq)} is greater than default limit value ${s(def)}`));
      if (has(def) && has(min) && compareQuantity(min, def) > 0) errs.push(invalid(key(`${p}.default`, k), new GoRepr(s(min)), `min value ${s(min)} is greater than default value ${s(def)}`));
      if (has(def) && has(max) && compareQuantity(def, max) > 0) errs.push(invalid(key(`${p}.default`, k), new GoRepr(s(max)), `default value ${s(def)} is greater than max value ${s(max)}`));
      if (has(ratio) && compareQuantity(ratio, 1) < 0) errs.push(invalid(key(`${p}.maxLimitRequestRatio`, k), new GoRepr(s(ratio)), `ratio ${s(ratio)} is less than 1`));
    }
  });
  if (limits.length === 0 && (lr as Obj)?.spec === undefined) errs.push(required('spec', ''));
  return errs;
}
