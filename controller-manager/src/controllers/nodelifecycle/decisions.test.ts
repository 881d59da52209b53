import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod, Taint } from '@mk8s/api';
import { computeZoneState, evictionTime, wantedNoExecuteKey, wantedNoScheduleKeys, zoneEvictionQPS, TAINT_NOT_READY, TAINT_UNREACHABLE } from './decisions.js';

test('zone states follow the disruption rule', () => {
  const cases: { ready: string[]; want: string }[] = [
    { ready: ['True', 'True'], want: 'Normal' },
    { ready: ['True', 'Unknown'], want: 'Normal' },
    { ready: ['Unknown'], want: 'FullDisruption' },
    { ready: ['Unknown', 'False'], want: 'FullDisruption' },
    { ready: ['True', 'Unknown', 'Unknown'], want: 'Normal' },
    { ready: ['True', 'Unknown', 'Unknown', 'Unknown'], want: 'PartialDisruption' },
    { ready: ['True', 'True', 'True', 'Unknown', 'Unknown', 'Unknown'], want: 'Normal' },
  ];
  for (const tc of cases) assert.equal(computeZoneState(tc.ready).state, tc.want, tc.ready.join(','));
  const o = { evictionQPS: 0.1, secondaryEvictionQPS: 0.01, largeClusterThreshold: 50 };
  assert.equal(zoneEvictionQPS('PartialDisruption', 4, o), 0, 'small clusters stop evicting');
  assert.equal(zoneEvictionQPS('PartialDisruption', 60, o), 0.01);
  assert.equal(zoneEvictionQPS('Normal', 4, o), 0.1);
});

const node = (ready: string | undefined, extra: Partial<Node['spec']> = {}): Node => ({ metadata: { name: 'n' }, spec: { ...extra }, status: ready ? { conditions: [{ type: 'Ready', status: ready }] } : {} });

test('taints follow the Ready condition', () => {
  assert.equal(wantedNoExecuteKey(node('True')), undefined);
  assert.equal(wantedNoExecuteKey(node('False')), TAINT_NOT_READY);
  assert.equal(wantedNoExecuteKey(node('Unknown')), TAINT_UNREACHABLE);
  assert.deepEqual(wantedNoScheduleKeys(node('Unknown', { unschedulable: true })), [TAINT_UNREACHABLE, 'node.kubernetes.io/unschedulable']);
});

test('eviction time: untolerated now, tolerated after tolerationSeconds from timeAdded, forever never', () => {
  const t0 = Date.UTC(2024, 0, 1);
  const taint: Taint = { key: TAINT_UNREACHABLE, effect: 'NoExecute', timeAdded: new Date(t0).toISOString() };
  const pod = (tolerations?: NonNullable<Pod['spec']>['tolerations']): Pod => ({ metadata: { name: 'p' }, spec: { containers: [], ...(tolerations ? { tolerations } : {}) } });
  assert.equal(evictionTime(pod(), [taint], 300, t0), t0 + 300_000, 'default toleration');
  assert.equal(evictionTime(pod([{ key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]), [taint], 300, t0), t0 + 5000);
  assert.equal(evictionTime(pod([{ operator: 'Exists' }]), [taint], 300, t0), 'never');
  assert.equal(evictionTime(pod(), [{ key: 'custom', effect: 'NoExecute' }], 300, t0), 'now');
  assert.equal(evictionTime(pod(), [{ key: 'custom', effect: 'NoSchedule' }], 300, t0), 'never');
  const admitted = pod([{ key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]);
  assert.equal(evictionTime(admitted, [taint], 2, t0), t0 + 2000, "the controller's default replaces the admission default");
});
