import type { TopologySpreadConstraint } from '@mk8s/api';
import type { FilterPlugin, Handle, NodeScore, PluginFactory, PreFilterPlugin, PreScorePlugin, ScorePlugin } from '../../framework/interfaces.js';
import { MAX_NODE_SCORE } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { MatchCounts, PodMatcher } from '../../framework/pod-index.js';
import type { CycleState, Node, NodeInfo, Pod, PodInfo, Snapshot } from '../../framework/types.js';
import { labelSelectorFromObject, selectorFromSet, type Selector } from '../../util/labels.js';
import { findMatchingUntoleratedTaint, podMatchesNodeSelectorAndAffinity } from '../helper/node-selector.js';

export const NAME = 'PodTopologySpread';
export const ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const ERR_REASON_NODE_LABEL_NOT_MATCH = `${ERR_REASON_CONSTRAINTS_NOT_MATCH} (missing required label)`;
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
const PRE_FILTER_KEY = `PreFilter${NAME}`;
// Statuses are immutable: one instance each, not one per rejected node per cycle.
const CONSTRAINTS_NOT_MATCH = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
const NODE_LABEL_NOT_MATCH = Status.unschedulableAndUnresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
const PRE_SCORE_KEY = `PreScore${NAME}`;

/** A constraint as the plugin uses it (selector compiled, policies defaulted). */
export interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: Selector;
  minDomains: number;
  nodeAffinityPolicy: 'Honor' | 'Ignore';
  nodeTaintsPolicy: 'Honor' | 'Ignore';
  /** Names the selector for the pod index (equal keys select the same pods); undefined: not indexed. */
  selectorKey: string | undefined;
}

/** Upstream's system default constraints, used when a pod declares none (ScheduleAnyway, so scoring only). */
export const SYSTEM_DEFAULT_CONSTRAINTS: readonly Omit<TopologySpreadConstraint, 'labelSelector'>[] = [
  { topologyKey: LABEL_HOSTNAME, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 3 },
  { topologyKey: LABEL_ZONE, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 },
];

function compile(pod: Pod, c: TopologySpreadConstraint): Constraint {
  let sel = c.labelSelector;
  const keys = (c.matchLabelKeys ?? []).filter((k) => pod.metadata.labels?.[k] !== undefined);
  if (keys.length && sel) {
    sel = { ...sel, matchExpressions: [...(sel.matchExpressions ?? []), ...keys.map((k) => ({ key: k, operator: 'In', values: [pod.metadata.labels![k]!] }))] };
  }
  return {
    maxSkew: c.maxSkew,
    topologyKey: c.topologyKey,
    selector: labelSelectorFromObject(sel),
    minDomains: c.minDomains ?? 1,
    nodeAffinityPolicy: (c.nodeAffinityPolicy as 'Honor' | 'Ignore' | undefined) ?? 'Honor',
    nodeTaintsPolicy: (c.nodeTaintsPolicy as 'Honor' | 'Ignore' | undefined) ?? 'Ignore',
    selectorKey: JSON.stringify(sel ?? null),
  };
}

const nodeHasAllKeys = (node: Node, cs: Constraint[]): boolean => cs.every((c) => node.metadata.labels?.[c.topologyKey] !== undefined);

