import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@mk8s/api';
import { deleteBefore, isPodAvailable, podsToDelete } from './pods.js';

const T0 = Date.UTC(2024, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();
function pod(name: string, o: { node?: string; phase?: string; ready?: boolean; readySince?: number; restarts?: number; created?: number; cost?: string } = {}): Pod {
  const p: Pod = { metadata: { name, uid: name, creationTimestamp: iso(o.created ?? T0) }, spec: { containers: [{ name: 'c' }] }, status: { phase: o.phase ?? 'Running' } };
  if (o.node) p.spec!.nodeName = o.node;
  if (o.ready !== undefined) p.status!.conditions = [{ type: 'Ready', status: o.ready ? 'True' : 'False', lastTransitionTime: iso(o.readySince ?? T0) }];
  if (o.restarts !== undefined) p.status!.containerStatuses = [{ name: 'c', image: 'x', imageID: '', ready: true, restartCount: o.restarts }];
  if (o.cost) p.metadata!.annotations = { 'controller.kubernetes.io/pod-deletion-cost': o.cost };
  return p;
}

test('deletion ranking prefers the pods Kubernetes deletes first', () => {
  const cases: { name: string; a: Pod; b: Pod; rankA?: number; rankB?: number }[] = [
    { name: 'unscheduled before scheduled', a: pod('a'), b: pod('b', { node: 'n1' }) },
    { name: 'pending before unknown', a: pod('a', { node: 'n', phase: 'Pending' }), b: pod('b', { node: 'n', phase: 'Unknown' }) },
    { name: 'unknown before running', a: pod('a', { node: 'n', phase: 'Unknown' }), b: pod('b', { node: 'n', phase: 'Running' }) },
    { name: 'not ready before ready', a: pod('a', { node: 'n', ready: false }), b: pod('b', { node: 'n', ready: true }) },
    { name: 'lower deletion cost first', a: pod('a', { node: 'n', cost: '-5' }), b: pod('b', { node: 'n' }) },
    { name: 'doubled-up node first', a: pod('a', { node: 'n' }), b: pod('b', { node: 'm' }), rankA: 3, rankB: 1 },
    { name: 'ready for less time first', a: pod('a', { node: 'n', ready: true, readySince: T0 + 5000 }), b: pod('b', { node: 'n', ready: true, readySince: T0 }) },
    { name: 'more restarts first', a: pod('a', { node: 'n', restarts: 4 }), b: pod('b', { node: 'n', restarts: 1 }) },
    { name: 'newer first', a: pod('a', { node: 'n', created: T0 + 1000 }), b: pod('b', { node: 'n', created: T0 }) },
  ];
  for (const tc of cases) {
    assert.equal(deleteBefore(tc.a, tc.rankA ?? 0, tc.b, tc.rankB ?? 0), true, tc.name);
    assert.equal(deleteBefore(tc.b, tc.rankB ?? 0, tc.a, tc.rankA ?? 0), false, `${tc.name} (reversed)`);
  }
});

test('podsToDelete picks unscheduled, then pending, then not-ready pods', () => {
  const pods = [pod('running', { node: 'n', ready: true }), pod('notready', { node: 'n', ready: false }), pod('pending', { node: 'n', phase: 'Pending' }), pod('unscheduled', { phase: 'Pending' })];
  assert.deepEqual(podsToDelete(pods, pods, 3).map((p) => p.metadata!.name), ['unscheduled', 'pending', 'notready']);
  assert.deepEqual(podsToDelete(pods, pods, 0), []);
});

test('isPodAvailable honours minReadySeconds', () => {
  const p = pod('a', { ready: true, readySince: T0 });
  assert.equal(isPodAvailable(p, 0, T0), true);
  assert.equal(isPodAvailable(p, 10, T0 + 5_000), false);
  assert.equal(isPodAvailable(p, 10, T0 + 10_001), true);
  assert.equal(isPodAvailable(pod('b', { ready: false }), 0, T0), false);
});
