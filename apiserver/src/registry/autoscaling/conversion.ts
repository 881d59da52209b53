/**
 * autoscaling/v1 ⇄ autoscaling/v2 HorizontalPodAutoscaler conversion, as upstream's
 * pkg/apis/autoscaling/v1/conversion.go (through the internal version, which has v2's shape):
 * - spec: the first cpu Resource metric's averageUtilization ⇄ targetCPUUtilizationPercentage;
 *   every other metric rides in the `autoscaling.alpha.kubernetes.io/metrics` annotation (v1's
 *   MetricSpec form), `spec.behavior` in `…/behavior` (v2 JSON);
 * - status: a cpu Resource currentAverageUtilization ⇄ currentCPUUtilizationPercentage; all
 *   currentMetrics in `…/current-metrics`, conditions in `…/conditions`.
 * v1 → v2 reads the annotations back and drops them. Pure; never mutates its input.
 */
import type { KubeObject } from '@mk8s/api';

export const METRIC_SPECS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const METRIC_STATUSES_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';
const ROUND_TRIP_ANNOTATIONS = [METRIC_SPECS_ANNOTATION, METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION, BEHAVIOR_ANNOTATION];
/** autoscaling.DefaultCPUUtilization. */
const DEFAULT_CPU_UTILIZATION = 80;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** Copies the keys of from whose values are set (Go omitempty of pointers and strings). */
function pick(from: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of keys) if (from[k] !== undefined && from[k] !== null && from[k] !== '') out[k] = from[k];
  return out;
}

const ref = (r: unknown): Obj => pick(isObj(r) ? r : {}, ['kind', 'name', 'apiVersion']);

// ---- metric specs ----

function metricSpecToV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  const t = (src: Obj | undefined): Obj => (isObj(src?.target) ? src!.target : {});
  if (isObj(m.object)) {
    const o = m.object, tg = t(o);
    out.object = { target: ref(o.describedObject), metricName: o.metric?.name ?? '', targetValue: tg.value ?? '0', ...pick({ selector: o.metric?.selector, averageValue: tg.averageValue }, ['selector', 'averageValue']) };
  }
  if (isObj(m.pods)) {
    const p = m.pods;
    out.pods = { metricName: p.metric?.name ?? '', targetAverageValue: t(p).averageValue ?? '0', ...pick({ selector: p.metric?.selector }, ['selector']) };
  }
  if (isObj(m.resource)) {
    const r = m.resource, tg = t(r);
    out.resource = { name: r.name, ...pick({ targetAverageUtilization: tg.averageUtilization, targetAverageValue: tg.averageValue }, ['targetAverageUtilization', 'targetAverageValue']) };
  }
  if (isObj(m.containerResource)) {
    const r = m.containerResource, tg = t(r);
    out.containerResource = { name: r.name, container: r.container, ...pick({ targetAverageUtilization: tg.averageUtilization, targetAverageValue: tg.averageValue }, ['targetAverageUtilization', 'targetAverageValue']) };
  }
  if (isObj(m.external)) {
    const e = m.external, tg = t(e);
    out.external = { metricName: e.metric?.name ?? '', ...pick({ metricSelector: e.metric?.selector, targetValue: tg.value, targetAverageValue: tg.averageValue }, ['metricSelector', 'targetValue', 'targetAverageValue']) };
  }
  return out;
}

const identifier = (name: unknown, selector: unknown): Obj => ({ name: name ?? '', ...pick({ selector }, ['selector']) });

function metricSpecToV2(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const o = m.object;
    out.object = {
      describedObject: ref(o.target), metric: identifier(o.metricName, o.selector),
      target: { type: o.averageValue == null ? 'Value' : 'AverageValue', ...pick({ value: o.targetValue, averageValue: o.averageValue }, ['value', 'averageValue']) },
    };
  }
  if (isObj(m.pods)) {
    const p = m.pods;
    out.pods = { metric: identifier(p.metricName, p.selector), target: { type: 'AverageValue', averageValue: p.targetAverageValue ?? '0' } };
  }
  for (const f of ['resource', 'containerResource'] as const) {
    if (!isObj(m[f])) continue;
    const r = m[f];
    out[f] = {
      name: r.name, ...(f === 'containerResource' ? { container: r.container } : {}),
      target: { type: r.targetAverageUtilization == null ? 'AverageValue' : 'Utilization', ...pick({ averageUtilization: r.targetAverageUtilization, averageValue: r.targetAverageValue }, ['averageUtilization', 'averageValue']) },
    };
  }
  if (isObj(m.external)) {
    const e = m.external;
    out.external = {
      metric: identifier(e.metricName, e.metricSelector),
      target: { type: e.targetValue == null ? 'AverageValue' : 'Value', ...pick({ value: e.targetValue, averageValue: e.targetAverageValue }, ['value', 'averageValue']) },
    };
  }
  return out;
}

