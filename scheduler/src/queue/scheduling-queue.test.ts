import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@mk8s/component-base/testing';
import { PrioritySort } from '../plugins/priority-sort/priority-sort.js';
import { makePod } from '../testing/wrappers.js';
import { SchedulingQueue } from './scheduling-queue.js';

function newQueue() {
  const clock = new FakeClock();
  const sort = new PrioritySort();
  return { clock, q: new SchedulingQueue({ clock, less: (a, b) => sort.less(a, b) }) };
}

describe('SchedulingQueue', () => {
  test('pops by priority, then by arrival', async () => {
    const { q, clock } = newQueue();
    q.add(makePod('low', { priority: 1 })); clock.step(1);
    q.add(makePod('high', { priority: 100 })); clock.step(1);
    q.add(makePod('low2', { priority: 1 }));
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await q.pop())!.pod.metadata.name);
    assert.deepEqual(order, ['high', 'low', 'low2']);
  });

  test('pop waits for an add', async () => {
    const { q } = newQueue();
    const p = q.pop();
    q.add(makePod('a'));
    assert.equal((await p)?.pod.metadata.name, 'a');
  });

  test('backoff doubles from 1s and caps at 10s', () => {
    const { q } = newQueue();
    const info = (attempts: number) => ({ pod: makePod('p'), timestamp: 0, attempts, initialAttemptTimestamp: 0, unschedulablePlugins: new Set<string>() });
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((a) => q.backoffDurationMs(info(a))), [1000, 2000, 4000, 8000, 10000, 10000]);
  });

  test('an unschedulable pod waits for an event its rejecting plugin cares about', async () => {
    const { q, clock } = newQueue();
    q.add(makePod('p'));
    const qpi = (await q.pop())!;
    qpi.unschedulablePlugins = new Set(['NodeResourcesFit']);
    q.addUnschedulableIfNotPresent(qpi, q.schedulingCycle());
    assert.equal(q.whereIs(qpi.pod), 'unschedulable');
    q.moveAllToActiveOrBackoffQueue('AssignedPodAdd'); // affinity-only event: no help for resources
    assert.equal(q.whereIs(qpi.pod), 'unschedulable');
    q.moveAllToActiveOrBackoffQueue('AssignedPodDelete');
    assert.equal(q.whereIs(qpi.pod), 'backoff');
    clock.step(1000);
    q.flushBackoffQCompleted();
    assert.equal(q.whereIs(qpi.pod), 'active');
  });

  test('a move request during the cycle sends the failed pod to backoff, not unschedulable', async () => {
    const { q } = newQueue();
    q.add(makePod('p'));
    const qpi = (await q.pop())!;
    q.moveAllToActiveOrBackoffQueue('NodeAdd');
    qpi.unschedulablePlugins = new Set(['NodeAffinity']);
    q.addUnschedulableIfNotPresent(qpi, q.schedulingCycle());
    assert.equal(q.whereIs(qpi.pod), 'backoff');
  });

  test('a pod deleted while in flight is not requeued', async () => {
    const { q } = newQueue();
    q.add(makePod('p'));
    const qpi = (await q.pop())!;
    q.delete(qpi.pod);
    q.addUnschedulableIfNotPresent(qpi, q.schedulingCycle());
    assert.equal(q.whereIs(qpi.pod), undefined);
  });

  test('unschedulable pods are retried after 5 minutes without events', async () => {
    const { q, clock } = newQueue();
    q.add(makePod('p'));
    const qpi = (await q.pop())!;
    qpi.unschedulablePlugins = new Set(['NodeAffinity']);
    q.addUnschedulableIfNotPresent(qpi, q.schedulingCycle());
    clock.step(300_001);
    q.flushUnschedulablePodsLeftover();
    assert.equal(q.whereIs(qpi.pod), 'active');
  });

  test('gated pods wait until their gates are removed', () => {
    const { q } = newQueue();
    const gated = makePod('p'); gated.spec!.schedulingGates = [{ name: 'x' }];
    q.add(gated);
    assert.equal(q.whereIs(gated), 'gated');
    q.update(makePod('p'));
    assert.equal(q.whereIs(gated), 'active');
  });

  test('tracks nominated pods by node', () => {
    const { q } = newQueue();
    const p = makePod('p');
    q.addNominatedPod(p, 'n1');
    assert.deepEqual(q.nominatedPodsForNode('n1'), [p]);
    q.addNominatedPod(p, 'n2');
    assert.deepEqual(q.nominatedPodsForNode('n1'), []);
    q.delete(p);
    assert.deepEqual(q.nominatedPodsForNode('n2'), []);
  });
});
