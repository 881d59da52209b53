import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment, ReplicaSet } from '@mk8s/api';
import { computeHash } from '../../util/hash.js';
import {
  calculateStatus, cleanupUnhealthy, deploymentComplete, equalIgnoreHash, findActiveOrLatest, findNewReplicaSet, maxScaledDown,
  maxSurge, maxUnavailable, newReplicaSetAnnotations, newRSNewReplicas, proportionalSizes, scaleDownOldForRollingUpdate,
  REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, getCondition,
} from './util.js';

const tpl = (image: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } });
function dep(replicas: number, surge: number | string = '25%', unavail: number | string = '25%', image = 'v2'): Deployment {
  return { metadata: { name: 'web', namespace: 'default', generation: 1 }, spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: tpl(image), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: surge, maxUnavailable: unavail } } } };
}
function rs(name: string, replicas: number, available = replicas, image = name, created = 0): ReplicaSet {
  return { metadata: { name, namespace: 'default', creationTimestamp: new Date(Date.UTC(2024, 0, 1) + created * 1000).toISOString() }, spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { ...tpl(image), metadata: { labels: { app: 'web', 'pod-template-hash': name } } } }, status: { replicas, availableReplicas: available } };
}

test('maxSurge/maxUnavailable of a Deployment', () => {
  assert.equal(maxSurge(dep(10)), 3);
  assert.equal(maxUnavailable(dep(10)), 2);
  assert.equal(maxUnavailable(dep(3, 0, 5)), 3, 'capped at replicas');
  assert.equal(maxUnavailable(dep(0)), 0);
  const recreate = dep(3); recreate.spec!.strategy = { type: 'Recreate' };
  assert.equal(maxSurge(recreate), 0);
  assert.equal(maxUnavailable(recreate), 0);
});

test('newRSNewReplicas never exceeds replicas + maxSurge', () => {
  const cases = [
    { name: 'fresh rollout surges', d: dep(4, 1, 1), old: [rs('v1', 4)], newSize: 0, want: 1 },
    { name: 'at the cap: no change', d: dep(4, 1, 1), old: [rs('v1', 4)], newSize: 1, want: 1 },
    { name: 'old shrank: grows', d: dep(4, 1, 1), old: [rs('v1', 2)], newSize: 1, want: 3 },
    { name: 'never past replicas', d: dep(4, 3, 1), old: [rs('v1', 0)], newSize: 2, want: 4 },
    { name: 'percent surge rounds up', d: dep(10, '25%', '25%'), old: [rs('v1', 10)], newSize: 0, want: 3 },
  ];
  for (const tc of cases) {
    const n = rs('v2', tc.newSize);
    assert.equal(newRSNewReplicas(tc.d, [...tc.old, n], n), tc.want, tc.name);
  }
});

test('old ReplicaSets scale down without dropping below replicas - maxUnavailable available', () => {
  const d = dep(4, 1, 1);
  const old = rs('v1', 4);
  const fresh = rs('v2', 1, 0);
  // 5 pods, minAvailable 3, new has 1 unavailable: may remove 5 - 3 - 1 = 1
  assert.equal(maxScaledDown(d, [old, fresh], fresh), 1);
  assert.deepEqual([...scaleDownOldForRollingUpdate(d, [old, fresh], [old])], [['v1', 3]]);
  // once the new pod is available, 5 available - 3 → 2 may go
  const ready = rs('v2', 1, 1);
  assert.deepEqual([...scaleDownOldForRollingUpdate(d, [old, ready], [old])], [['v1', 2]]);
  // unhealthy old replicas are cleaned up first, oldest first
  assert.deepEqual([...cleanupUnhealthy([rs('a', 3, 1, 'a', 0), rs('b', 2, 0, 'b', 1)], 3)], [['a', 1], ['b', 1]]);
  // a status that lags a scale-down (4 available, spec 3) never becomes a scale-up
  assert.throws(() => cleanupUnhealthy([rs('a', 3, 4)], 2), /invalid request to scale down default\/a 3 -> 4/);
});