// ---- metric statuses ----

function metricStatusToV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  const cur = (src: Obj | undefined): Obj => (isObj(src?.current) ? src!.current : {});
  if (isObj(m.object)) {
    const o = m.object, c = cur(o);
    out.object = { target: ref(o.describedObject), metricName: o.metric?.name ?? '', currentValue: c.value ?? '0', ...pick({ selector: o.metric?.selector, averageValue: c.averageValue }, ['selector', 'averageValue']) };
  }
  if (isObj(m.pods)) {
    const p = m.pods;
    out.pods = { metricName: p.metric?.name ?? '', currentAverageValue: cur(p).averageValue ?? '0', ...pick({ selector: p.metric?.selector }, ['selector']) };
  }
  for (const f of ['resource', 'containerResource'] as const) {
    if (!isObj(m[f])) continue;
    const r = m[f], c = cur(r);
    out[f] = { name: r.name, ...(f === 'containerResource' ? { container: r.container } : {}), ...pick({ currentAverageUtilization: c.averageUtilization }, ['currentAverageUtilization']), currentAverageValue: c.averageValue ?? '0' };
  }
  if (isObj(m.external)) {
    const e = m.external, c = cur(e);
    out.external = { metricName: e.metric?.name ?? '', currentValue: c.value ?? '0', ...pick({ metricSelector: e.metric?.selector, currentAverageValue: c.averageValue }, ['metricSelector', 'currentAverageValue']) };
  }
  return out;
}

function metricStatusToV2(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const o = m.object;
    out.object = { describedObject: ref(o.target), metric: identifier(o.metricName, o.selector), current: pick({ value: o.currentValue, averageValue: o.averageValue }, ['value', 'averageValue']) };
  }
  if (isObj(m.pods)) {
    const p = m.pods;
    out.pods = { metric: identifier(p.metricName, p.selector), current: pick({ averageValue: p.currentAverageValue }, ['averageValue']) };
  }
  for (const f of ['resource', 'containerResource'] as const) {
    if (!isObj(m[f])) continue;
    const r = m[f];
    out[f] = { name: r.name, ...(f === 'containerResource' ? { container: r.container } : {}), current: pick({ averageValue: r.currentAverageValue, averageUtilization: r.currentAverageUtilization }, ['averageValue', 'averageUtilization']) };
  }
  if (isObj(m.external)) {
    const e = m.external;
    out.external = { metric: identifier(e.metricName, e.metricSelector), current: pick({ value: e.currentValue, averageValue: e.currentAverageValue }, ['value', 'averageValue']) };
  }
  return out;
}

const isCpuResource = (m: Obj): boolean => m.type === 'Resource' && isObj(m.resource) && m.resource.name === 'cpu';

