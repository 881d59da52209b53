/**
 * autoscaling/v2 HorizontalPodAutoscaler validation, as upstream's pkg/apis/autoscaling/validation
 * (ValidateHorizontalPodAutoscaler, …Update, …StatusUpdate). Works on the v2 form (the stored
 * one: autoscaling/v1 bodies are converted before they get here), with upstream's paths and messages.
 */
import { isValidQuantity, parseQuantityExact } from '../quantity.js';
import { child, forbidden, GoRepr, index as idx, invalid, notSupported, required, type FieldError } from './field.js';
import { isDNS1123Label, pathSegmentName } from './names.js';
import { validateContainerResourceName, validateNonnegative } from './pod.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The largest allowed scaling policy period (seconds). */
export const MAX_PERIOD_SECONDS = 1800;
/** The largest allowed stabilization window (seconds). */
export const MAX_STABILIZATION_WINDOW_SECONDS = 3600;
export const METRIC_SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'] as const;
export const SELECT_POLICIES = ['Disabled', 'Max', 'Min'] as const;
export const SCALING_POLICY_TYPES = ['Percent', 'Pods'] as const;

/** ValidateCrossVersionObjectReference. */
export function validateCrossVersionObjectReference(ref: unknown, path: string): FieldError[] {
  const r: Obj = isObj(ref) ? ref : {};
  const errs: FieldError[] = [];
  for (const f of ['kind', 'name'] as const) {
    const v = typeof r[f] === 'string' ? r[f] as string : '';
    if (!v) errs.push(required(child(path, f), ''));
    else for (const msg of pathSegmentName(v, false)) errs.push(invalid(child(path, f), v, msg));
  }
  return errs;
}

const quantityRepr = (v: unknown): GoRepr => new GoRepr(`"${String(v)}"`);

function positiveQuantity(v: unknown, path: string): FieldError[] {
  if (v === undefined || v === null) return [];
  if ((typeof v !== 'string' && typeof v !== 'number') || !isValidQuantity(v) || parseQuantityExact(v).num <= 0n) {
    return [invalid(path, quantityRepr(v), 'must be positive')];
  }
  return [];
}

function validateMetricTarget(mt: unknown, path: string): FieldError[] {
  const t: Obj = isObj(mt) ? mt : {};
  const errs: FieldError[] = [];
  if (!t.type) errs.push(required(child(path, 'type'), 'must specify a metric target type'));
  if (t.type !== 'Utilization' && t.type !== 'Value' && t.type !== 'AverageValue') {
    errs.push(invalid(child(path, 'type'), t.type ?? '', 'must be either Utilization, Value, or AverageValue'));
  }
  errs.push(...positiveQuantity(t.value, child(path, 'value')));
  errs.push(...positiveQuantity(t.averageValue, child(path, 'averageValue')));
  if (typeof t.averageUtilization === 'number' && t.averageUtilization < 1) {
    errs.push(invalid(child(path, 'averageUtilization'), t.averageUtilization, 'must be greater than 0'));
  }
  return errs;
}

function validateMetricIdentifier(id: unknown, path: string): FieldError[] {
  const m: Obj = isObj(id) ? id : {};
  const name = typeof m.name === 'string' ? m.name : '';
  if (!name) return [required(child(path, 'name'), 'must specify a metric name')];
  return pathSegmentName(name, false).map((msg) => invalid(child(path, 'name'), name, msg));
}

const has = (o: Obj, k: string): boolean => o[k] !== undefined && o[k] !== null;

function validateObjectSource(src: Obj, path: string): FieldError[] {
  const t: Obj = isObj(src.target) ? src.target : {};
  const errs = [
    ...validateCrossVersionObjectReference(src.describedObject, child(path, 'describedObject')),
    ...validateMetricIdentifier(src.metric, child(path, 'metric')),
    ...validateMetricTarget(src.target, child(path, 'target')),
  ];
  if (!has(t, 'value') && !has(t, 'averageValue')) errs.push(required(child(path, 'target', 'averageValue'), 'must set either a target value or averageValue'));
  return errs;
}

