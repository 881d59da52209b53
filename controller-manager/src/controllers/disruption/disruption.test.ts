import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PodDisruptionBudgets, type Pod } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import { DisruptionController, type PDBObj } from './disruption.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

const pdb = (spec: Record<string, unknown>, status?: Record<string, unknown>) => ({
  apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: 'default', generation: 2 },
  spec: { selector: { matchLabels: { app: 'web' } }, ...spec }, ...(status ? { status } : {}),
});
const pod = (name: string, o: { ready?: boolean; owner?: { kind: string; name: string; uid: string }; deleting?: boolean } = {}): Pod => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: 'web' }, ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', ...o.owner, controller: true }] } : {}), ...(o.deleting ? { deletionTimestamp: iso(T0) } : {}) },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
});

async function run(objs: unknown[]) {
  const f = newControllerFixture({ clock: new FakeClock(T0) });
  f.build((ctx) => new DisruptionController(ctx));
  for (const o of objs) f.seed(o as never);
  const { result } = await f.reconcile('default/web');
  const got = await f.client.resource<PDBObj>(PodDisruptionBudgets, 'default').get('web');
  return { f, status: got.status!, result };
}

describe('disruption controller', () => {
  test('minAvailable 2 over three Ready pods allows one disruption', async () => {
    const { status } = await run([pdb({ minAvailable: 2 }), pod('a'), pod('b'), pod('c')]);
    assert.deepEqual({ ...status, conditions: undefined }, { observedGeneration: 2, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1, conditions: undefined });
    assert.deepEqual(status.conditions?.map((c) => [c.type, c.status, c.reason]), [['DisruptionAllowed', 'True', 'SufficientPods']]);
  });

  test('maxUnavailable counts the Deployment behind the ReplicaSet; an unready pod leaves no disruption', async () => {
    const dep = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', uid: 'dep' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: {} } };
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-1', namespace: 'default', uid: 'rs', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'dep', controller: true }] }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } } } };
    const owner = { kind: 'ReplicaSet', name: 'web-1', uid: 'rs' };
    const { status } = await run([dep, rs, pdb({ maxUnavailable: 1 }), pod('a', { owner }), pod('b', { owner }), pod('c', { owner, ready: false })]);
    assert.equal(status.expectedPods, 3);
    assert.equal(status.desiredHealthy, 2);
    assert.equal(status.currentHealthy, 2);
    assert.equal(status.disruptionsAllowed, 0);
    assert.equal(status.conditions?.[0]?.reason, 'InsufficientPods');
  });

  test('a pending eviction (disruptedPods) does not count as healthy until its timeout; expired entries are dropped', async () => {
    const { status, result } = await run([pdb({ minAvailable: 1 }, { disruptedPods: { a: iso(T0 - 10_000), b: iso(T0 - 10 * 60_000) } }), pod('a'), pod('b'), pod('c')]);
    assert.deepEqual(status.disruptedPods, { a: iso(T0 - 10_000) });
    assert.equal(status.currentHealthy, 2);
    assert.equal(status.disruptionsAllowed, 1);
    assert.ok(result && result.requeueAfterMs && result.requeueAfterMs > 100_000, 'looks again when the entry expires');
  });

  test('maxUnavailable over pods without a controller is a sync failure with zero disruptions', async () => {
    const { status, f } = await run([pdb({ maxUnavailable: 1 }), pod('a')]);
    assert.equal(status.disruptionsAllowed, 0);
    assert.equal(status.conditions?.[0]?.reason, 'SyncFailed');
    assert.match(f.recorder.events.join('\n'), /CalculateExpectedPodCountFailed/);
  });

  test('a terminating pod is not healthy', async () => {
    const { status } = await run([pdb({ minAvailable: 1 }), pod('a'), pod('b', { deleting: true })]);
    assert.equal(status.currentHealthy, 1);
    assert.equal(status.disruptionsAllowed, 0);
  });
});
