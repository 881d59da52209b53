import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { newTestFramework, snapshotOf } from '../../testing/framework.js';
import { DefaultPreemption, MSG_NO_VICTIMS, pickOneNodeForPreemption, type Candidate } from './default-preemption.js';

const p = (name: string, priority: number, startTime = '2024-01-01T00:00:00Z') => {
  const pod = makePod(name, { priority });
  return { ...pod, status: { ...pod.status, startTime } };
};
const cand = (nodeName: string, victims: ReturnType<typeof p>[], numPdbViolations = 0): Candidate => ({ nodeName, victims, numPdbViolations });

describe('pickOneNodeForPreemption', () => {
  for (const tc of [
    { name: 'fewest PDB violations first', cands: [cand('a', [p('x', 1)], 1), cand('b', [p('y', 5)], 0)], want: 'b' },
    { name: 'lowest highest-priority victim', cands: [cand('a', [p('x', 10)]), cand('b', [p('y', 5), p('z', 5)])], want: 'b' },
    { name: 'then lowest priority sum', cands: [cand('a', [p('x', 5), p('x2', 4)]), cand('b', [p('y', 5), p('y2', 1)])], want: 'b' },
    { name: 'then fewest victims', cands: [cand('a', [p('x', 5), p('x2', 0)]), cand('b', [p('y', 5)])], want: 'b' },
    {
      name: 'then the latest-started highest-priority victims',
      cands: [cand('a', [p('x', 5, '2024-01-01T00:00:00Z')]), cand('b', [p('y', 5, '2024-06-01T00:00:00Z')])], want: 'b',
    },
    { name: 'then the first', cands: [cand('a', [p('x', 5)]), cand('b', [p('y', 5)])], want: 'a' },
  ]) test(tc.name, () => assert.equal(pickOneNodeForPreemption(tc.cands)?.nodeName, tc.want));
});

describe('selectVictimsOnNode', () => {
  const alloc = { cpu: '3', memory: '8Gi', pods: '10' };
  const run = (existing: ReturnType<typeof makePod>[], pod: ReturnType<typeof makePod>) => {
    const fw = newTestFramework();
    const pl = fw.postFilter[0] as DefaultPreemption;
    const snap = snapshotOf([makeNode('n', { allocatable: alloc })], existing);
    return pl.selectVictimsOnNode(new CycleState(snap), pod, snap.get('n')!);
  };
  test('reprieves the most important pods that can stay', () => {
    const r = run([
      makePod('a', { nodeName: 'n', priority: 1, requests: { cpu: '1' } }),
      makePod('b', { nodeName: 'n', priority: 2, requests: { cpu: '1' } }),
      makePod('c', { nodeName: 'n', priority: 3, requests: { cpu: '1' } }),
    ], makePod('vip', { priority: 100, requests: { cpu: '2' } }));
    assert.deepEqual(r.victims.map((v) => v.metadata.name), ['b', 'a']);
    assert.equal(r.status, undefined);
  });
  test('no lower-priority pods: no victims', () => {
    const r = run([makePod('a', { nodeName: 'n', priority: 100, requests: { cpu: '3' } })], makePod('vip', { priority: 100, requests: { cpu: '1' } }));
    assert.deepEqual(r.status, Status.unschedulableAndUnresolvable(MSG_NO_VICTIMS));
  });
  test('removing every lower-priority pod is not enough', () => {
    const r = run([
      makePod('a', { nodeName: 'n', priority: 1, requests: { cpu: '1' } }),
      makePod('high', { nodeName: 'n', priority: 1000, requests: { cpu: '2' } }),
    ], makePod('vip', { priority: 100, requests: { cpu: '2' } }));
    assert.deepEqual(r.status, Status.unschedulable('Insufficient cpu'));
  });
});
