import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Pods } from '@mk8s/api';
import { FakeClientset, FakeEventRecorder } from '@mk8s/client/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import { Scheduler } from './scheduler.js';
import { makeNode, makePod } from './testing/wrappers.js';
import type { Node, Pod } from './framework/types.js';

function setup(nodes: Node[], pods: Pod[] = [], o: { priorityClasses?: Record<string, number> } = {}) {
  const clock = new FakeClock();
  const client = new FakeClientset({ objects: [...nodes, ...pods] as never[] });
  const recorder = new FakeEventRecorder();
  let n = 0;
  const s = new Scheduler({
    client, recorder, clock, rand: () => (n++ % 7) / 7,
    ...(o.priorityClasses ? { priorityClassValue: (name: string) => o.priorityClasses![name] } : {}),
  });
  for (const node of nodes) s.onNodeAdd(node);
  for (const p of pods) s.onPodAdd(p);
  const ac = new AbortController();
  /** Runs cycles until the active queue is empty and every write has landed. */
  const drain = async () => {
    while (s.queue.pendingPods().active > 0) await s.scheduleOne(ac.signal);
    await s.waitForPendingWrites();
  };
  const getPod = async (name: string) => (await client.resource(Pods, 'default').get(name)) as unknown as Pod;
  const nodeOf = async (name: string) => (await getPod(name)).spec?.nodeName;
  return { s, client, recorder, clock, drain, nodeOf, getPod };
}