/** The v2 (storage) form of an autoscaling/v1 HorizontalPodAutoscaler. */
export function hpaV1ToV2(v1: KubeObject): KubeObject {
  const src = v1 as Obj;
  const spec: Obj = isObj(src.spec) ? src.spec : {};
  const status: Obj | undefined = isObj(src.status) ? src.status : undefined;
  const annotations: Record<string, string> = { ...(isObj(src.metadata?.annotations) ? src.metadata.annotations : {}) };
  const parse = (k: string): unknown => { try { return annotations[k] === undefined ? undefined : JSON.parse(annotations[k]!); } catch { return undefined; } };
  const [otherMetrics, behavior, current, conditions] = [METRIC_SPECS_ANNOTATION, BEHAVIOR_ANNOTATION, METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION].map(parse);

  const outSpec: Obj = { scaleTargetRef: ref(spec.scaleTargetRef), ...pick(spec, ['minReplicas']), maxReplicas: spec.maxReplicas ?? 0 };
  const metrics: Obj[] = arr(otherMetrics).map(metricSpecToV2);
  if (typeof spec.targetCPUUtilizationPercentage === 'number') {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  outSpec.metrics = metrics.length ? metrics
    : [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  if (isObj(behavior) && Object.keys(behavior).length > 0) outSpec.behavior = behavior;

  const out: Obj = { ...src, apiVersion: 'autoscaling/v2', spec: outSpec };
  const meta: Obj = { ...src.metadata };
  for (const k of ROUND_TRIP_ANNOTATIONS) delete annotations[k];
  if (Object.keys(annotations).length) meta.annotations = annotations; else delete meta.annotations;
  out.metadata = meta;

  if (status) {
    const st: Obj = { ...pick(status, ['observedGeneration', 'lastScaleTime']), ...(status.currentReplicas ? { currentReplicas: status.currentReplicas } : {}), desiredReplicas: status.desiredReplicas ?? 0 };
    if (Array.isArray(current)) {
      if (current.length) st.currentMetrics = arr(current).map(metricStatusToV2);
    } else if (typeof status.currentCPUUtilizationPercentage === 'number') {
      st.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } }];
    }
    if (Array.isArray(conditions) && conditions.length) st.conditions = conditions;
    out.status = st;
  }
  return out as KubeObject;
}

/** The autoscaling/v1 form of a stored (v2) HorizontalPodAutoscaler. */
export function hpaV2ToV1(v2: KubeObject): KubeObject {
  const src = v2 as Obj;
  const spec: Obj = isObj(src.spec) ? src.spec : {};
  const status: Obj = isObj(src.status) ? src.status : {};
  const metrics = arr(spec.metrics);
  const other = metrics.filter((m) => !(isCpuResource(m) && m.resource.target?.averageUtilization != null)).map(metricSpecToV1);
  const currentMetrics = arr(status.currentMetrics);
  const conditions = arr(status.conditions);

  const annotations: Record<string, string> = { ...(isObj(src.metadata?.annotations) ? src.metadata.annotations : {}) };
  if (other.length) annotations[METRIC_SPECS_ANNOTATION] = JSON.stringify(other);
  if (currentMetrics.length) annotations[METRIC_STATUSES_ANNOTATION] = JSON.stringify(currentMetrics.map(metricStatusToV1));
  if (conditions.length) annotations[CONDITIONS_ANNOTATION] = JSON.stringify(conditions);
  if (isObj(spec.behavior)) annotations[BEHAVIOR_ANNOTATION] = JSON.stringify(spec.behavior);

  const outSpec: Obj = { scaleTargetRef: ref(spec.scaleTargetRef), ...pick(spec, ['minReplicas']), maxReplicas: spec.maxReplicas ?? 0 };
  const cpu = metrics.find(isCpuResource);
  if (cpu && typeof cpu.resource.target?.averageUtilization === 'number') outSpec.targetCPUUtilizationPercentage = cpu.resource.target.averageUtilization;

  const outStatus: Obj = { ...pick(status, ['observedGeneration', 'lastScaleTime']), currentReplicas: status.currentReplicas ?? 0, desiredReplicas: status.desiredReplicas ?? 0 };
  for (const m of currentMetrics) {
    if (m.type === 'Resource' && isObj(m.resource) && m.resource.name === 'cpu' && typeof m.resource.current?.averageUtilization === 'number') {
      outStatus.currentCPUUtilizationPercentage = m.resource.current.averageUtilization;
    }
  }
  const meta: Obj = { ...src.metadata };
  if (Object.keys(annotations).length) meta.annotations = annotations; else delete meta.annotations;
  const out: Obj = { ...src, apiVersion: 'autoscaling/v1', metadata: meta, spec: outSpec, status: outStatus };
  storedForms.set(out, v2);
  return out as KubeObject;
}

const storedForms = new WeakMap<object, KubeObject>();

/**
 * The v2 object a v1 view object was made from (hpaV2ToV1 remembers it), else its conversion.
 * Upstream prints tables from the internal version, whatever version was asked: metric order and
 * all follow the stored object, not a v1 round trip.
 */
export function storedFormOf(o: KubeObject): KubeObject {
  return o.apiVersion === 'autoscaling/v1' ? storedForms.get(o) ?? hpaV1ToV2(o) : o;
}
