/**
 * apps/v1 validation (Deployment, ReplicaSet) and the smaller groups (Lease, PriorityClass), as
 * upstream's pkg/apis/apps/validation and friends.
 */
import { labelSelectorFromObject } from '../selectors/labels.js';
import { child, forbidden, GoRepr, goQuote, invalid, notSupported, required, type FieldError } from './field.js';
import { labelSelectorRepr, validateImmutableField, validateLabelSelector } from './meta.js';
import { validateNonnegative, validatePodTemplateSpec } from './pod.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const PERCENT_FMT = '[0-9]+%';

function validatePositiveIntOrPercent(v: unknown, path: string): FieldError[] {
  if (typeof v === 'string') {
    return /^[0-9]+%$/.test(v) ? [] : [invalid(path, v, `a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '${PERCENT_FMT}')`)];
  }
  return validateNonnegative(v, path);
}

const intOrPercentValue = (v: unknown): { pct: boolean; n: number } =>
  typeof v === 'string' ? { pct: true, n: parseInt(v, 10) } : { pct: false, n: typeof v === 'number' ? v : 0 };

function validateRollingUpdate(ru: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, child(path, 'maxUnavailable')));
  errs.push(...validatePositiveIntOrPercent(ru.maxSurge, child(path, 'maxSurge')));
  const mu = intOrPercentValue(ru.maxUnavailable), ms = intOrPercentValue(ru.maxSurge);
  if (mu.n === 0 && ms.n === 0) errs.push(invalid(child(path, 'maxUnavailable'), ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
  if (mu.pct && mu.n > 100) errs.push(invalid(child(path, 'maxUnavailable'), ru.maxUnavailable, 'must not be greater than 100%'));
  return errs;
}

function validateStrategy(strategy: unknown, path: string): FieldError[] {
  const s: Obj = isObj(strategy) ? strategy : {};
  switch (s.type) {
    case 'Recreate':
      return s.rollingUpdate ? [forbidden(child(path, 'rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'")] : [];
    case 'RollingUpdate':
      return isObj(s.rollingUpdate) ? validateRollingUpdate(s.rollingUpdate, child(path, 'rollingUpdate')) : [required(child(path, 'rollingUpdate'), 'this should be defaulted and never be nil')];
    default:
      return [notSupported(child(path, 'type'), s.type ?? '', ['Recreate', 'RollingUpdate'])];
  }
}

/**
 * The selector/template checks the apps/v1 workloads share (ValidatePodTemplateSpecForReplicaSet);
 * kind names the workload in the empty-selector message.
 */
export function validateSelectorAndTemplate(spec: Obj, errs: FieldError[], kind = 'deployment'): void {
  const sel = spec.selector;
  let selector: ReturnType<typeof labelSelectorFromObject> | undefined;
  if (!isObj(sel)) {
    errs.push(required('spec.selector', ''));
  } else {
    const selErrs = validateLabelSelector(sel, 'spec.selector');
    errs.push(...selErrs);
    const n = Object.keys(isObj(sel.matchLabels) ? sel.matchLabels : {}).length + (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0);
    if (n === 0) errs.push(invalid('spec.selector', labelSelectorRepr(sel), `empty selector is invalid for ${kind}`));
    if (selErrs.length === 0) { try { selector = labelSelectorFromObject(sel); } catch { /* reported above */ } }
  }
  const tpl: Obj = isObj(spec.template) ? spec.template : {};
  const labels: Obj = isObj(tpl.metadata?.labels) ? tpl.metadata.labels : {};
  if (selector && !selector.empty && !selector.matches(labels)) {
    errs.push(invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  errs.push(...validatePodTemplateSpec(tpl, 'spec.template'));
  const rp = tpl.spec?.restartPolicy;
  if (rp !== undefined && rp !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (tpl.spec?.activeDeadlineSeconds !== undefined && tpl.spec?.activeDeadlineSeconds !== null) {
    errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
}

/** ValidateDeploymentSpec. */
export function validateDeploymentSpec(d: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isObj((d as Obj)?.spec) ? (d as Obj).spec : {};
  errs.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  validateSelectorAndTemplate(spec, errs);
  errs.push(...validateStrategy(spec.strategy, 'spec.strategy'));
  errs.push(...validateNonnegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateNonnegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  if (typeof spec.progressDeadlineSeconds === 'number') {
    errs.push(...validateNonnegative(spec.progressDeadlineSeconds, 'spec.progressDeadlineSeconds'));
    if (spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)) {
      errs.push(invalid('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

/** ValidateReplicaSetSpec. */
export function validateReplicaSetSpec(rs: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isObj((rs as Obj)?.spec) ? (rs as Obj).spec : {};
  errs.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  errs.push(...validateNonnegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  validateSelectorAndTemplate(spec, errs);
  return errs;
}

/** Deployment/ReplicaSet update: apps/v1 selectors are immutable. */
export function validateSelectorImmutable(next: unknown, prev: unknown): FieldError[] {
  return validateImmutableField((next as Obj)?.spec?.selector, (prev as Obj)?.spec?.selector, 'spec.selector', labelSelectorRepr);
}

/** ValidateLease (coordination/v1). */
export function validateLeaseSpec(lease: unknown): FieldError[] {
  const spec: Obj = isObj((lease as Obj)?.spec) ? (lease as Obj).spec : {};
  const errs: FieldError[] = [];
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds !== null && spec.leaseDurationSeconds <= 0) {
    errs.push(invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  errs.push(...validateNonnegative(spec.leaseTransitions, 'spec.leaseTransitions'));
  return errs;
}

export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;

/** ValidatePriorityClass (scheduling/v1). */
export function validatePriorityClassFields(pc: unknown): FieldError[] {
  const p: Obj = isObj(pc) ? pc : {};
  const errs: FieldError[] = [];
  const name = String(p.metadata?.name ?? '');
  if (typeof p.value !== 'number') errs.push(required('value', ''));
  else if (p.value > HIGHEST_USER_DEFINABLE_PRIORITY && !name.startsWith('system-')) {
    errs.push(forbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (p.preemptionPolicy !== undefined && !['Never', 'PreemptLowerPriority'].includes(p.preemptionPolicy)) {
    errs.push(notSupported('preemptionPolicy', p.preemptionPolicy, ['Never', 'PreemptLowerPriority']));
  }
  return errs;
}

/** ValidatePriorityClassUpdate: value and preemptionPolicy are fixed. */
export function validatePriorityClassUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj(next) ? next : {}, o: Obj = isObj(prev) ? prev : {};
  const errs: FieldError[] = [];
  if (n.value !== o.value) errs.push(forbidden('value', 'may not be changed in an update.'));
  if ((n.preemptionPolicy ?? 'PreemptLowerPriority') !== (o.preemptionPolicy ?? 'PreemptLowerPriority')) {
    errs.push(invalid('preemptionPolicy', new GoRepr(goQuote(String(n.preemptionPolicy))), 'field is immutable'));
  }
  return errs;
}
