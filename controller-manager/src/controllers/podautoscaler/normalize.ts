/**
 * From a metrics proposal to the replica count written (upstream horizontal.go's
 * normalizeDesiredReplicas and normalizeDesiredReplicasWithBehaviors): stabilization over the
 * recommendations of the last window, min/max, and the scale rate (without behavior: at most
 * max(2 × current, 4); with behavior: the scaleUp/scaleDown policies over the scale events of
 * their periods, selectPolicy Max/Min/Disabled). Pure given the history it is handed and `now`.
 */
import type { HPAScalingRules } from '@mk8s/api';

/** --horizontal-pod-autoscaler-downscale-stabilization. */
export const DEFAULT_DOWNSCALE_STABILIZATION_MS = 5 * 60_000;
const SCALE_UP_LIMIT_FACTOR = 2;
const SCALE_UP_LIMIT_MINIMUM = 4;

export interface Recommendation { replicas: number; atMs: number }
export interface ScaleEvent { change: number; atMs: number; outdated: boolean }

/** What the controller remembers of one HPA between syncs (upstream's per-key maps). */
export interface KeyHistory { recommendations: Recommendation[]; scaleUpEvents: ScaleEvent[]; scaleDownEvents: ScaleEvent[] }
export const emptyHistory = (): KeyHistory => ({ recommendations: [], scaleUpEvents: [], scaleDownEvents: [] });

export interface ConditionUpdate { type: 'AbleToScale' | 'ScalingLimited'; status: 'True' | 'False'; reason: string; message: string }
export interface Normalized { desiredReplicas: number; conditions: ConditionUpdate[] }

/** Records r in the history: the first sample older than every window is reused, else appended. */
function record(h: KeyHistory, r: number, now: number, isOld: (rec: Recommendation) => boolean): void {
  const old = h.recommendations.findLastIndex(isOld);
  if (old >= 0) h.recommendations[old] = { replicas: r, atMs: now };
  else h.recommendations.push({ replicas: r, atMs: now });
}

/** convertDesiredReplicasWithRules (no behavior). */
export function convertDesiredReplicasWithRules(current: number, desired: number, min: number, max: number): { replicas: number; reason: string; message: string } {
  const scaleUpLimit = Math.max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM);
  let maxAllowed: number, reason: string, message: string;
  if (max > scaleUpLimit) { maxAllowed = scaleUpLimit; reason = 'ScaleUpLimit'; message = 'the desired replica count is increasing faster than the maximum scale rate'; }
  else { maxAllowed = max; reason = 'TooManyReplicas'; message = 'the desired replica count is more than the maximum replica count'; }
  if (desired < min) return { replicas: min, reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
  if (desired > maxAllowed) return { replicas: maxAllowed, reason, message };
  return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}

