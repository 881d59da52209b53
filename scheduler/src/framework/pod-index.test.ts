// The snapshot's pod indexes against the brute-force scans they replace: table tests for the
// index mechanics, and a property test that drives the cache through random node and pod changes
// and checks, after every update, that InterPodAffinity's and PodTopologySpread's PreFilter and
// PreScore state built from the indexes equals a scan of every pod on every node.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LabelSelector, PodAffinityTerm, TopologySpreadConstraint, WeightedPodAffinityTerm } from '@mk8s/api';
import { FakeClock } from '@mk8s/component-base/testing';
import { SchedulerCache } from '../cache/cache.js';
import { InterPodAffinity } from '../plugins/inter-pod-affinity/inter-pod-affinity.js';
import { PodTopologySpread, countPodsMatchSelector } from '../plugins/pod-topology-spread/pod-topology-spread.js';
import { makeNode, makePod } from '../testing/wrappers.js';
import { CycleState, NodeInfo, PodInfo, Snapshot, termMatches, type AffinityTerm, type NamespaceLabels, type Pod } from './types.js';

const HOST = 'kubernetes.io/hostname'; const ZONE = 'topology.kubernetes.io/zone';
const nsLabels: NamespaceLabels = (ns) => ({ team: ns === 'ns1' ? 'red' : 'blue' });
const sorted = (m: ReadonlyMap<string, number> | undefined) => [...(m ?? new Map<string, number>())].filter(([, n]) => n !== 0).sort(([a], [b]) => (a < b ? -1 : 1));
const sortedNested = (m: ReadonlyMap<string, ReadonlyMap<string, number>>) =>
  [...m].map(([k, v]) => [k, sorted(v)] as const).filter(([, v]) => v.length).sort(([a], [b]) => (a < b ? -1 : 1));

describe('Snapshot pod indexes', () => {
  const sel = { key: 'app=web', matches: (pi: PodInfo) => pi.pod.metadata.labels?.['app'] === 'web' };
  const web = (name: string, node: string) => makePod(name, { nodeName: node, labels: { app: 'web' } });

  test('match counts follow pods assumed, confirmed, forgotten and removed', () => {
    const c = new SchedulerCache({ clock: new FakeClock() });
    c.addNode(makeNode('a', { labels: { [ZONE]: 'z1' } })); c.addNode(makeNode('b', { labels: { [ZONE]: 'z1' } }));
    c.addPod(web('w1', 'a'));
    let snap = c.updateSnapshot();
    const mc = snap.podCounts(sel);
    assert.deepEqual(sorted(snap.pairCounts(mc, ZONE)), [['z1', 1]]);
    const p = web('w2', 'b');
    c.assumePod(p);
    snap = c.updateSnapshot();
    assert.equal(snap.podCounts(sel), mc, 'the same index is kept across updates');
    assert.deepEqual([mc.countOn('a'), mc.countOn('b')], [1, 1]);
    c.addPod({ ...p }); // the informer confirms with another object
    c.forgetPod(p); // no-op once confirmed
    c.removePod(web('w1', 'a'));
    snap = c.updateSnapshot();
    assert.deepEqual([mc.countOn('a'), mc.countOn('b')], [0, 1]);
    assert.deepEqual(sorted(snap.pairCounts(mc, ZONE)), [['z1', 1]]);
  });

  test('relabeling a node moves its counts and domains to the new pair', () => {
    const c = new SchedulerCache({ clock: new FakeClock() });
    c.addNode(makeNode('a', { labels: { [ZONE]: 'z1' } }));
    c.addPod(web('w1', 'a')); c.addPod(web('w2', 'a'));
    let snap = c.updateSnapshot();
    const mc = snap.podCounts(sel);
    assert.deepEqual(sorted(snap.pairCounts(mc, ZONE)), [['z1', 2]]);
    assert.deepEqual(sorted(snap.domains(ZONE)), [['z1', 1]]);
    c.updateNode(makeNode('a', { labels: { [ZONE]: 'z2' } }));
    snap = c.updateSnapshot();
    assert.deepEqual(sorted(snap.pairCounts(mc, ZONE)), [['z2', 2]]);
    assert.deepEqual(sorted(snap.domains(ZONE)), [['z2', 1]]);
    c.removeNode(makeNode('a'));
    snap = c.updateSnapshot();
    assert.deepEqual(sorted(snap.pairCounts(mc, ZONE)), []);
    assert.deepEqual(sorted(snap.domains(ZONE)), []);
  });

  test('existing terms are grouped once per distinct term', () => {
    const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: HOST }] } };
    const c = new SchedulerCache({ clock: new FakeClock() });
    for (const n of ['a', 'b', 'c']) c.addNode(makeNode(n));
    for (const n of ['a', 'b']) c.addPod(makePod(`w-${n}`, { nodeName: n, labels: { app: 'web' }, affinity: anti }));
    const snap = c.updateSnapshot();
    const groups = [...snap.existingTerms('requiredAntiAffinity').groups.values()];
    assert.equal(groups.length, 1);
    assert.equal(groups[0]!.pods, 2);
    assert.deepEqual(sorted(groups[0]!.pairs), [['a', 1], ['b', 1]]);
  });

  test('unused match indexes are dropped after a while', () => {
    const c = new SchedulerCache({ clock: new FakeClock() });
    c.addNode(makeNode('a'));
    const mc = c.updateSnapshot().podCounts(sel);
    for (let i = 0; i < 300; i++) c.updateSnapshot();
    assert.notEqual(c.updateSnapshot().podCounts(sel), mc);
  });
});

