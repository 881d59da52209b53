import type { FilterPlugin, Handle, NodeScore, PluginFactory, PreFilterPlugin, PreScorePlugin, ScorePlugin } from '../../framework/interfaces.js';
import { MAX_NODE_SCORE } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { ExistingTermKind, PairCounts, PodMatcher, TermGroup } from '../../framework/pod-index.js';
import { PodInfo, termMatches, type AffinityTerm, type CycleState, type NamespaceLabels, type NodeInfo, type Pod } from '../../framework/types.js';

export const NAME = 'InterPodAffinity';
export const ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules";
export const ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules";
export const ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules";
const PRE_FILTER_KEY = `PreFilter${NAME}`;
// Statuses are immutable: one instance each, not one per rejected node per cycle.
const AFFINITY_NOT_MATCH = Status.unschedulableAndUnresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH);
const ANTI_AFFINITY_NOT_MATCH = Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH);
const EXISTING_ANTI_AFFINITY_NOT_MATCH = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH);
const PRE_SCORE_KEY = `PreScore${NAME}`;

/** Pod counts per topology pair: topologyKey → value → count. */
type TopologyCounts = Map<string, Map<string, number>>;

/** Pod counts by value of one topology key (entries are never 0). */
interface KeyedCounts { topologyKey: string; counts: PairCounts }

interface PreFilterState {
  podInfo: PodInfo;
  /** Per existing-pod required anti-affinity term that matches the incoming pod: where those pods run. */
  existingAntiAffinity: KeyedCounts[];
  /** Per topologyKey of the incoming pod's required affinity terms: pods matching all of those terms. */
  affinityCounts: Map<string, PairCounts>;
  /** No pod matches all required affinity terms on a node carrying the term's key. */
  noAffinityMatches: boolean;
  /** The incoming pod matches all its own required affinity terms (it may found a group). */
  selfAffinity: boolean;
  /** Per required anti-affinity term of the incoming pod: pods matching it. */
  antiAffinity: KeyedCounts[];
}

function bump(m: TopologyCounts, key: string, value: string, by: number): void {
  let byValue = m.get(key);
  if (!byValue) { byValue = new Map(); m.set(key, byValue); }
  byValue.set(value, (byValue.get(value) ?? 0) + by);
}

const podMatchesAllTerms = (terms: AffinityTerm[], pod: Pod, ns: NamespaceLabels): boolean =>
  terms.length > 0 && terms.every((t) => termMatches(t, pod, ns));

/** A term whose match does not depend on namespace labels can be indexed across cycles. */
const indexable = (t: AffinityTerm): boolean => !t.namespaceSelector || t.namespaceSelector.empty;

/** Pods matching term t. */
export const termMatcher = (t: AffinityTerm, ns: NamespaceLabels): PodMatcher =>
  ({ key: indexable(t) ? `term|${t.key}` : undefined, matches: (pi) => termMatches(t, pi.pod, ns) });

/** Pods matching every one of terms. */
export const allTermsMatcher = (terms: AffinityTerm[], ns: NamespaceLabels): PodMatcher =>
  ({ key: terms.every(indexable) ? `all|${terms.map((t) => t.key).join('|')}` : undefined, matches: (pi) => podMatchesAllTerms(terms, pi.pod, ns) });

export interface InterPodAffinityArgs { hardPodAffinityWeight?: number }

/**
 * Required and preferred pod affinity / anti-affinity by topologyKey, both the incoming pod's terms
 * and existing pods' terms that select the incoming pod (symmetry), as upstream's interpodaffinity.
 * Counts come from the snapshot's pod indexes (framework/pod-index.ts), not from a scan of all pods.
 */
