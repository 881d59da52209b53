import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Taint, Toleration } from '@mk8s/api';
import { CycleState, NodeInfo } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { TaintToleration } from './taint-toleration.js';

const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const dedicated: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const soft: Taint = { key: 'soft', value: 'x', effect: 'PreferNoSchedule' };

describe('TaintToleration filter', () => {
  for (const tc of [
    { name: 'untainted node admits', taints: [], tol: [], want: undefined },
    { name: 'NoExecute taint with empty value', taints: [unreachable], tol: [], want: Status.unschedulableAndUnresolvable('node(s) had untolerated taint {node.kubernetes.io/unreachable: }') },
    { name: 'NoSchedule taint with value', taints: [dedicated], tol: [], want: Status.unschedulableAndUnresolvable('node(s) had untolerated taint {dedicated: gpu}') },
    { name: 'Equal toleration', taints: [dedicated], tol: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }], want: undefined },
    { name: 'Equal toleration with wrong value', taints: [dedicated], tol: [{ key: 'dedicated', value: 'cpu' }], want: Status.unschedulableAndUnresolvable('node(s) had untolerated taint {dedicated: gpu}') },
    { name: 'Exists toleration without key tolerates all', taints: [dedicated, unreachable], tol: [{ operator: 'Exists' }], want: undefined },
    { name: 'toleration for another effect', taints: [dedicated], tol: [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }], want: Status.unschedulableAndUnresolvable('node(s) had untolerated taint {dedicated: gpu}') },
    { name: 'PreferNoSchedule does not filter', taints: [soft], tol: [], want: undefined },
  ] as { name: string; taints: Taint[]; tol: Toleration[]; want: Status | undefined }[]) test(tc.name, () => {
    const ni = new NodeInfo(makeNode('n', { taints: tc.taints }));
    assert.deepEqual(new TaintToleration().filter(new CycleState(), makePod('p', { tolerations: tc.tol }), ni), tc.want);
  });
});

test('TaintToleration prefers nodes with fewer untolerated PreferNoSchedule taints', () => {
  const nodes = [
    makeNode('a'),
    makeNode('b', { taints: [soft] }),
    makeNode('c', { taints: [soft, { key: 'soft2', effect: 'PreferNoSchedule' }] }),
    makeNode('d', { taints: [{ key: 'tolerated', effect: 'PreferNoSchedule' }] }),
  ];
  const pod = makePod('p', { tolerations: [{ key: 'tolerated', operator: 'Exists', effect: 'PreferNoSchedule' }] });
  const pl = new TaintToleration(); const s = new CycleState();
  pl.preScore(s, pod);
  const scores = nodes.map((n) => ({ name: n.metadata.name, score: pl.score(s, pod, new NodeInfo(n)) }));
  assert.deepEqual(scores.map((x) => x.score), [0, 1, 2, 0]);
  pl.normalizeScore(s, pod, scores);
  assert.deepEqual(scores.map((x) => x.score), [100, 50, 0, 100]);
});
