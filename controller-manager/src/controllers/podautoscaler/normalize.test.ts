import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HPAScalingRules } from '@mk8s/api';
import { emptyHistory, normalizeDesiredReplicas, normalizeDesiredReplicasWithBehaviors, scaleDownLimit, scaleUpLimit, storeScaleEvent, type KeyHistory } from './normalize.js';

const T = 1_000_000;
const UP: HPAScalingRules = { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] };
const DOWN: HPAScalingRules = { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
const hist = (recs: [number, number][]): KeyHistory => ({ ...emptyHistory(), recommendations: recs.map(([replicas, ago]) => ({ replicas, atMs: T - ago })) });

for (const tc of [
  { name: 'default scale-up: max(4 pods, 100 %) of 1', current: 1, desired: 10, up: UP, want: 5, limited: 'ScaleUpLimit' },
  { name: 'default scale-up: 100 % of 10 beats 4 pods', current: 10, desired: 50, up: UP, want: 20, limited: 'ScaleUpLimit' },
  { name: 'selectPolicy Min takes the smaller step', current: 10, desired: 50, up: { ...UP, selectPolicy: 'Min' }, want: 14, limited: 'ScaleUpLimit' },
  { name: 'selectPolicy Disabled never scales up', current: 3, desired: 9, up: { ...UP, selectPolicy: 'Disabled' }, want: 3, limited: 'ScaleUpLimit' },
  { name: 'maxReplicas below the rate', current: 3, desired: 9, up: UP, max: 5, want: 5, limited: 'TooManyReplicas' },
  { name: 'within range', current: 3, desired: 5, up: UP, want: 5, limited: 'DesiredWithinRange' },
  { name: 'scale-down to min', current: 5, desired: 0, up: UP, down: { ...DOWN, stabilizationWindowSeconds: 0 }, min: 2, want: 2, limited: 'TooFewReplicas' },
  { name: 'scale-down by one pod per period', current: 5, desired: 1, up: UP, down: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] }, want: 4, limited: 'ScaleDownLimit' },
] as { name: string; current: number; desired: number; up: HPAScalingRules; down?: HPAScalingRules; min?: number; max?: number; want: number; limited: string }[]) {
  test(`normalizeDesiredReplicasWithBehaviors: ${tc.name}`, () => {
    const r = normalizeDesiredReplicasWithBehaviors(emptyHistory(), {
      current: tc.current, desired: tc.desired, min: tc.min ?? 1, max: tc.max ?? 100, scaleUp: tc.up, scaleDown: tc.down ?? DOWN, downscaleStabilizationMs: 300_000, now: T,
    });
    assert.equal(r.desiredReplicas, tc.want);
    assert.equal(r.conditions.find((c) => c.type === 'ScalingLimited')!.reason, tc.limited);
  });
}

test('stabilization windows: the highest recommendation of the scale-down window, the lowest of the scale-up one', () => {
  const args = { min: 1, max: 100, scaleUp: { ...UP, stabilizationWindowSeconds: 60 }, scaleDown: { ...DOWN, stabilizationWindowSeconds: 120 }, downscaleStabilizationMs: 300_000, now: T };
  const down = normalizeDesiredReplicasWithBehaviors(hist([[8, 100_000], [6, 30_000], [9, 200_000]]), { ...args, current: 8, desired: 2 });
  assert.equal(down.desiredReplicas, 8, '8 is within the 120 s window, 9 is not');
  assert.deepEqual(down.conditions[0], { type: 'AbleToScale', status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' });
  const up = normalizeDesiredReplicasWithBehaviors(hist([[3, 30_000], [2, 90_000]]), { ...args, current: 2, desired: 10 });
  assert.equal(up.desiredReplicas, 3, 'the lowest of the last 60 s (3) wins over 10');
  assert.equal(up.conditions[0]!.reason, 'ScaleUpStabilized');
  const unset = normalizeDesiredReplicasWithBehaviors(hist([[8, 250_000]]), { ...args, scaleDown: DOWN, current: 8, desired: 2 });
  assert.equal(unset.desiredReplicas, 8, 'an unset scale-down window is the controller flag (300 s)');
});

test('without behavior: 5 min of recommendations hold a scale-down; the scale-up rate is max(2×, 4)', () => {
  const h = hist([[6, 200_000]]);
  const r = normalizeDesiredReplicas(h, { current: 6, desired: 2, min: 1, max: 10, downscaleStabilizationMs: 300_000, now: T });
  assert.equal(r.desiredReplicas, 6);
  assert.equal(r.conditions[0]!.reason, 'ScaleDownStabilized');
  assert.equal(h.recommendations.length, 2, 'the new recommendation is recorded');
  const later = normalizeDesiredReplicas(h, { current: 6, desired: 2, min: 1, max: 10, downscaleStabilizationMs: 300_000, now: T + 301_000 });
  assert.equal(later.desiredReplicas, 2);
  assert.equal(normalizeDesiredReplicas(emptyHistory(), { current: 3, desired: 20, min: 1, max: 30, downscaleStabilizationMs: 0, now: T }).desiredReplicas, 6);
});

test('scale events of the period count against the policies; outdated slots are reused', () => {
  const h = emptyHistory();
  storeScaleEvent(h, { scaleUp: UP, scaleDown: DOWN }, 2, 6, T);
  assert.equal(scaleUpLimit(6, h.scaleUpEvents, h.scaleDownEvents, UP, T + 5_000), 6, 'the period started at 2: max(2+4, 2×2) = 6');
  assert.equal(scaleUpLimit(6, h.scaleUpEvents, h.scaleDownEvents, UP, T + 16_000), 12, 'a new period starts from 6');
  storeScaleEvent(h, { scaleUp: UP, scaleDown: DOWN }, 6, 8, T + 60_000);
  assert.equal(h.scaleUpEvents.length, 1, 'the outdated event slot is reused');
  storeScaleEvent(h, { scaleUp: UP, scaleDown: DOWN }, 8, 4, T + 61_000);
  assert.equal(scaleDownLimit(4, h.scaleUpEvents, h.scaleDownEvents, DOWN, T + 62_000), 0, '100 % of the 8 the period started with');
});