/** normalizeDesiredReplicas: an HPA without behavior (downscale stabilization window, 2×/4 scale-up limit). */
export function normalizeDesiredReplicas(h: KeyHistory, o: { current: number; desired: number; min: number; max: number; downscaleStabilizationMs: number; now: number }): Normalized {
  const cutoff = o.now - o.downscaleStabilizationMs;
  let stabilized = o.desired;
  for (const rec of h.recommendations) if (rec.atMs >= cutoff && rec.replicas > stabilized) stabilized = rec.replicas;
  record(h, o.desired, o.now, (rec) => rec.atMs < cutoff);
  const conditions: ConditionUpdate[] = [stabilized !== o.desired
    ? { type: 'AbleToScale', status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }
    : { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' }];
  const r = convertDesiredReplicasWithRules(o.current, stabilized, o.min, o.max);
  conditions.push({ type: 'ScalingLimited', status: r.replicas === stabilized ? 'False' : 'True', reason: r.reason, message: r.message });
  return { desiredReplicas: r.replicas, conditions };
}

/** getReplicasChangePerPeriod: replicas changed by the events of the last period. */
export function replicasChangePerPeriod(periodSeconds: number, events: readonly ScaleEvent[], now: number): number {
  const cutoff = now - periodSeconds * 1000;
  let n = 0;
  for (const e of events) if (e.atMs > cutoff) n += e.change;
  return n;
}

/** calculateScaleUpLimitWithScalingRules. */
export function scaleUpLimit(current: number, up: readonly ScaleEvent[], down: readonly ScaleEvent[], rules: HPAScalingRules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pickMin = rules.selectPolicy === 'Min';
  let result = pickMin ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  for (const p of rules.policies ?? []) {
    const start = current - replicasChangePerPeriod(p.periodSeconds, up, now) + replicasChangePerPeriod(p.periodSeconds, down, now);
    const proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
    result = pickMin ? Math.min(result, proposed) : Math.max(result, proposed);
  }
  return result;
}

/** calculateScaleDownLimitWithBehaviors. */
export function scaleDownLimit(current: number, up: readonly ScaleEvent[], down: readonly ScaleEvent[], rules: HPAScalingRules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pickMin = rules.selectPolicy === 'Min';
  let result = pickMin ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  for (const p of rules.policies ?? []) {
    const start = current - replicasChangePerPeriod(p.periodSeconds, up, now) + replicasChangePerPeriod(p.periodSeconds, down, now);
    const proposed = p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100));
    result = pickMin ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  return result;
}

export interface BehaviorArgs {
  current: number; desired: number; min: number; max: number;
  /** Fully defaulted rules (the apiserver fills a set behavior; scaleDown's window may be unset). */
  scaleUp: HPAScalingRules; scaleDown: HPAScalingRules;
  downscaleStabilizationMs: number; now: number;
}

/** normalizeDesiredReplicasWithBehaviors: stabilization windows of both directions, then the policies' rate. */
export function normalizeDesiredReplicasWithBehaviors(h: KeyHistory, a: BehaviorArgs): Normalized {
  const upWindow = (a.scaleUp.stabilizationWindowSeconds ?? 0) * 1000;
  // maybeInitScaleDownStabilizationWindow: an unset scale-down window is the controller's flag.
  const downWindow = a.scaleDown.stabilizationWindowSeconds != null ? a.scaleDown.stabilizationWindowSeconds * 1000 : a.downscaleStabilizationMs;
  const upCutoff = a.now - upWindow, downCutoff = a.now - downWindow;
  let up = a.desired, down = a.desired;
  for (const rec of h.recommendations) {
    if (rec.atMs > upCutoff) up = Math.min(rec.replicas, up);
    if (rec.atMs > downCutoff) down = Math.max(rec.replicas, down);
  }
  let stabilized = a.current;
  if (stabilized < up) stabilized = up;
  if (stabilized > down) stabilized = down;
  record(h, a.desired, a.now, (rec) => rec.atMs < upCutoff && rec.atMs < downCutoff);
  const conditions: ConditionUpdate[] = [];
  if (stabilized !== a.desired) {
    conditions.push(a.desired >= a.current
      ? { type: 'AbleToScale', status: 'True', reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
      : { type: 'AbleToScale', status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' });
  } else {
    conditions.push({ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' });
  }
  const r = convertDesiredReplicasWithBehaviorRate(h, { ...a, desired: stabilized });
  conditions.push({ type: 'ScalingLimited', status: r.replicas === stabilized ? 'False' : 'True', reason: r.reason, message: r.message });
  return { desiredReplicas: r.replicas, conditions };
}

/** convertDesiredReplicasWithBehaviorRate. */
export function convertDesiredReplicasWithBehaviorRate(h: KeyHistory, a: BehaviorArgs): { replicas: number; reason: string; message: string } {
  if (a.desired > a.current) {
    const limit = Math.max(scaleUpLimit(a.current, h.scaleUpEvents, h.scaleDownEvents, a.scaleUp, a.now), a.current);
    let maxAllowed = a.max, reason = 'TooManyReplicas', message = 'the desired replica count is more than the maximum replica count';
    if (maxAllowed > limit) { maxAllowed = limit; reason = 'ScaleUpLimit'; message = 'the desired replica count is increasing faster than the maximum scale rate'; }
    if (a.desired > maxAllowed) return { replicas: maxAllowed, reason, message };
  } else if (a.desired < a.current) {
    const limit = Math.min(scaleDownLimit(a.current, h.scaleUpEvents, h.scaleDownEvents, a.scaleDown, a.now), a.current);
    let minAllowed = a.min, reason = 'TooFewReplicas', message = 'the desired replica count is less than the minimum replica count';
    if (minAllowed < limit) { minAllowed = limit; reason = 'ScaleDownLimit'; message = 'the desired replica count is decreasing faster than the maximum scale rate'; }
    if (a.desired < minAllowed) return { replicas: minAllowed, reason, message };
  }
  return { replicas: a.desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}

const longestPeriodSeconds = (rules: HPAScalingRules | undefined): number => Math.max(0, ...(rules?.policies ?? []).map((p) => p.periodSeconds));

/** storeScaleEvent: a rescale with behavior is remembered for the policies' periods (outdated slots reused). */
export function storeScaleEvent(h: KeyHistory, rules: { scaleUp?: HPAScalingRules; scaleDown?: HPAScalingRules } | undefined, prev: number, next: number, now: number): void {
  if (!rules) return;
  const upward = next > prev;
  const events = upward ? h.scaleUpEvents : h.scaleDownEvents;
  const cutoff = now - longestPeriodSeconds(upward ? rules.scaleUp : rules.scaleDown) * 1000;
  for (const e of events) if (e.atMs < cutoff) e.outdated = true;
  const ev: ScaleEvent = { change: Math.abs(next - prev), atMs: now, outdated: false };
  const old = events.findLastIndex((e) => e.outdated);
  if (old >= 0) events[old] = ev; else events.push(ev);
}