// ---------------------------------------------------------------- brute force (the scans replaced)

type TopologyCounts = Map<string, Map<string, number>>;
function bump(m: TopologyCounts, key: string, value: string | undefined, by: number): void {
  if (value === undefined) return;
  let byValue = m.get(key);
  if (!byValue) { byValue = new Map(); m.set(key, byValue); }
  byValue.set(value, (byValue.get(value) ?? 0) + by);
}
const allTerms = (terms: AffinityTerm[], pod: Pod) => terms.length > 0 && terms.every((t) => termMatches(t, pod, nsLabels));

/** InterPodAffinity PreFilter counts by scanning every pod on every node. */
function bruteAffinity(snap: Snapshot, pod: Pod) {
  const pi = new PodInfo(pod);
  const existingAnti: TopologyCounts = new Map(); const affinity: TopologyCounts = new Map(); const anti: TopologyCounts = new Map();
  for (const ni of snap.nodeInfoList) {
    const labels = ni.node!.metadata.labels ?? {};
    for (const ep of ni.pods) {
      for (const t of ep.requiredAntiAffinityTerms) if (termMatches(t, pod, nsLabels)) bump(existingAnti, t.topologyKey, labels[t.topologyKey], 1);
      if (allTerms(pi.requiredAffinityTerms, ep.pod)) for (const t of pi.requiredAffinityTerms) bump(affinity, t.topologyKey, labels[t.topologyKey], 1);
      for (const t of pi.requiredAntiAffinityTerms) if (termMatches(t, ep.pod, nsLabels)) bump(anti, t.topologyKey, labels[t.topologyKey], 1);
    }
  }
  return { existingAnti, affinity, anti };
}

/** InterPodAffinity PreScore topology scores by scanning every pod. */
function bruteAffinityScore(snap: Snapshot, pod: Pod, hardWeight: number): TopologyCounts {
  const pi = new PodInfo(pod);
  const score: TopologyCounts = new Map();
  for (const ni of snap.nodeInfoList) {
    const labels = ni.node!.metadata.labels ?? {};
    for (const ep of ni.pods) {
      for (const t of pi.preferredAffinityTerms) if (termMatches(t, ep.pod, nsLabels)) bump(score, t.topologyKey, labels[t.topologyKey], t.weight);
      for (const t of pi.preferredAntiAffinityTerms) if (termMatches(t, ep.pod, nsLabels)) bump(score, t.topologyKey, labels[t.topologyKey], -t.weight);
      for (const t of ep.requiredAffinityTerms) if (termMatches(t, pod, nsLabels)) bump(score, t.topologyKey, labels[t.topologyKey], hardWeight);
      for (const t of ep.preferredAffinityTerms) if (termMatches(t, pod, nsLabels)) bump(score, t.topologyKey, labels[t.topologyKey], t.weight);
      for (const t of ep.preferredAntiAffinityTerms) if (termMatches(t, pod, nsLabels)) bump(score, t.topologyKey, labels[t.topologyKey], -t.weight);
    }
  }
  return score;
}

/** PodTopologySpread PreFilter domain counts by scanning every node's pods (no inclusion policies in play). */
function bruteSpread(snap: Snapshot, pod: Pod, constraints: { topologyKey: string; selector: { matches(l: Record<string, string> | undefined): boolean; empty: boolean } }[]) {
  const ns = pod.metadata.namespace ?? 'default';
  const out = constraints.map(() => new Map<string, number>());
  for (const ni of snap.nodeInfoList) {
    const labels = ni.node!.metadata.labels ?? {};
    if (!constraints.every((c) => labels[c.topologyKey] !== undefined)) continue;
    constraints.forEach((c, i) => {
      const v = labels[c.topologyKey]!;
      out[i]!.set(v, (out[i]!.get(v) ?? 0) + countPodsMatchSelector(ni, c.selector, ns));
    });
  }
  return out;
}

