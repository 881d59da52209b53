import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState, NodeInfo, PodInfo } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { NodeResourcesFit } from './fit.js';
import { NodeResourcesBalancedAllocation, balancedResourceScore } from './balanced-allocation.js';

const node = (alloc: Record<string, string>, ...pods: Record<string, string>[]) =>
  new NodeInfo(makeNode('n', { allocatable: alloc }), ...pods.map((r, i) => new PodInfo(makePod(`e${i}`, { nodeName: 'n', requests: r }))));

describe('NodeResourcesFit filter', () => {
  for (const tc of [
    { name: 'no requests fits', pod: {}, node: node({ cpu: '1', memory: '1Gi', pods: '10' }, { cpu: '1' }), want: undefined },
    { name: 'fits exactly', pod: { cpu: '500m' }, node: node({ cpu: '1', memory: '1Gi', pods: '10' }, { cpu: '500m' }), want: undefined },
    { name: 'insufficient cpu counting existing pods', pod: { cpu: '600m' }, node: node({ cpu: '1', memory: '1Gi', pods: '10' }, { cpu: '500m' }), want: Status.unschedulable('Insufficient cpu') },
    { name: 'insufficient cpu and memory', pod: { cpu: '2', memory: '2Gi' }, node: node({ cpu: '1', memory: '1Gi', pods: '10' }), want: Status.unschedulable('Insufficient cpu', 'Insufficient memory') },
    { name: 'too many pods', pod: {}, node: node({ cpu: '1', memory: '1Gi', pods: '1' }, {}), want: Status.unschedulable('Too many pods') },
    { name: 'extended resource missing', pod: { 'example.com/gpu': '1' }, node: node({ cpu: '1', memory: '1Gi', pods: '10' }), want: Status.unschedulable('Insufficient example.com/gpu') },
    { name: 'extended resource available', pod: { 'example.com/gpu': '1' }, node: node({ cpu: '1', memory: '1Gi', pods: '10', 'example.com/gpu': '2' }), want: undefined },
  ]) test(tc.name, () => {
    const pod = makePod('p', { requests: tc.pod });
    const pl = new NodeResourcesFit(); const s = new CycleState();
    pl.preFilter(s, pod);
    assert.deepEqual(pl.filter(s, pod, tc.node), tc.want);
  });
});

describe('NodeResourcesFit LeastAllocated score', () => {
  for (const tc of [
    // cpu: (4000-1000)*100/4000 = 75; memory: (8Gi-2Gi)*100/8Gi = 75
    { name: 'quarter used', pod: { cpu: '1', memory: '2Gi' }, existing: [], want: 75 },
    // no requests: defaults 100m and 200Mi count: cpu 97, memory 97 → 97
    { name: 'best-effort pod counts non-zero defaults', pod: {}, existing: [], want: 97 },
    // cpu: (4000-3000)*100/4000 = 25; memory: (8192-4096)*100/8192 = 50 → 37
    { name: 'existing pods count', pod: { cpu: '1', memory: '2Gi' }, existing: [{ cpu: '2', memory: '2Gi' }], want: 37 },
  ]) test(tc.name, () => {
    const pod = makePod('p', { requests: tc.pod });
    const pl = new NodeResourcesFit(); const s = new CycleState();
    pl.preFilter(s, pod);
    assert.equal(pl.score(s, pod, node({ cpu: '4', memory: '8Gi', pods: '110' }, ...tc.existing)), tc.want);
  });
});

describe('NodeResourcesBalancedAllocation', () => {
  for (const tc of [
    { name: 'equal fractions score 100', req: [2000, 4], alloc: [4000, 8], want: 100 },
    { name: 'all cpu, no memory', req: [4000, 0], alloc: [4000, 8], want: 50 },
    { name: 'fraction capped at 1', req: [8000, 0], alloc: [4000, 8], want: 50 },
    { name: 'three resources use the standard deviation', req: [1, 2, 3], alloc: [4, 4, 4], want: 79 },
  ]) test(tc.name, () => assert.equal(balancedResourceScore(tc.req, tc.alloc), tc.want));

  test('best-effort pod is skipped', () => {
    assert.deepEqual(new NodeResourcesBalancedAllocation().preScore(new CycleState(), makePod('p')), Status.skip());
  });
  test('scores a node after adding the pod', () => {
    const pod = makePod('p', { requests: { cpu: '1', memory: '1Gi' } });
    const pl = new NodeResourcesBalancedAllocation(); const s = new CycleState();
    pl.preScore(s, pod);
    // cpu 1/4 = .25, memory 1Gi/8Gi = .125 → std .0625 → 93
    assert.equal(pl.score(s, pod, node({ cpu: '4', memory: '8Gi', pods: '110' })), 93);
  });
});