function nodeIncluded(c: Constraint, pod: Pod, node: Node): boolean {
  if (c.nodeAffinityPolicy === 'Honor' && !podMatchesNodeSelectorAndAffinity(pod, node)) return false;
  if (c.nodeTaintsPolicy === 'Honor' && findMatchingUntoleratedTaint(node.spec?.taints, pod.spec?.tolerations,
    (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')) return false;
  return true;
}

/** Whether a pod counts toward a constraint: in the namespace, matching, not terminating. */
const podCounts = (pi: PodInfo, selector: Selector, namespace: string): boolean =>
  !pi.pod.metadata.deletionTimestamp && (pi.pod.metadata.namespace ?? 'default') === namespace && selector.matches(pi.pod.metadata.labels);

/** Pods on the node in pod's namespace matching selector and not terminating. */
export function countPodsMatchSelector(nodeInfo: NodeInfo, selector: Selector, namespace: string): number {
  let n = 0;
  for (const p of nodeInfo.pods) if (podCounts(p, selector, namespace)) n++;
  return n;
}

/** The pods a constraint counts, as a snapshot pod index. */
export const spreadMatcher = (c: Constraint, namespace: string): PodMatcher =>
  ({ key: c.selectorKey === undefined ? undefined : `spread|${namespace}|${c.selectorKey}`, matches: (pi) => podCounts(pi, c.selector, namespace) });

/**
 * Matching pods per domain of each constraint, over the nodes that count: those carrying every
 * constraint's key and, where the policies say so, passing the pod's node affinity and taints.
 * Domains of counted nodes appear even with 0 pods. With one topology key and no inclusion
 * policy to check, that is the index's pair counts over the snapshot's domains; otherwise one
 * pass over nodes, reading each node's count from the index.
 */
function countByDomain(snap: Snapshot, pod: Pod, constraints: Constraint[], inclusion: boolean[], only?: (c: Constraint) => boolean): Map<string, number>[] {
  const ns = pod.metadata.namespace ?? 'default';
  const counts = constraints.map((c) => (only && !only(c) ? undefined : snap.podCounts(spreadMatcher(c, ns))));
  const out = constraints.map(() => new Map<string, number>());
  const key = constraints[0]?.topologyKey;
  if (constraints.every((c) => c.topologyKey === key) && !inclusion.some(Boolean) && key !== undefined) {
    const domains = snap.domains(key);
    counts.forEach((mc, i) => {
      if (!mc) return;
      const pairs = snap.pairCounts(mc, key);
      const m = out[i]!;
      for (const v of domains.keys()) m.set(v, pairs.get(v) ?? 0);
    });
    return out;
  }
  for (const ni of snap.nodeInfoList) {
    const node = ni.node;
    if (!node || !nodeHasAllKeys(node, constraints)) continue;
    const labels = node.metadata.labels!;
    for (let i = 0; i < constraints.length; i++) {
      const mc = counts[i];
      if (!mc) continue;
      const c = constraints[i]!;
      if (inclusion[i] && !nodeIncluded(c, pod, node)) continue;
      const v = labels[c.topologyKey]!;
      const m = out[i]!;
      m.set(v, (m.get(v) ?? 0) + mc.countOn(ni.name));
    }
  }
  return out;
}

interface PreFilterState { constraints: Constraint[]; tpValueToMatchNum: Map<string, number>[]; minMatch: number[]; selfMatch: number[] }

/** The global minimum of matching pods over domains; 0 when there are fewer than minDomains. */
function minMatchNum(m: Map<string, number>, minDomains: number): number {
  if (m.size < minDomains) return 0;
  let min = Infinity;
  for (const n of m.values()) if (n < min) min = n;
  return min === Infinity ? 0 : min;
}

const hasNodeConstraints = (pod: Pod): boolean =>
  Object.keys(pod.spec?.nodeSelector ?? {}).length > 0 || pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution !== undefined;
interface PreScoreState {
  constraints: Constraint[]; ignoredNodes: Set<string>; pairCounts: Map<string, number>[];
  /** Hostname constraints: matching pods per node. */
  hostCounts: (MatchCounts | undefined)[];
  weights: number[];
}

/**
 * Spreads matching pods evenly across topology domains: DoNotSchedule constraints filter (skew must
 * stay within maxSkew), ScheduleAnyway constraints and the system defaults score.
 */
export class PodTopologySpread implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = NAME;
  constructor(private readonly h: Pick<Handle, 'services' | 'replicaSets'>, private readonly args: { defaultingType?: 'System' | 'List'; defaultConstraints?: TopologySpreadConstraint[] } = {}) {}

  private constraints(pod: Pod, when: 'DoNotSchedule' | 'ScheduleAnyway'): Constraint[] {
    const declared = pod.spec?.topologySpreadConstraints ?? [];
    if (declared.length) return declared.filter((c) => c.whenUnsatisfiable === when).map((c) => compile(pod, c));
    const defaults = this.args.defaultingType === 'List' ? this.args.defaultConstraints ?? [] : SYSTEM_DEFAULT_CONSTRAINTS;
    const wanted = defaults.filter((c) => c.whenUnsatisfiable === when);
    if (wanted.length === 0) return [];
    const d = this.defaultSelector(pod);
    if (!d) return [];
    return wanted.map((c) => ({ ...compile(pod, { ...c, labelSelector: {} }), selector: d.selector, selectorKey: d.key }));
  }

  /**
   * Selectors of the services and the controlling ReplicaSet that select pod, ANDed
   * (helper.DefaultSelector), with a key naming that combination for the pod index.
   */
  private defaultSelector(pod: Pod): { selector: Selector; key: string } | undefined {
    const ns = pod.metadata.namespace ?? 'default';
    const parts: Selector[] = [];
    const set: Record<string, string> = {};
    for (const svc of this.h.services(ns)) {
      const sel = svc.spec?.selector;
      if (!sel || Object.keys(sel).length === 0) continue;
      if (selectorFromSet(sel).matches(pod.metadata.labels)) Object.assign(set, sel);
    }
    if (Object.keys(set).length) parts.push(selectorFromSet(set));
    let rsSelector: unknown = null;
    const owner = pod.metadata.ownerReferences?.find((o) => o.controller);
    if (owner?.kind === 'ReplicaSet' && owner.apiVersion === 'apps/v1') {
      const rs = this.h.replicaSets(ns).find((r) => r.metadata?.name === owner.name);
      const sel = rs?.spec?.selector;
      if (sel && ((sel.matchLabels && Object.keys(sel.matchLabels).length) || sel.matchExpressions?.length)) { parts.push(labelSelectorFromObject(sel)); rsSelector = sel; }
    }
    if (parts.length === 0) return undefined;
    const sortedSet = Object.fromEntries(Object.entries(set).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { selector: { empty: false, matches: (l) => parts.every((p) => p.matches(l)) }, key: JSON.stringify(['default', sortedSet, rsSelector]) };
  }

  preFilter(state: CycleState, pod: Pod): Status | undefined {
    const constraints = this.constraints(pod, 'DoNotSchedule');
    if (constraints.length === 0) return Status.skip();
    const tpValueToMatchNum = countByDomain(state.snapshot, pod, constraints, this.inclusionChecks(pod, constraints));
    state.write(PRE_FILTER_KEY, { constraints, tpValueToMatchNum, minMatch: tpValueToMatchNum.map((m, i) => minMatchNum(m, constraints[i]!.minDomains)),
      selfMatch: constraints.map((c) => (c.selector.matches(pod.metadata.labels) ? 1 : 0)) } satisfies PreFilterState);
    return undefined;
  }

  /** Per constraint, whether nodes must be checked against its inclusion policies (only then does it cost). */
  private inclusionChecks(pod: Pod, constraints: Constraint[]): boolean[] {
    const constrained = hasNodeConstraints(pod);
    return constraints.map((c) => (c.nodeAffinityPolicy === 'Honor' && constrained) || c.nodeTaintsPolicy === 'Honor');
  }

  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (!s) return Status.error(new Error(`reading "${PRE_FILTER_KEY}" from cycleState: not found`));
    const labels = nodeInfo.node?.metadata.labels ?? {};
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      const v = labels[c.topologyKey];
      if (v === undefined) return NODE_LABEL_NOT_MATCH;
      const m = s.tpValueToMatchNum[i]!;
      const min = s.minMatch[i]!;
      if ((m.get(v) ?? 0) + s.selfMatch[i]! - min > c.maxSkew) return CONSTRAINTS_NOT_MATCH;
    }
    return undefined;
  }

  preScore(state: CycleState, pod: Pod, filtered: NodeInfo[]): Status | undefined {
    const constraints = this.constraints(pod, 'ScheduleAnyway');
    if (constraints.length === 0) return Status.skip();
    const ignoredNodes = new Set<string>();
    const filteredDomains = constraints.map(() => new Set<string>());
    for (const ni of filtered) {
      const node = ni.node;
      if (!node) continue;
      if (!nodeHasAllKeys(node, constraints)) { ignoredNodes.add(ni.name); continue; }
      constraints.forEach((c, i) => { if (c.topologyKey !== LABEL_HOSTNAME) filteredDomains[i]!.add(node.metadata.labels![c.topologyKey]!); });
    }
    const sizes = constraints.map((c, i) => (c.topologyKey === LABEL_HOSTNAME ? filtered.length - ignoredNodes.size : filteredDomains[i]!.size));
    // Only domains of the filtered nodes are scored, but pods on every counted node are summed.
    const all = countByDomain(state.snapshot, pod, constraints, this.inclusionChecks(pod, constraints), (c) => c.topologyKey !== LABEL_HOSTNAME);
    const pairCounts = all.map((m, i) => {
      const out = new Map<string, number>();
      for (const v of filteredDomains[i]!) out.set(v, m.get(v) ?? 0);
      return out;
    });
    const ns = pod.metadata.namespace ?? 'default';
    const hostCounts = constraints.map((c) => (c.topologyKey === LABEL_HOSTNAME ? state.snapshot.podCounts(spreadMatcher(c, ns)) : undefined));
    state.write(PRE_SCORE_KEY, { constraints, ignoredNodes, pairCounts, hostCounts, weights: sizes.map((n) => Math.log(n + 2)) } satisfies PreScoreState);
    return undefined;
  }

  score(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): number {
    const s = state.read<PreScoreState>(PRE_SCORE_KEY);
    if (!s || s.ignoredNodes.has(nodeInfo.name)) return 0;
    const labels = nodeInfo.node?.metadata.labels ?? {};
    let score = 0;
    s.constraints.forEach((c, i) => {
      const v = labels[c.topologyKey];
      if (v === undefined) return;
      const host = s.hostCounts[i];
      const cnt = host ? host.countOn(nodeInfo.name) : s.pairCounts[i]!.get(v) ?? 0;
      score += cnt * s.weights[i]! + (c.maxSkew - 1);
    });
    return Math.round(score);
  }

  /** Fewer matching pods is better: maps [min, max] onto [100, ~0]; ignored nodes score 0. */
  normalizeScore(state: CycleState, _pod: Pod, scores: NodeScore[]): void {
    const s = state.read<PreScoreState>(PRE_SCORE_KEY);
    if (!s) return;
    let min = Infinity; let max = 0;
    for (const x of scores) {
      if (s.ignoredNodes.has(x.name)) continue;
      min = Math.min(min, x.score); max = Math.max(max, x.score);
    }
    for (const x of scores) {
      if (s.ignoredNodes.has(x.name)) { x.score = 0; continue; }
      if (max === 0) { x.score = MAX_NODE_SCORE; continue; }
      x.score = Math.trunc((MAX_NODE_SCORE * (max + min - x.score)) / max);
    }
  }
}
export const create: PluginFactory = (args, h) => new PodTopologySpread(h, (args ?? {}) as ConstructorParameters<typeof PodTopologySpread>[1]);
