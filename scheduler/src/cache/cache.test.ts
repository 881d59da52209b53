import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@mk8s/component-base/testing';
import { makeNode, makePod } from '../testing/wrappers.js';
import { SchedulerCache } from './cache.js';

describe('SchedulerCache', () => {
  test('an assumed pod counts on its node until forgotten', () => {
    const c = new SchedulerCache({ clock: new FakeClock() });
    c.addNode(makeNode('a'));
    const p = makePod('p', { nodeName: 'a', requests: { cpu: '1' } });
    c.assumePod(p);
    assert.equal(c.getNodeInfo('a')?.requested.milliCpu, 1000);
    assert.equal(c.isAssumedPod(p), true);
    c.forgetPod(p);
    assert.equal(c.getNodeInfo('a')?.requested.milliCpu, 0);
  });

  test('the informer add confirms an assumption without double counting', () => {
    const c = new SchedulerCache({ clock: new FakeClock() });
    c.addNode(makeNode('a'));
    const p = makePod('p', { nodeName: 'a', requests: { cpu: '1' } });
    c.assumePod(p);
    c.addPod(p);
    assert.equal(c.isAssumedPod(p), false);
    assert.equal(c.getNodeInfo('a')?.pods.length, 1);
    c.forgetPod(p); // confirmed pods are not forgotten
    assert.equal(c.getNodeInfo('a')?.pods.length, 1);
    c.removePod(p);
    assert.equal(c.getNodeInfo('a')?.pods.length, 0);
  });

  test('assumed pods expire after the TTL once bound, if never confirmed', () => {
    const clock = new FakeClock();
    const c = new SchedulerCache({ clock, assumedPodTtlMs: 30_000 });
    c.addNode(makeNode('a'));
    const p = makePod('p', { nodeName: 'a' });
    c.assumePod(p); c.finishBinding(p);
    clock.step(30_001);
    c.cleanupExpiredAssumedPods();
    assert.equal(c.podCount(), 0);
  });

  test('the snapshot updates only changed nodes, never the NodeInfos a cycle already holds', () => {
    const c = new SchedulerCache({ clock: new FakeClock() });
    c.addNode(makeNode('a')); c.addNode(makeNode('b'));
    const s1 = c.updateSnapshot();
    const a1 = s1.get('a')!; const b1 = s1.get('b')!;
    c.addPod(makePod('p', { nodeName: 'a' }));
    const s2 = c.updateSnapshot();
    assert.equal(s2.get('b'), b1);
    assert.notEqual(s2.get('a'), a1);
    assert.equal(s2.get('a')?.pods.length, 1);
    assert.equal(a1.pods.length, 0);
    c.removeNode(makeNode('b'));
    assert.deepEqual(c.updateSnapshot().nodeInfoList.map((n) => n.name), ['a']);
  });

  test('affinity lists follow pods with affinity', () => {
    const c = new SchedulerCache({ clock: new FakeClock() });
    c.addNode(makeNode('a')); c.addNode(makeNode('b'));
    assert.equal(c.updateSnapshot().havePodsWithRequiredAntiAffinityList.length, 0);
    const anti = makePod('p', { nodeName: 'b', affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {}, topologyKey: 'x' }] } } });
    c.addPod(anti);
    assert.deepEqual(c.updateSnapshot().havePodsWithRequiredAntiAffinityList.map((n) => n.name), ['b']);
    c.removePod(anti);
    assert.equal(c.updateSnapshot().havePodsWithAffinityList.length, 0);
  });

  test('pods on a deleted node stay until deleted; the node leaves the snapshot', () => {
    const c = new SchedulerCache({ clock: new FakeClock() });
    const n = makeNode('a');
    c.addNode(n);
    c.addPod(makePod('p', { nodeName: 'a' }));
    c.removeNode(n);
    assert.equal(c.updateSnapshot().numNodes, 0);
    assert.equal(c.podCount(), 1);
  });
});
