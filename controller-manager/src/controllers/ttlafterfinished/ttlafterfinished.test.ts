import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Jobs, type Job } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { TTLAfterFinishedController, type JobObj } from './ttlafterfinished.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const job = (name: string, ttl: number | undefined, status: Job['status'] = {}): JobObj => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'default' },
  spec: { ...(ttl !== undefined ? { ttlSecondsAfterFinished: ttl } : {}), template: { spec: { containers: [{ name: 'c', image: 'b' }] } } }, status,
} as JobObj);
const complete = { completionTime: '2026-01-01T00:00:00Z', conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] };
const failed = { conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: '2026-01-01T00:00:10Z' }] };

function setup() {
  const f = newControllerFixture();
  f.clock.step(T0 - f.clock.now());
  f.build((ctx) => new TTLAfterFinishedController(ctx));
  return f;
}

test('ttl-after-finished: waits out the TTL of a finished Job, then deletes it in the foreground', async () => {
  const f = setup();
  f.seed(job('done', 100, complete));
  const { result } = await f.reconcile('default/done');
  assert.deepEqual(result, { requeueAfterMs: 100_000 });
  assert.deepEqual(f.actions({ writesOnly: true }), []);
  f.clock.step(100_000);
  await f.reconcile('default/done');
  assert.deepEqual(f.actions({ writesOnly: true }), ['delete jobs']);
  const del = f.client.actions().find((a) => a.verb === 'delete');
  assert.equal(del?.deleteOptions?.propagationPolicy, 'Foreground');
  assert.ok(del?.deleteOptions?.preconditions?.uid, 'uid precondition');
});

test('ttl-after-finished: a Failed Job counts from its condition; a TTL of 0 deletes at once', async () => {
  const f = setup();
  f.clock.step(10_000);
  f.seed(job('bad', 0, failed));
  await f.reconcile('default/bad');
  assert.deepEqual(f.actions({ writesOnly: true }), ['delete jobs']);
});

test('ttl-after-finished: running Jobs and Jobs without a TTL are left alone; a TTL raised meanwhile is honoured', async () => {
  const f = setup();
  f.clock.step(1_000_000);
  f.seed(job('running', 5, {}), job('keep', undefined, complete));
  await f.reconcile('default/running');
  await f.reconcile('default/keep');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
  // The cache says expired, the apiserver has a longer TTL now.
  const g = setup();
  g.clock.step(200_000);
  g.seed(job('raised', 100, complete));
  const live = await g.client.resource<JobObj>(Jobs, 'default').get('raised');
  await g.client.resource<JobObj>(Jobs, 'default').update({ ...live, spec: { ...live.spec!, ttlSecondsAfterFinished: 1000 } });
  g.client.clearActions();
  const { result } = await g.reconcile('default/raised');
  assert.deepEqual(result, { requeueAfterMs: 800_000 });
  assert.deepEqual(g.actions({ writesOnly: true }), []);
});
