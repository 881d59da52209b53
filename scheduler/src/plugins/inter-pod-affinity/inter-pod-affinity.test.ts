import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Affinity, PodAffinityTerm } from '@mk8s/api';
import { CycleState, type Pod } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { snapshotOf } from '../../testing/framework.js';
import {
  ERR_REASON_AFFINITY_RULES_NOT_MATCH as AFF, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
  ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING, InterPodAffinity,
} from './inter-pod-affinity.js';

const HOST = 'kubernetes.io/hostname'; const ZONE = 'topology.kubernetes.io/zone';
const nodes = [makeNode('n1', { labels: { [ZONE]: 'a' } }), makeNode('n2', { labels: { [ZONE]: 'a' } }), makeNode('n3', { labels: { [ZONE]: 'b' } })];
const term = (app: string, topologyKey: string, extra: Partial<PodAffinityTerm> = {}): PodAffinityTerm => ({ labelSelector: { matchLabels: { app } }, topologyKey, ...extra });
const existing = [
  makePod('web-1', { nodeName: 'n1', labels: { app: 'web' } }),
  makePod('db-1', { nodeName: 'n3', labels: { app: 'db' }, affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('cache', HOST)] } } }),
];
const pl = new InterPodAffinity({ namespaceLabels: () => ({}) });

function filterAll(pod: Pod): (Status | undefined)[] {
  const snap = snapshotOf(nodes, existing);
  const s = new CycleState(snap);
  const pre = pl.preFilter(s, pod);
  if (pre?.code === 'Skip') return snap.nodeInfoList.map(() => undefined);
  return snap.nodeInfoList.map((ni) => pl.filter(s, pod, ni));
}
const ok = undefined;
const aff = Status.unschedulableAndUnresolvable(AFF);
const anti = Status.unschedulable(ANTI);
const ex = Status.unschedulable(EXISTING);
const req = (a: PodAffinityTerm[]): Affinity => ({ podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: a } });
const reqAnti = (a: PodAffinityTerm[]): Affinity => ({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: a } });

describe('InterPodAffinity filter', () => {
  for (const tc of [
    { name: 'no affinity anywhere relevant', pod: makePod('p', { labels: { app: 'x' } }), want: [ok, ok, ok] },
    { name: 'affinity by zone', pod: makePod('p', { affinity: req([term('web', ZONE)]) }), want: [ok, ok, aff] },
    { name: 'affinity by hostname', pod: makePod('p', { affinity: req([term('web', HOST)]) }), want: [ok, aff, aff] },
    { name: 'anti-affinity by zone', pod: makePod('p', { affinity: reqAnti([term('web', ZONE)]) }), want: [anti, anti, ok] },
    { name: "existing pod's anti-affinity repels a matching pod", pod: makePod('p', { labels: { app: 'cache' } }), want: [ok, ok, ex] },
    { name: 'first pod of a self-affine group goes anywhere', pod: makePod('p', { labels: { app: 'x' }, affinity: req([term('x', ZONE)]) }), want: [ok, ok, ok] },
    { name: 'affinity to pods that do not exist', pod: makePod('p', { affinity: req([term('nope', ZONE)]) }), want: [aff, aff, aff] },
    { name: 'affinity term in another namespace', pod: makePod('p', { affinity: req([term('web', ZONE, { namespaces: ['other'] })]) }), want: [aff, aff, aff] },
    { name: 'empty namespaceSelector matches all namespaces', pod: makePod('p', { namespace: 'other', affinity: req([term('web', HOST, { namespaceSelector: {} })]) }), want: [ok, aff, aff] },
    { name: 'topology key missing on every node', pod: makePod('p', { affinity: req([term('web', 'rack')]) }), want: [aff, aff, aff] },
  ]) test(tc.name, () => assert.deepEqual(filterAll(tc.pod), tc.want));
});

test('InterPodAffinity scores preferred affinity and anti-affinity by topology', () => {
  const pod = makePod('p', {
    affinity: {
      podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: term('web', ZONE) }] },
      podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, podAffinityTerm: term('db', HOST) }] },
    },
  });
  const snap = snapshotOf(nodes, existing);
  const s = new CycleState(snap);
  assert.equal(pl.preScore(s, pod), undefined);
  const scores = snap.nodeInfoList.map((ni) => ({ name: ni.name, score: pl.score(s, pod, ni) }));
  assert.deepEqual(scores.map((x) => x.score), [10, 10, -5]);
  pl.normalizeScore(s, pod, scores);
  assert.deepEqual(scores.map((x) => x.score), [100, 100, 0]);
});

test("InterPodAffinity scores existing pods' required affinity toward the incoming pod (symmetry)", () => {
  const pods = [makePod('w', { nodeName: 'n2', affinity: req([term('api', HOST)]) })];
  const snap = snapshotOf(nodes, pods);
  const s = new CycleState(snap);
  const pod = makePod('p', { labels: { app: 'api' } });
  assert.equal(pl.preScore(s, pod), undefined);
  assert.deepEqual(snap.nodeInfoList.map((ni) => pl.score(s, pod, ni)), [0, 1, 0]);
  assert.deepEqual(pl.preScore(new CycleState(snapshotOf(nodes)), pod), Status.skip());
});
