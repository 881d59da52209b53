import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeSelectorRequirement, PreferredSchedulingTerm } from '@mk8s/api';
import { CycleState, NodeInfo } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { ERR_REASON_POD, NodeAffinity } from './node-affinity.js';

const required = (...exprs: NodeSelectorRequirement[][]) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: exprs.map((e) => ({ matchExpressions: e })) } },
});
const reject = Status.unschedulableAndUnresolvable(ERR_REASON_POD);
const labels = { zone: 'a', gen: '5', disk: 'ssd' };

describe('NodeAffinity filter', () => {
  for (const tc of [
    { name: 'no constraints', pod: makePod('p'), want: undefined },
    { name: 'nodeSelector matches', pod: makePod('p', { nodeSelector: { zone: 'a' } }), want: undefined },
    { name: 'nodeSelector mismatches', pod: makePod('p', { nodeSelector: { zone: 'b' } }), want: reject },
    { name: 'In matches', pod: makePod('p', { affinity: required([{ key: 'zone', operator: 'In', values: ['a', 'b'] }]) }), want: undefined },
    { name: 'In mismatches', pod: makePod('p', { affinity: required([{ key: 'zone', operator: 'In', values: ['b'] }]) }), want: reject },
    { name: 'NotIn matches an absent label', pod: makePod('p', { affinity: required([{ key: 'gpu', operator: 'NotIn', values: ['x'] }]) }), want: undefined },
    { name: 'NotIn mismatches', pod: makePod('p', { affinity: required([{ key: 'zone', operator: 'NotIn', values: ['a'] }]) }), want: reject },
    { name: 'Exists', pod: makePod('p', { affinity: required([{ key: 'disk', operator: 'Exists' }]) }), want: undefined },
    { name: 'DoesNotExist mismatches', pod: makePod('p', { affinity: required([{ key: 'disk', operator: 'DoesNotExist' }]) }), want: reject },
    { name: 'Gt matches', pod: makePod('p', { affinity: required([{ key: 'gen', operator: 'Gt', values: ['4'] }]) }), want: undefined },
    { name: 'Gt mismatches on equal', pod: makePod('p', { affinity: required([{ key: 'gen', operator: 'Gt', values: ['5'] }]) }), want: reject },
    { name: 'Lt matches', pod: makePod('p', { affinity: required([{ key: 'gen', operator: 'Lt', values: ['6'] }]) }), want: undefined },
    { name: 'Lt on a non-integer label mismatches', pod: makePod('p', { affinity: required([{ key: 'zone', operator: 'Lt', values: ['6'] }]) }), want: reject },
    { name: 'terms are ORed', pod: makePod('p', { affinity: required([{ key: 'zone', operator: 'In', values: ['x'] }], [{ key: 'disk', operator: 'In', values: ['ssd'] }]) }), want: undefined },
    { name: 'expressions are ANDed', pod: makePod('p', { affinity: required([{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'disk', operator: 'In', values: ['hdd'] }]) }), want: reject },
    {
      name: 'matchFields metadata.name', want: undefined,
      pod: makePod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] } } } }),
    },
    {
      name: 'nodeSelector and affinity must both hold', want: reject,
      pod: makePod('p', { nodeSelector: { zone: 'b' }, affinity: required([{ key: 'zone', operator: 'In', values: ['a'] }]) }),
    },
  ]) test(tc.name, () => assert.deepEqual(new NodeAffinity().filter(new CycleState(), tc.pod, new NodeInfo(makeNode('n1', { labels }))), tc.want));
});

test('NodeAffinity scores preferred terms by weight and normalizes to 100', () => {
  const preferred: PreferredSchedulingTerm[] = [
    { weight: 2, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
    { weight: 8, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
  ];
  const pod = makePod('p', { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred } } });
  const nodes = [makeNode('a', { labels: { zone: 'a' } }), makeNode('b', { labels: { disk: 'ssd' } }), makeNode('c', { labels: { zone: 'a', disk: 'ssd' } }), makeNode('d')];
  const pl = new NodeAffinity(); const s = new CycleState();
  assert.equal(pl.preScore(s, pod), undefined);
  const scores = nodes.map((n) => ({ name: n.metadata.name, score: pl.score(s, pod, new NodeInfo(n)) }));
  assert.deepEqual(scores.map((x) => x.score), [2, 8, 10, 0]);
  pl.normalizeScore(s, pod, scores);
  assert.deepEqual(scores.map((x) => x.score), [20, 80, 100, 0]);
  assert.deepEqual(pl.preScore(s, makePod('q')), Status.skip());
});