function validateExternalSource(src: Obj, path: string): FieldError[] {
  const t: Obj = isObj(src.target) ? src.target : {};
  const errs = [...validateMetricIdentifier(src.metric, child(path, 'metric')), ...validateMetricTarget(src.target, child(path, 'target'))];
  if (!has(t, 'value') && !has(t, 'averageValue')) errs.push(required(child(path, 'target', 'averageValue'), 'must set either a target value for metric or a per-pod target'));
  if (has(t, 'value') && has(t, 'averageValue')) errs.push(forbidden(child(path, 'target', 'value'), 'may not set both a target value for metric and a per-pod target'));
  return errs;
}

function validatePodsSource(src: Obj, path: string): FieldError[] {
  const t: Obj = isObj(src.target) ? src.target : {};
  const errs = [...validateMetricIdentifier(src.metric, child(path, 'metric')), ...validateMetricTarget(src.target, child(path, 'target'))];
  if (!has(t, 'averageValue')) errs.push(required(child(path, 'target', 'averageValue'), 'must specify a positive target averageValue'));
  return errs;
}

function validateUtilizationOrValue(t: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!has(t, 'averageUtilization') && !has(t, 'averageValue')) errs.push(required(child(path, 'target', 'averageUtilization'), 'must set either a target raw value or a target utilization'));
  if (has(t, 'averageUtilization') && has(t, 'averageValue')) errs.push(forbidden(child(path, 'target', 'averageValue'), 'may not set both a target raw value and a target utilization'));
  return errs;
}

function validateResourceSource(src: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!src.name) errs.push(required(child(path, 'name'), 'must specify a resource name'));
  errs.push(...validateMetricTarget(src.target, child(path, 'target')));
  errs.push(...validateUtilizationOrValue(isObj(src.target) ? src.target : {}, path));
  return errs;
}

function validateContainerResourceSource(src: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!src.name) errs.push(required(child(path, 'name'), 'must specify a resource name'));
  else errs.push(...validateContainerResourceName(String(src.name), child(path, 'name')));
  if (!src.container) errs.push(required(child(path, 'container'), 'must specify a container'));
  else errs.push(...isDNS1123Label(String(src.container)).map((m) => invalid(child(path, 'container'), src.container, m)));
  errs.push(...validateMetricTarget(src.target, child(path, 'target')));
  errs.push(...validateUtilizationOrValue(isObj(src.target) ? src.target : {}, path));
  return errs;
}

const SOURCES: readonly { field: string; type: string; validate: (src: Obj, path: string) => FieldError[] }[] = [
  { field: 'object', type: 'Object', validate: validateObjectSource },
  { field: 'external', type: 'External', validate: validateExternalSource },
  { field: 'pods', type: 'Pods', validate: validatePodsSource },
  { field: 'resource', type: 'Resource', validate: validateResourceSource },
  { field: 'containerResource', type: 'ContainerResource', validate: validateContainerResourceSource },
];

function validateMetricSpec(spec: unknown, path: string): FieldError[] {
  const s: Obj = isObj(spec) ? spec : {};
  const errs: FieldError[] = [];
  const type = typeof s.type === 'string' ? s.type : '';
  if (!type) errs.push(required(child(path, 'type'), 'must specify a metric source type'));
  if (!(METRIC_SOURCE_TYPES as readonly string[]).includes(type)) errs.push(notSupported(child(path, 'type'), type, METRIC_SOURCE_TYPES));
  const present: string[] = [];
  for (const src of SOURCES) {
    if (!isObj(s[src.field])) continue;
    present.push(src.field);
    if (present.length === 1) errs.push(...src.validate(s[src.field], child(path, src.field)));
  }
  const expected = SOURCES.find((x) => x.type === type);
  if (expected) {
    if (!isObj(s[expected.field])) errs.push(required(child(path, expected.field), 'must populate information for the given metric source'));
  } else {
    errs.push(notSupported(child(path, 'type'), type, METRIC_SOURCE_TYPES));
  }
  if (present.length !== 1) {
    for (const f of present) if (f !== expected?.field) errs.push(forbidden(child(path, f), 'must populate the given metric source only'));
  }
  return errs;
}

function validateMetrics(metrics: unknown, path: string, minReplicas: unknown): FieldError[] {
  const errs: FieldError[] = [];
  let objectOrExternal = false;
  arr(metrics).forEach((m, i) => {
    errs.push(...validateMetricSpec(m, idx(path, i)));
    const t = isObj(m) ? m.type : undefined;
    if (t === 'Object' || t === 'External') objectOrExternal = true;
  });
  if (minReplicas === 0 && !objectOrExternal) errs.push(forbidden(path, 'must specify at least one Object or External metric to support scaling to zero replicas'));
  return errs;
}