// ---------------------------------------------------------------- the property

const selector = fc.oneof(
  fc.record({ matchLabels: fc.record({ app: fc.constantFrom('a', 'b') }) }),
  fc.record({ matchExpressions: fc.tuple(fc.record({ key: fc.constant('tier'), operator: fc.constantFrom('In', 'NotIn', 'Exists'), values: fc.constant(['x']) })) })
    .map((r) => ({ matchExpressions: r.matchExpressions.map((e) => (e.operator === 'Exists' ? { key: e.key, operator: e.operator } : e)) })),
  fc.constant({}),
) as fc.Arbitrary<LabelSelector>;
const term: fc.Arbitrary<PodAffinityTerm> = fc.record({
  labelSelector: selector,
  topologyKey: fc.constantFrom(HOST, ZONE, 'rack'),
  scope: fc.constantFrom('own', 'both', 'all', 'red'),
}).map(({ scope, ...t }) => ({
  ...t,
  ...(scope === 'both' ? { namespaces: ['ns1', 'ns2'] } : scope === 'all' ? { namespaceSelector: {} } : scope === 'red' ? { namespaceSelector: { matchLabels: { team: 'red' } } } : {}),
}));
const weighted: fc.Arbitrary<WeightedPodAffinityTerm> = fc.record({ weight: fc.integer({ min: 1, max: 3 }), podAffinityTerm: term });
const podSpec = fc.record({
  ns: fc.constantFrom('ns1', 'ns2'),
  app: fc.constantFrom('a', 'b', undefined),
  tier: fc.constantFrom('x', 'y', undefined),
  terminating: fc.boolean(),
  reqAff: fc.array(term, { maxLength: 1 }), reqAnti: fc.array(term, { maxLength: 2 }),
  prefAff: fc.array(weighted, { maxLength: 1 }), prefAnti: fc.array(weighted, { maxLength: 1 }),
});
type PodSpec = typeof podSpec extends fc.Arbitrary<infer T> ? T : never;
function buildPod(name: string, s: PodSpec, nodeName?: string): Pod {
  const labels: Record<string, string> = {};
  if (s.app) labels['app'] = s.app;
  if (s.tier) labels['tier'] = s.tier;
  const aff = {
    ...(s.reqAff.length || s.prefAff.length ? { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: s.reqAff, preferredDuringSchedulingIgnoredDuringExecution: s.prefAff } } : {}),
    ...(s.reqAnti.length || s.prefAnti.length ? { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: s.reqAnti, preferredDuringSchedulingIgnoredDuringExecution: s.prefAnti } } : {}),
  };
  return makePod(name, {
    namespace: s.ns, labels, ...(nodeName ? { nodeName } : {}), ...(Object.keys(aff).length ? { affinity: aff } : {}),
    ...(s.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  });
}
const NODE_NAMES = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5'];
const nodeSpec = fc.record({ name: fc.constantFrom(...NODE_NAMES), zone: fc.constantFrom('z1', 'z2', 'z3', undefined), rack: fc.constantFrom('r1', undefined) });
const op = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('node' as const), node: nodeSpec }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('removeNode' as const), node: fc.constantFrom(...NODE_NAMES) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constantFrom('add' as const, 'assume' as const), id: fc.nat({ max: 15 }), node: fc.constantFrom(...NODE_NAMES), pod: podSpec }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('remove' as const, 'forget' as const, 'confirm' as const), id: fc.nat({ max: 15 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('cycle' as const), pod: podSpec, spread: fc.array(fc.record({ key: fc.constantFrom(HOST, ZONE, 'rack'), sel: selector }), { minLength: 1, maxLength: 2 }) }) },
);