export class InterPodAffinity implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = NAME;
  private readonly hardPodAffinityWeight: number;
  constructor(private readonly h: Pick<Handle, 'namespaceLabels'>, args: InterPodAffinityArgs = {}) {
    this.hardPodAffinityWeight = args.hardPodAffinityWeight ?? 1;
  }

  preFilter(state: CycleState, pod: Pod): Status | undefined {
    const pi = PodInfo.of(pod);
    const ns = this.h.namespaceLabels;
    const snap = state.snapshot;
    const existingAntiAffinity: KeyedCounts[] = [];
    for (const g of snap.existingTerms('requiredAntiAffinity').groups.values()) {
      if (g.pairs.size && termMatches(g.term, pod, ns)) existingAntiAffinity.push({ topologyKey: g.term.topologyKey, counts: g.pairs });
    }
    const affinityCounts = new Map<string, PairCounts>();
    const antiAffinity: KeyedCounts[] = [];
    if (pi.requiredAffinityTerms.length) {
      const mc = snap.podCounts(allTermsMatcher(pi.requiredAffinityTerms, ns));
      for (const t of pi.requiredAffinityTerms) affinityCounts.set(t.topologyKey, snap.pairCounts(mc, t.topologyKey));
    }
    for (const t of pi.requiredAntiAffinityTerms) {
      const counts = snap.pairCounts(snap.podCounts(termMatcher(t, ns)), t.topologyKey);
      if (counts.size) antiAffinity.push({ topologyKey: t.topologyKey, counts });
    }
    if (!pi.requiredAffinityTerms.length && !pi.requiredAntiAffinityTerms.length && existingAntiAffinity.length === 0) return Status.skip();
    state.write(PRE_FILTER_KEY, {
      podInfo: pi, existingAntiAffinity, affinityCounts, antiAffinity,
      noAffinityMatches: [...affinityCounts.values()].every((m) => m.size === 0),
      selfAffinity: podMatchesAllTerms(pi.requiredAffinityTerms, pod, ns),
    } satisfies PreFilterState);
    return undefined;
  }

  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (!s) return Status.error(new Error(`reading "${PRE_FILTER_KEY}" from cycleState: not found`));
    const labels = nodeInfo.node?.metadata.labels ?? {};
    if (!this.satisfyPodAffinity(s, labels)) return AFFINITY_NOT_MATCH;
    for (const a of s.antiAffinity) {
      const v = labels[a.topologyKey];
      if (v !== undefined && a.counts.has(v)) return ANTI_AFFINITY_NOT_MATCH;
    }
    for (const e of s.existingAntiAffinity) {
      const v = labels[e.topologyKey];
      if (v !== undefined && e.counts.has(v)) return EXISTING_ANTI_AFFINITY_NOT_MATCH;
    }
    return undefined;
  }

  private satisfyPodAffinity(s: PreFilterState, labels: Record<string, string>): boolean {
    let podsExist = true;
    for (const t of s.podInfo.requiredAffinityTerms) {
      const v = labels[t.topologyKey];
      if (v === undefined) return false; // every topology label must exist on the node
      if (!s.affinityCounts.get(t.topologyKey)?.has(v)) podsExist = false;
    }
    if (podsExist) return true;
    // The first pod of a group with affinity to itself may go anywhere its topology keys exist.
    return s.noAffinityMatches && s.selfAffinity;
  }

  preScore(state: CycleState, pod: Pod): Status | undefined {
    const pi = PodInfo.of(pod);
    const snap = state.snapshot;
    const ns = this.h.namespaceLabels;
    const score: TopologyCounts = new Map();
    const addPairs = (key: string, pairs: PairCounts, weight: number) => { for (const [v, n] of pairs) bump(score, key, v, weight * n); };
    // The incoming pod's preferred terms: pods matching them, where they run.
    for (const t of pi.preferredAffinityTerms) addPairs(t.topologyKey, snap.pairCounts(snap.podCounts(termMatcher(t, ns)), t.topologyKey), t.weight);
    for (const t of pi.preferredAntiAffinityTerms) addPairs(t.topologyKey, snap.pairCounts(snap.podCounts(termMatcher(t, ns)), t.topologyKey), -t.weight);
    // Existing pods' terms that select the incoming pod (symmetry), matched once per distinct term.
    const existing = (kind: ExistingTermKind, weight: (g: TermGroup) => number) => {
      for (const g of snap.existingTerms(kind).groups.values()) {
        if (g.pairs.size && termMatches(g.term, pod, ns)) addPairs(g.term.topologyKey, g.pairs, weight(g));
      }
    };
    if (this.hardPodAffinityWeight > 0) existing('requiredAffinity', () => this.hardPodAffinityWeight);
    existing('preferredAffinity', (g) => g.weight);
    existing('preferredAntiAffinity', (g) => -g.weight);
    if (score.size === 0) return Status.skip();
    state.write(PRE_SCORE_KEY, score);
    return undefined;
  }

  score(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): number {
    const m = state.read<TopologyCounts>(PRE_SCORE_KEY);
    if (!m) return 0;
    const labels = nodeInfo.node?.metadata.labels ?? {};
    let s = 0;
    for (const [key, byValue] of m) {
      const v = labels[key];
      if (v !== undefined) s += byValue.get(v) ?? 0;
    }
    return s;
  }

  /** Min-max scales raw scores (which may be negative) into [0, 100]. */
  normalizeScore(state: CycleState, _pod: Pod, scores: NodeScore[]): void {
    if (!state.read<TopologyCounts>(PRE_SCORE_KEY)?.size) return;
    let min = Infinity; let max = -Infinity;
    for (const s of scores) { min = Math.min(min, s.score); max = Math.max(max, s.score); }
    const diff = max - min;
    for (const s of scores) s.score = diff > 0 ? Math.trunc(MAX_NODE_SCORE * ((s.score - min) / diff)) : 0;
  }
}
export const create: PluginFactory = (args, h) => new InterPodAffinity(h, (args ?? {}) as InterPodAffinityArgs);
