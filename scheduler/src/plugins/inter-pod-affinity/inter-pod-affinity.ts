import type { FilterPlugin, Handle, NodeScore, PluginFactory, PreFilterPlugin, PreScorePlugin, ScorePlugin } from '../../framework/interfaces.js';
import { MAX_NODE_SCORE } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import { PodInfo, termMatches, type AffinityTerm, type CycleState, type NamespaceLabels, type Node, type NodeInfo, type Pod, type WeightedAffinityTerm } from '../../framework/types.js';

export const NAME = 'InterPodAffinity';
export const ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules";
export const ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules";
export const ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules";
const PRE_FILTER_KEY = `PreFilter${NAME}`;
const PRE_SCORE_KEY = `PreScore${NAME}`;

/** Pod counts per topology pair: topologyKey → value → count. */
type TopologyCounts = Map<string, Map<string, number>>;
const countOf = (m: TopologyCounts, key: string, value: string): number => m.get(key)?.get(value) ?? 0;

interface PreFilterState {
  podInfo: PodInfo;
  /** Pairs where an existing pod's required anti-affinity term matches the incoming pod. */
  existingAntiAffinityCounts: TopologyCounts;
  /** Pairs with pods matching all of the incoming pod's required affinity terms. */
  affinityCounts: TopologyCounts;
  /** Pairs with pods matching one of the incoming pod's required anti-affinity terms. */
  antiAffinityCounts: TopologyCounts;
}

function bump(m: TopologyCounts, node: Node, key: string, by: number): void {
  const v = node.metadata.labels?.[key];
  if (v === undefined) return;
  let byValue = m.get(key);
  if (!byValue) { byValue = new Map(); m.set(key, byValue); }
  byValue.set(v, (byValue.get(v) ?? 0) + by);
}

const podMatchesAllTerms = (terms: AffinityTerm[], pod: Pod, ns: NamespaceLabels): boolean =>
  terms.length > 0 && terms.every((t) => termMatches(t, pod, ns));

export interface InterPodAffinityArgs { hardPodAffinityWeight?: number }

/**
 * Required and preferred pod affinity / anti-affinity by topologyKey, both the incoming pod's terms
 * and existing pods' terms that select the incoming pod (symmetry), as upstream's interpodaffinity.
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
    const existingAntiAffinityCounts: TopologyCounts = new Map();
    for (const ni of state.snapshot.havePodsWithRequiredAntiAffinityList) {
      if (!ni.node) continue;
      for (const ep of ni.podsWithRequiredAntiAffinity) {
        for (const t of ep.requiredAntiAffinityTerms) if (termMatches(t, pod, ns)) bump(existingAntiAffinityCounts, ni.node, t.topologyKey, 1);
      }
    }
    const affinityCounts: TopologyCounts = new Map();
    const antiAffinityCounts: TopologyCounts = new Map();
    if (pi.requiredAffinityTerms.length || pi.requiredAntiAffinityTerms.length) {
      for (const ni of state.snapshot.nodeInfoList) {
        if (!ni.node) continue;
        for (const ep of ni.pods) {
          if (podMatchesAllTerms(pi.requiredAffinityTerms, ep.pod, ns)) {
            for (const t of pi.requiredAffinityTerms) bump(affinityCounts, ni.node, t.topologyKey, 1);
          }
          for (const t of pi.requiredAntiAffinityTerms) if (termMatches(t, ep.pod, ns)) bump(antiAffinityCounts, ni.node, t.topologyKey, 1);
        }
      }
    } else if (existingAntiAffinityCounts.size === 0) {
      return Status.skip();
    }
    state.write(PRE_FILTER_KEY, { podInfo: pi, existingAntiAffinityCounts, affinityCounts, antiAffinityCounts } satisfies PreFilterState);
    return undefined;
  }

  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (!s) return Status.error(new Error(`reading "${PRE_FILTER_KEY}" from cycleState: not found`));
    const labels = nodeInfo.node?.metadata.labels ?? {};
    if (!this.satisfyPodAffinity(s, labels)) return Status.unschedulableAndUnresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH);
    if (s.antiAffinityCounts.size > 0) {
      for (const t of s.podInfo.requiredAntiAffinityTerms) {
        const v = labels[t.topologyKey];
        if (v !== undefined && countOf(s.antiAffinityCounts, t.topologyKey, v) > 0) {
          return Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH);
        }
      }
    }
    for (const [key, byValue] of s.existingAntiAffinityCounts) {
      const v = labels[key];
      if (v !== undefined && (byValue.get(v) ?? 0) > 0) return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH);
    }
    return undefined;
  }

  private satisfyPodAffinity(s: PreFilterState, labels: Record<string, string>): boolean {
    let podsExist = true;
    for (const t of s.podInfo.requiredAffinityTerms) {
      const v = labels[t.topologyKey];
      if (v === undefined) return false; // every topology label must exist on the node
      if (countOf(s.affinityCounts, t.topologyKey, v) <= 0) podsExist = false;
    }
    if (podsExist) return true;
    // The first pod of a group with affinity to itself may go anywhere its topology keys exist.
    return s.affinityCounts.size === 0 && podMatchesAllTerms(s.podInfo.requiredAffinityTerms, s.podInfo.pod, this.h.namespaceLabels);
  }

  preScore(state: CycleState, pod: Pod): Status | undefined {
    const pi = PodInfo.of(pod);
    const hasConstraints = pi.preferredAffinityTerms.length > 0 || pi.preferredAntiAffinityTerms.length > 0;
    const nodes = hasConstraints ? state.snapshot.nodeInfoList : state.snapshot.havePodsWithAffinityList;
    const ns = this.h.namespaceLabels;
    const score: TopologyCounts = new Map();
    const process = (terms: WeightedAffinityTerm[] | AffinityTerm[], target: Pod, node: Node, mult: number, fixed?: number) => {
      for (const t of terms) {
        if (!termMatches(t, target, ns)) continue;
        const w = fixed ?? (t as WeightedAffinityTerm).weight;
        bump(score, node, t.topologyKey, w * mult);
      }
    };
    for (const ni of nodes) {
      const node = ni.node;
      if (!node || !node.metadata.labels || Object.keys(node.metadata.labels).length === 0) continue;
      for (const ep of hasConstraints ? ni.pods : ni.podsWithAffinity) {
        process(pi.preferredAffinityTerms, ep.pod, node, 1);
        process(pi.preferredAntiAffinityTerms, ep.pod, node, -1);
        if (this.hardPodAffinityWeight > 0) process(ep.requiredAffinityTerms, pod, node, 1, this.hardPodAffinityWeight);
        process(ep.preferredAffinityTerms, pod, node, 1);
        process(ep.preferredAntiAffinityTerms, pod, node, -1);
      }
    }
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