describe('Scheduler', () => {
  test('binds a pod to the node that fits and records Scheduled', async () => {
    const f = setup([makeNode('small', { allocatable: { cpu: '1', memory: '1Gi', pods: '10' } }), makeNode('big')], [makePod('web', { requests: { cpu: '2' } })]);
    await f.drain();
    assert.equal(await f.nodeOf('web'), 'big');
    assert.deepEqual(f.client.actionStrings({ writesOnly: true }), ['create pods/binding']);
    assert.deepEqual(f.recorder.events, ['Normal Scheduled Successfully assigned default/web to big']);
  });

  test('counts assumed pods before their bind lands', async () => {
    const alloc = { cpu: '4', memory: '8Gi', pods: '10' };
    const f = setup([makeNode('a', { allocatable: alloc }), makeNode('b', { allocatable: alloc })],
      [makePod('p1', { requests: { cpu: '3' } }), makePod('p2', { requests: { cpu: '3' } })]);
    await f.s.scheduleOne(new AbortController().signal);
    await f.s.scheduleOne(new AbortController().signal); // the first bind has not resolved yet
    await f.s.waitForPendingWrites();
    assert.notEqual(await f.nodeOf('p1'), await f.nodeOf('p2'));
  });

  test('spreads identical pods evenly over three nodes', async () => {
    const pods = Array.from({ length: 9 }, (_, i) => makePod(`p${i}`, { requests: { cpu: '100m', memory: '100Mi' } }));
    const f = setup([makeNode('a'), makeNode('b'), makeNode('c')], pods);
    await f.drain();
    const counts: Record<string, number> = {};
    for (const p of pods) { const n = (await f.nodeOf(p.metadata.name))!; counts[n] = (counts[n] ?? 0) + 1; }
    assert.deepEqual(counts, { a: 3, b: 3, c: 3 });
  });

  test('explains a pod that fits nowhere and places it once a fitting node appears', async () => {
    const alloc = { cpu: '1', memory: '8Gi', pods: '10' };
    const f = setup([
      makeNode('n1', { allocatable: alloc, taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] }),
      makeNode('n2', { allocatable: alloc }), makeNode('n3', { allocatable: alloc }),
    ], [makePod('big', { requests: { cpu: '2' } })]);
    await f.drain();
    const msg = '0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient cpu. '
      + 'preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.';
    assert.deepEqual(f.recorder.events, [`Warning FailedScheduling ${msg}`]);
    const pod = await f.getPod('big');
    const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['False', 'Unschedulable', msg]);
    assert.equal(f.s.queue.whereIs(pod), 'unschedulable');

    const n4 = makeNode('n4');
    f.s.onNodeAdd(n4);
    f.clock.step(10_000); // past the backoff
    f.s.queue.flushBackoffQCompleted();
    await f.drain();
    assert.equal(await f.nodeOf('big'), 'n4');
  });

  test('a repeated failure does not rewrite an unchanged condition', async () => {
    const f = setup([makeNode('n', { allocatable: { cpu: '1', memory: '1Gi', pods: '10' } })], [makePod('big', { requests: { cpu: '2' } })]);
    await f.drain();
    const latest = await f.getPod('big');
    f.s.onPodUpdate(makePod('big', { requests: { cpu: '2' } }), latest);
    f.s.queue.moveAllToActiveOrBackoffQueue('ForceActivate');
    f.clock.step(60_000);
    f.s.queue.flushBackoffQCompleted();
    f.client.clearActions();
    await f.drain();
    assert.deepEqual(f.client.actionStrings({ writesOnly: true }), []);
  });

  test('reports no nodes', async () => {
    const f = setup([], [makePod('p')]);
    await f.drain();
    assert.deepEqual(f.recorder.events, ['Warning FailedScheduling no nodes available to schedule pods']);
  });

  test('forgets the assumption and backs off when the bind fails', async () => {
    const f = setup([makeNode('a')], [makePod('p', { requests: { cpu: '1' } })]);
    f.client.prependReactor('create', 'pods/binding', () => ({ handled: true, error: new Error('connection reset') }));
    await f.drain();
    assert.equal(f.s.cache.getNodeInfo('a')?.pods.length, 0);
    assert.equal(f.s.queue.whereIs(makePod('p')), 'backoff');
    assert.match(f.recorder.events[0] ?? '', /^Warning FailedScheduling connection reset/);
  });

  test('preempts the lowest-priority pod and nominates the node', async () => {
    const alloc = { cpu: '2', memory: '8Gi', pods: '10' };
    const low = makePod('low', { nodeName: 'a', priority: 1, requests: { cpu: '1500m' } });
    const lower = makePod('lower', { nodeName: 'b', priority: 0, requests: { cpu: '1500m' } });
    const mid = makePod('mid', { nodeName: 'b', priority: 500, requests: { cpu: '100m' } });
    const f = setup([makeNode('a', { allocatable: alloc }), makeNode('b', { allocatable: alloc })],
      [low, lower, mid, makePod('vip', { priorityClassName: 'high', requests: { cpu: '1' } })], { priorityClasses: { high: 1000 } });
    await f.drain();
    // b's victims would be {lower} with highest priority 0 < a's {low} with 1: b wins.
    await assert.rejects(f.client.resource(Pods, 'default').get('lower'));
    assert.ok(await f.client.resource(Pods, 'default').get('low'));
    const vip = await f.getPod('vip');
    assert.equal(vip.status?.nominatedNodeName, 'b');
    assert.ok(f.recorder.events.includes('Normal Preempted Preempted by pod uid-default-vip on node b'));
    assert.deepEqual(f.s.queue.nominatedPodsForNode('b').map((p) => p.metadata.name), ['vip']);

    f.s.onPodDelete(lower);
    f.clock.step(10_000);
    f.s.queue.flushBackoffQCompleted();
    await f.drain();
    assert.equal(await f.nodeOf('vip'), 'b');
  });

  test('a pod with preemptionPolicy Never does not preempt', async () => {
    const f = setup([makeNode('a', { allocatable: { cpu: '1', memory: '1Gi', pods: '10' } })],
      [makePod('low', { nodeName: 'a', requests: { cpu: '1' } }), makePod('p', { priority: 10, preemptionPolicy: 'Never', requests: { cpu: '1' } })]);
    await f.drain();
    assert.deepEqual(f.recorder.events, ['Warning FailedScheduling 0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.']);
  });

  test('ignores pods for another scheduler', async () => {
    const f = setup([makeNode('a')], [makePod('p', { schedulerName: 'other' })]);
    await f.drain();
    assert.deepEqual(f.client.actionStrings({ writesOnly: true }), []);
  });
});

test('a pod deleted during its failed attempt is neither reported nor requeued', async () => {
  const clock = new FakeClock();
  const client = new FakeClientset();
  const recorder = new FakeEventRecorder();
  const s = new Scheduler({ client, recorder, clock });
  const p = makePod('p', { requests: { cpu: '100' } });
  s.onNodeAdd(makeNode('a'));
  s.onPodAdd(p);
  const ac = new AbortController();
  const cycle = s.scheduleOne(ac.signal);
  s.onPodDelete(p);
  await cycle;
  await s.waitForPendingWrites();
  assert.equal(s.queue.whereIs(p), undefined);
  assert.deepEqual(recorder.events, []);
});