test('proportional scaling spreads a resize over active ReplicaSets', () => {
  const d = dep(20, 3, 2);
  const a = rs('a', 5); a.metadata!.annotations = { 'deployment.kubernetes.io/max-replicas': '13' };
  const b = rs('b', 8, 8, 'b', 1); b.metadata!.annotations = { 'deployment.kubernetes.io/max-replicas': '13' };
  // was 10 (+3 surge = 13), now 20 (+3 = 23): 10 more to spread
  const sizes = proportionalSizes(d, b, [a]);
  assert.equal((sizes.get('a') ?? 0) + (sizes.get('b') ?? 0), 23);
  assert.deepEqual([...sizes].sort(), [['a', 9], ['b', 14]]);
});

test('findNewReplicaSet ignores the pod-template-hash label', () => {
  const d = dep(3, 1, 1, 'v1');
  const other = rs('x', 1, 1, 'other');
  const match = rs('v1', 1, 1, 'v1');
  assert.equal(findNewReplicaSet(d, [other, match]), match);
  assert.equal(equalIgnoreHash(d.spec!.template, match.spec!.template), true);
  assert.equal(findNewReplicaSet(dep(3, 1, 1, 'v9'), [other, match]), undefined);
  // a ReplicaSet whose stored template gained a server default still counts as new by its hash
  const d5 = dep(3, 1, 1, 'v5');
  const hash = computeHash(d5.spec!.template);
  const defaulted = rs(`web-${hash}`, 1, 1, 'v5');
  defaulted.metadata!.labels = { 'pod-template-hash': hash };
  defaulted.spec!.template!.spec!.dnsPolicy = 'ClusterFirst';
  assert.equal(findNewReplicaSet(d5, [other, defaulted]), defaulted);
});

test('findActiveOrLatest', () => {
  const a = rs('a', 0, 0, 'a', 0), b = rs('b', 0, 0, 'b', 1), c = rs('c', 2, 2, 'c', 2);
  assert.equal(findActiveOrLatest(undefined, [a, b]), b);
  assert.equal(findActiveOrLatest(c, [a, b]), c);
  assert.equal(findActiveOrLatest(c, [rs('d', 1)]), undefined);
});

test('revision annotations: a reused ReplicaSet records its old revision in revision-history', () => {
  const d = dep(3);
  d.metadata!.annotations = { 'kubernetes.io/change-cause': 'x', [REVISION_ANNOTATION]: '4' };
  const old = rs('v1', 0); old.metadata!.annotations = { [REVISION_ANNOTATION]: '1' };
  const a = newReplicaSetAnnotations(d, old, 3, true)!;
  assert.equal(a[REVISION_ANNOTATION], '3');
  assert.equal(a[REVISION_HISTORY_ANNOTATION], '1');
  assert.equal(a['kubernetes.io/change-cause'], 'x');
  const again = structuredClone(old); again.metadata!.annotations = a;
  assert.equal(newReplicaSetAnnotations(d, again, 3, true), undefined, 'nothing changes the second time');
  const fresh = newReplicaSetAnnotations(d, rs('v3', 0), 1, false)!;
  assert.equal(fresh['deployment.kubernetes.io/desired-replicas'], '3');
  assert.equal(fresh['deployment.kubernetes.io/max-replicas'], '4');
});

test('calculateStatus and completeness', () => {
  const d = dep(3, 1, 1);
  const n = rs('v2', 3, 3); n.status!.readyReplicas = 3;
  const s = calculateStatus(d, [n, rs('v1', 0)], n, Date.UTC(2024, 0, 1));
  assert.equal(s.replicas, 3); assert.equal(s.updatedReplicas, 3); assert.equal(s.availableReplicas, 3); assert.equal(s.readyReplicas, 3);
  assert.equal(getCondition(s, 'Available')?.status, 'True');
  assert.equal(deploymentComplete(d, s), true);
  const half = calculateStatus(d, [rs('v2', 3, 1)], rs('v2', 3, 1), 0);
  assert.equal(getCondition(half, 'Available')?.reason, 'MinimumReplicasUnavailable');
  assert.equal(half.unavailableReplicas, 2);
});