function validateScalingPolicy(p: unknown, path: string): FieldError[] {
  const policy: Obj = isObj(p) ? p : {};
  const errs: FieldError[] = [];
  if (policy.type !== 'Pods' && policy.type !== 'Percent') errs.push(notSupported(child(path, 'type'), policy.type ?? '', SCALING_POLICY_TYPES));
  const value = typeof policy.value === 'number' ? policy.value : 0;
  const period = typeof policy.periodSeconds === 'number' ? policy.periodSeconds : 0;
  if (value <= 0) errs.push(invalid(child(path, 'value'), value, 'must be greater than zero'));
  if (period <= 0) errs.push(invalid(child(path, 'periodSeconds'), period, 'must be greater than zero'));
  if (period > MAX_PERIOD_SECONDS) errs.push(invalid(child(path, 'periodSeconds'), period, `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  return errs;
}

function validateScalingRules(rules: unknown, path: string): FieldError[] {
  if (!isObj(rules)) return [];
  const errs: FieldError[] = [];
  const w = rules.stabilizationWindowSeconds;
  if (typeof w === 'number' && w < 0) errs.push(invalid(child(path, 'stabilizationWindowSeconds'), w, 'must be greater than or equal to zero'));
  if (typeof w === 'number' && w > MAX_STABILIZATION_WINDOW_SECONDS) {
    errs.push(invalid(child(path, 'stabilizationWindowSeconds'), w, `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`));
  }
  if (rules.selectPolicy !== undefined && rules.selectPolicy !== null && !(SELECT_POLICIES as readonly string[]).includes(rules.selectPolicy)) {
    errs.push(notSupported(child(path, 'selectPolicy'), rules.selectPolicy, SELECT_POLICIES));
  }
  const policies = arr(rules.policies);
  if (policies.length === 0) errs.push(required(child(path, 'policies'), 'must specify at least one Policy'));
  policies.forEach((p, i) => errs.push(...validateScalingPolicy(p, idx(child(path, 'policies'), i))));
  return errs;
}

function validateSpec(spec: unknown, minReplicasLowerBound: number): FieldError[] {
  const s: Obj = isObj(spec) ? spec : {};
  const errs: FieldError[] = [];
  const min = s.minReplicas;
  const max = typeof s.maxReplicas === 'number' ? s.maxReplicas : 0;
  if (typeof min === 'number' && min < minReplicasLowerBound) {
    errs.push(invalid('spec.minReplicas', min, `must be greater than or equal to ${minReplicasLowerBound}`));
  }
  if (max < 1) errs.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (typeof min === 'number' && max < min) errs.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateCrossVersionObjectReference(s.scaleTargetRef, 'spec.scaleTargetRef'));
  errs.push(...validateMetrics(s.metrics, 'spec.metrics', min));
  if (isObj(s.behavior)) {
    errs.push(...validateScalingRules(s.behavior.scaleUp, 'spec.behavior.scaleUp'));
    errs.push(...validateScalingRules(s.behavior.scaleDown, 'spec.behavior.scaleDown'));
  }
  return errs;
}

/**
 * ValidateHorizontalPodAutoscaler (object metadata is validated by the caller), on create and
 * update. The HPAScaleToZero feature gate is off, as upstream's default: minReplicas must be ≥ 1
 * (upstream lets an update keep a 0 that an object already had; no object here can have one).
 */
export function validateHorizontalPodAutoscaler(hpa: unknown): FieldError[] {
  return validateSpec((hpa as Obj | undefined)?.spec, 1);
}

/** ValidateHorizontalPodAutoscalerStatusUpdate: replica counts are not negative. */
export function validateHorizontalPodAutoscalerStatus(hpa: unknown): FieldError[] {
  const st: Obj = isObj((hpa as Obj | undefined)?.status) ? (hpa as Obj).status : {};
  return [...validateNonnegative(st.currentReplicas, 'status.currentReplicas'), ...validateNonnegative(st.desiredReplicas, 'status.desiredReplicas')];
}
