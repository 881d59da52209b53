/**
 * autoscaling/v2 HorizontalPodAutoscaler defaults, as upstream's pkg/apis/autoscaling/v2/defaults.go:
 * minReplicas 1; no metrics → cpu Utilization 80 %; a behavior that is set gets every unset rule
 * filled (scaleUp: stabilization 0 s, Pods 4 / 15 s and Percent 100 / 15 s, selectPolicy Max;
 * scaleDown: Percent 100 / 15 s, selectPolicy Max, and no stabilization window: the controller's
 * --horizontal-pod-autoscaler-downscale-stabilization (5 min) applies). Quantities are canonical.
 */
import { canonicalQuantity } from '../quantity.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** autoscaling.DefaultCPUUtilization: the target of an HPA that names no metric. */
export const DEFAULT_CPU_UTILIZATION = 80;

/** The scale-up rules an unset field takes (GenerateHPAScaleUpRules' defaults). */
export const defaultScaleUpRules = (): Obj => ({
  stabilizationWindowSeconds: 0, selectPolicy: 'Max',
  policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }],
});
/** The scale-down rules an unset field takes (GenerateHPAScaleDownRules' defaults: no window). */
export const defaultScaleDownRules = (): Obj => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

function fillRules(from: unknown, defaults: Obj): Obj {
  if (!isObj(from)) return defaults;
  const out: Obj = { ...defaults };
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) {
    if (from[k] !== undefined && from[k] !== null) out[k] = from[k];
  }
  for (const [k, v] of Object.entries(from)) if (!(k in out)) out[k] = v;
  return out;
}

function canonical(o: unknown, keys: readonly string[]): void {
  if (!isObj(o)) return;
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'string' || typeof v === 'number') { try { o[k] = canonicalQuantity(v); } catch { /* validation reports it */ } }
  }
}

const SOURCE_FIELDS = ['object', 'pods', 'resource', 'containerResource', 'external'] as const;

/** SetDefaults_HorizontalPodAutoscaler, in place. */
export function defaultHorizontalPodAutoscaler(hpa: Obj): void {
  const spec: Obj = isObj(hpa.spec) ? hpa.spec : (hpa.spec = {});
  spec.minReplicas ??= 1;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  }
  if (isObj(spec.behavior)) {
    spec.behavior.scaleUp = fillRules(spec.behavior.scaleUp, defaultScaleUpRules());
    spec.behavior.scaleDown = fillRules(spec.behavior.scaleDown, defaultScaleDownRules());
  }
  for (const m of arr(spec.metrics)) for (const f of SOURCE_FIELDS) canonical(m[f]?.target, ['value', 'averageValue']);
  const status = hpa.status;
  if (isObj(status)) for (const m of arr(status.currentMetrics)) for (const f of SOURCE_FIELDS) canonical(m[f]?.current, ['value', 'averageValue']);
}
