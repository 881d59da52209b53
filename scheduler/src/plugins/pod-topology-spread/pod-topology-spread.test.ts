import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplicaSet, TopologySpreadConstraint } from '@mk8s/api';
import { CycleState, type Pod } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { snapshotOf } from '../../testing/framework.js';
import { ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, PodTopologySpread } from './pod-topology-spread.js';

const HOST = 'kubernetes.io/hostname'; const ZONE = 'topology.kubernetes.io/zone';
const nodes = [makeNode('n1', { labels: { [ZONE]: 'a' } }), makeNode('n2', { labels: { [ZONE]: 'a' } }), makeNode('n3', { labels: { [ZONE]: 'b' } }), makeNode('n4')];
const foo = { app: 'foo' };
const existing = [
  makePod('f1', { nodeName: 'n1', labels: foo }), makePod('f2', { nodeName: 'n1', labels: foo }), makePod('f3', { nodeName: 'n3', labels: foo }),
  makePod('other-ns', { nodeName: 'n2', labels: foo, namespace: 'other' }),
];
const c = (topologyKey: string, extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint =>
  ({ maxSkew: 1, topologyKey, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: foo }, ...extra });
const noReplicaSets = { services: () => [], replicaSets: () => [] };

function filterAll(pod: Pod): (Status | undefined)[] {
  const pl = new PodTopologySpread(noReplicaSets);
  const snap = snapshotOf(nodes, existing);
  const s = new CycleState(snap);
  if (pl.preFilter(s, pod)?.code === 'Skip') return snap.nodeInfoList.map(() => undefined);
  return snap.nodeInfoList.map((ni) => pl.filter(s, pod, ni));
}
const ok = undefined;
const skew = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
const label = Status.unschedulableAndUnresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);

describe('PodTopologySpread filter', () => {
  for (const tc of [
    { name: 'no constraints', pod: makePod('p', { labels: foo }), want: [ok, ok, ok, ok] },
    { name: 'zone skew: only the emptier zone', pod: makePod('p', { labels: foo, topologySpreadConstraints: [c(ZONE)] }), want: [skew, skew, ok, label] },
    { name: 'hostname skew', pod: makePod('p', { labels: foo, topologySpreadConstraints: [c(HOST)] }), want: [skew, ok, skew, ok] },
    { name: 'maxSkew 2 relaxes', pod: makePod('p', { labels: foo, topologySpreadConstraints: [c(HOST, { maxSkew: 2 })] }), want: [skew, ok, ok, ok] },
    { name: 'pod not matching its own selector adds no skew', pod: makePod('p', { topologySpreadConstraints: [c(ZONE)] }), want: [ok, ok, ok, label] },
    { name: 'minDomains above the domain count makes the minimum 0', pod: makePod('p', { labels: foo, topologySpreadConstraints: [c(ZONE, { minDomains: 3 })] }), want: [skew, skew, skew, label] },
    { name: 'nodeAffinityPolicy Honor counts only eligible nodes', pod: makePod('p', { labels: foo, nodeSelector: { [ZONE]: 'b' }, topologySpreadConstraints: [c(ZONE)] }), want: [ok, ok, ok, label] },
    { name: 'ScheduleAnyway never filters', pod: makePod('p', { labels: foo, topologySpreadConstraints: [c(ZONE, { whenUnsatisfiable: 'ScheduleAnyway' })] }), want: [ok, ok, ok, ok] },
  ]) test(tc.name, () => assert.deepEqual(filterAll(tc.pod), tc.want));
});

function scoreAll(pl: PodTopologySpread, pod: Pod, names = ['n1', 'n2', 'n3']): { status: Status | undefined; scores: number[] } {
  const snap = snapshotOf(nodes, existing);
  const s = new CycleState(snap);
  const filtered = snap.nodeInfoList.filter((n) => names.includes(n.name));
  const status = pl.preScore(s, pod, filtered);
  if (status) return { status, scores: [] };
  const scores = filtered.map((ni) => ({ name: ni.name, score: pl.score(s, pod, ni) }));
  pl.normalizeScore(s, pod, scores);
  return { status, scores: scores.map((x) => x.score) };
}

test('PodTopologySpread scores ScheduleAnyway constraints: fewer matching pods is better', () => {
  const pod = makePod('p', { labels: foo, topologySpreadConstraints: [c(HOST, { whenUnsatisfiable: 'ScheduleAnyway' })] });
  // raw: n1 2*ln5 = 3.2 → 3, n2 0, n3 ln5 → 2; normalized 100*(3+0-s)/3
  assert.deepEqual(scoreAll(new PodTopologySpread(noReplicaSets), pod), { status: undefined, scores: [0, 100, 33] });
});

test('PodTopologySpread applies system default constraints to pods of a ReplicaSet', () => {
  const rs: ReplicaSet = { metadata: { name: 'rs', namespace: 'default' }, spec: { selector: { matchLabels: foo }, template: {} } };
  const pl = new PodTopologySpread({ services: () => [], replicaSets: () => [rs] });
  const owned = makePod('p', { labels: foo, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }] });
  const r = scoreAll(pl, owned);
  assert.equal(r.status, undefined);
  assert.equal(Math.max(...r.scores), r.scores[1]);
  assert.deepEqual(scoreAll(pl, makePod('q', { labels: foo })).status, Status.skip());
});