test('indexed InterPodAffinity and PodTopologySpread state equals a scan of every pod', () => {
  const affinity = new InterPodAffinity({ namespaceLabels: nsLabels }, { hardPodAffinityWeight: 2 });
  const spread = new PodTopologySpread({ services: () => [], replicaSets: () => [] });
  fc.assert(fc.property(fc.array(op, { minLength: 1, maxLength: 80, size: 'max' }), (ops) => {
    const cache = new SchedulerCache({ clock: new FakeClock() });
    const placed = new Map<number, Pod>();
    for (const o of ops) {
      if (o.kind === 'node') cache.updateNode(makeNode(o.node.name, { labels: { ...(o.node.zone ? { [ZONE]: o.node.zone } : {}), ...(o.node.rack ? { rack: o.node.rack } : {}) } }));
      else if (o.kind === 'removeNode') cache.removeNode(makeNode(o.node));
      else if (o.kind === 'add' || o.kind === 'assume') {
        if (placed.has(o.id)) continue;
        const p = buildPod(`p${o.id}`, o.pod, o.node);
        if (o.kind === 'add') cache.addPod(p); else cache.assumePod(p);
        placed.set(o.id, p);
      } else if (o.kind === 'remove' || o.kind === 'forget') {
        const p = placed.get(o.id);
        if (!p) continue;
        if (o.kind === 'remove') { cache.removePod(p); placed.delete(o.id); } else if (cache.isAssumedPod(p)) { cache.forgetPod(p); placed.delete(o.id); }
      } else if (o.kind === 'confirm') {
        const p = placed.get(o.id);
        if (p) cache.addPod({ ...p, metadata: { ...p.metadata } });
      } else if (o.kind === 'cycle') {
        const snap = cache.updateSnapshot();
        // A snapshot built from scratch has the same nodes; its indexes start from a full scan.
        const fresh = new Snapshot([...snap.nodeInfoList]);
        const pod = buildPod('incoming', o.pod);
        for (const s of [snap, fresh]) {
          const state = new CycleState(s);
          const want = bruteAffinity(s, pod);
          const pre = affinity.preFilter(state, pod);
          const got = state.read<{ existingAntiAffinity: { topologyKey: string; counts: Map<string, number> }[]; affinityCounts: TopologyCounts; antiAffinity: { topologyKey: string; counts: Map<string, number> }[] }>('PreFilterInterPodAffinity');
          if (pre?.code === 'Skip') {
            assert.equal(want.existingAnti.size + new PodInfo(pod).requiredAffinityTerms.length + new PodInfo(pod).requiredAntiAffinityTerms.length, 0);
          } else {
            const merge = (l: { topologyKey: string; counts: Map<string, number> }[]) => { const m: TopologyCounts = new Map(); for (const k of l) for (const [v, n] of k.counts) bump(m, k.topologyKey, v, n); return m; };
            assert.deepEqual(sortedNested(merge(got!.existingAntiAffinity)), sortedNested(want.existingAnti), 'existing anti-affinity');
            assert.deepEqual(sortedNested(got!.affinityCounts), sortedNested(want.affinity), 'affinity');
            assert.deepEqual(sortedNested(merge(got!.antiAffinity)), sortedNested(want.anti), 'anti-affinity');
          }
          const scoreState = new CycleState(s);
          affinity.preScore(scoreState, pod);
          const wantScore = bruteAffinityScore(s, pod, 2);
          for (const ni of s.nodeInfoList) {
            const labels = ni.node!.metadata.labels ?? {};
            let w = 0;
            for (const [key, byValue] of wantScore) { const v = labels[key]; if (v !== undefined) w += byValue.get(v) ?? 0; }
            assert.equal(affinity.score(scoreState, pod, ni), w, `score on ${ni.name}`);
          }

          const constraints: TopologySpreadConstraint[] = o.spread.map((c) => ({ maxSkew: 1, topologyKey: c.key, whenUnsatisfiable: 'DoNotSchedule', labelSelector: c.sel }));
          const spreadPod = { ...pod, spec: { ...pod.spec!, topologySpreadConstraints: constraints } };
          const spreadState = new CycleState(s);
          spread.preFilter(spreadState, spreadPod);
          const st = spreadState.read<{ constraints: Parameters<typeof bruteSpread>[2]; tpValueToMatchNum: Map<string, number>[] }>('PreFilterPodTopologySpread')!;
          const wantSpread = bruteSpread(s, spreadPod, st.constraints);
          assert.deepEqual(st.tpValueToMatchNum.map((m) => [...m].sort()), wantSpread.map((m) => [...m].sort()), 'spread domain counts');
        }
      }
    }
  }), { numRuns: 200, seed: 20261130 });
});

test('a snapshot copy for preemption (withNode) counts the replaced node', () => {
  const nodes = [new NodeInfo(makeNode('a')), new NodeInfo(makeNode('b'))];
  nodes[0]!.addPod(PodInfo.of(makePod('w', { nodeName: 'a', labels: { app: 'web' } })));
  const snap = new Snapshot(nodes);
  const m = { key: 'app=web', matches: (pi: PodInfo) => pi.pod.metadata.labels?.['app'] === 'web' };
  assert.equal(snap.podCounts(m).countOn('a'), 1);
  const emptied = nodes[0]!.clone();
  emptied.removePod('ns1/w'); emptied.removePod('default/w');
  assert.equal(snap.withNode(emptied).podCounts(m).countOn('a'), 0);
  assert.equal(snap.podCounts(m).countOn('a'), 1, 'the original is untouched');
});
