import type { TopologySpreadConstraint } from '@mk8s/api';
import type { FilterPlugin, Handle, NodeScore, PluginFactory, PreFilterPlugin, PreScorePlugin, ScorePlugin } from '../../framework/interfaces.js';
import { MAX_NODE_SCORE } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { CycleState, Node, NodeInfo, Pod } from '../../framework/types.js';
import { labelSelectorFromObject, selectorFromSet, type Selector } from '../../util/labels.js';
import { findMatchingUntoleratedTaint, podMatchesNodeSelectorAndAffinity } from '../helper/node-selector.js';

export const NAME = 'PodTopologySpread';
export const ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const ERR_REASON_NODE_LABEL_NOT_MATCH = `${ERR_REASON_CONSTRAINTS_NOT_MATCH} (missing required label)`;
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
const PRE_FILTER_KEY = `PreFilter${NAME}`;
const PRE_SCORE_KEY = `PreScore${NAME}`;

/** A constraint as the plugin uses it (selector compiled, policies defaulted). */
export interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: Selector;
  minDomains: number;
  nodeAffinityPolicy: 'Honor' | 'Ignore';
  nodeTaintsPolicy: 'Honor' | 'Ignore';
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
  };
}

const nodeHasAllKeys = (node: Node, cs: Constraint[]): boolean => cs.every((c) => node.metadata.labels?.[c.topologyKey] !== undefined);

function nodeIncluded(c: Constraint, pod: Pod, node: Node): boolean {
  if (c.nodeAffinityPolicy === 'Honor' && !podMatchesNodeSelectorAndAffinity(pod, node)) return false;
  if (c.nodeTaintsPolicy === 'Honor' && findMatchingUntoleratedTaint(node.spec?.taints, pod.spec?.tolerations,
    (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')) return false;
  return true;
}

/** Pods on the node in pod's namespace matching selector and not terminating. */
export function countPodsMatchSelector(nodeInfo: NodeInfo, selector: Selector, namespace: string): number {
  let n = 0;
  for (const p of nodeInfo.pods) {
    if (p.pod.metadata.deletionTimestamp || (p.pod.metadata.namespace ?? 'default') !== namespace) continue;
    if (selector.matches(p.pod.metadata.labels)) n++;
  }
  return n;
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
interface PreScoreState { constraints: Constraint[]; ignoredNodes: Set<string>; pairCounts: Map<string, number>[]; weights: number[] }

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
    const selector = this.defaultSelector(pod);
    if (!selector) return [];
    return wanted.map((c) => ({ ...compile(pod, { ...c, labelSelector: {} }), selector }));
  }

  /** Selectors of the services and the controlling ReplicaSet that select pod, ANDed (helper.DefaultSelector). */
  private defaultSelector(pod: Pod): Selector | undefined {
    const ns = pod.metadata.namespace ?? 'default';
    const parts: Selector[] = [];
    const set: Record<string, string> = {};
    for (const svc of this.h.services(ns)) {
      const sel = svc.spec?.selector;
      if (!sel || Object.keys(sel).length === 0) continue;
      if (selectorFromSet(sel).matches(pod.metadata.labels)) Object.assign(set, sel);
    }
    if (Object.keys(set).length) parts.push(selectorFromSet(set));
    const owner = pod.metadata.ownerReferences?.find((o) => o.controller);
    if (owner?.kind === 'ReplicaSet' && owner.apiVersion === 'apps/v1') {
      const rs = this.h.replicaSets(ns).find((r) => r.metadata?.name === owner.name);
      const sel = rs?.spec?.selector;
      if (sel && ((sel.matchLabels && Object.keys(sel.matchLabels).length) || sel.matchExpressions?.length)) parts.push(labelSelectorFromObject(sel));
    }
    if (parts.length === 0) return undefined;
    return { empty: false, matches: (l) => parts.every((p) => p.matches(l)) };
  }

  preFilter(state: CycleState, pod: Pod): Status | undefined {
    const constraints = this.constraints(pod, 'DoNotSchedule');
    if (constraints.length === 0) return Status.skip();
    const ns = pod.metadata.namespace ?? 'default';
    const tpValueToMatchNum = constraints.map(() => new Map<string, number>());
    // Inclusion policies only cost something when the pod constrains nodes or taints are honored.
    const constrained = hasNodeConstraints(pod);
    const checkInclusion = constraints.map((c) => (c.nodeAffinityPolicy === 'Honor' && constrained) || c.nodeTaintsPolicy === 'Honor');
    for (const ni of state.snapshot.nodeInfoList) {
      const node = ni.node;
      if (!node || !nodeHasAllKeys(node, constraints)) continue;
      const labels = node.metadata.labels!;
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i]!;
        if (checkInclusion[i] && !nodeIncluded(c, pod, node)) continue;
        const v = labels[c.topologyKey]!;
        const m = tpValueToMatchNum[i]!;
        m.set(v, (m.get(v) ?? 0) + countPodsMatchSelector(ni, c.selector, ns));
      }
    }
    state.write(PRE_FILTER_KEY, { constraints, tpValueToMatchNum, minMatch: tpValueToMatchNum.map((m, i) => minMatchNum(m, constraints[i]!.minDomains)),
      selfMatch: constraints.map((c) => (c.selector.matches(pod.metadata.labels) ? 1 : 0)) } satisfies PreFilterState);
    return undefined;
  }

  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (!s) return Status.error(new Error(`reading "${PRE_FILTER_KEY}" from cycleState: not found`));
    const labels = nodeInfo.node?.metadata.labels ?? {};
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      const v = labels[c.topologyKey];
      if (v === undefined) return Status.unschedulableAndUnresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
      const m = s.tpValueToMatchNum[i]!;
      const min = s.minMatch[i]!;
      if ((m.get(v) ?? 0) + s.selfMatch[i]! - min > c.maxSkew) return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
    }
    return undefined;
  }

  preScore(state: CycleState, pod: Pod, filtered: NodeInfo[]): Status | undefined {
    const constraints = this.constraints(pod, 'ScheduleAnyway');
    if (constraints.length === 0) return Status.skip();
    const ignoredNodes = new Set<string>();
    const pairCounts = constraints.map(() => new Map<string, number>());
    const sizes = constraints.map(() => 0);
    for (const ni of filtered) {
      const node = ni.node;
      if (!node) continue;
      if (!nodeHasAllKeys(node, constraints)) { ignoredNodes.add(ni.name); continue; }
      constraints.forEach((c, i) => {
        if (c.topologyKey === LABEL_HOSTNAME) return;
        const v = node.metadata.labels![c.topologyKey]!;
        if (!pairCounts[i]!.has(v)) { pairCounts[i]!.set(v, 0); sizes[i]!++; }
      });
    }
    constraints.forEach((c, i) => { if (c.topologyKey === LABEL_HOSTNAME) sizes[i] = filtered.length - ignoredNodes.size; });
    const ns = pod.metadata.namespace ?? 'default';
    for (const ni of state.snapshot.nodeInfoList) {
      const node = ni.node;
      if (!node || !nodeHasAllKeys(node, constraints)) continue;
      constraints.forEach((c, i) => {
        if (c.topologyKey === LABEL_HOSTNAME || !nodeIncluded(c, pod, node)) return;
        const v = node.metadata.labels![c.topologyKey]!;
        const m = pairCounts[i]!;
        if (!m.has(v)) return;
        m.set(v, m.get(v)! + countPodsMatchSelector(ni, c.selector, ns));
      });
    }
    state.write(PRE_SCORE_KEY, { constraints, ignoredNodes, pairCounts, weights: sizes.map((n) => Math.log(n + 2)) } satisfies PreScoreState);
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number {
    const s = state.read<PreScoreState>(PRE_SCORE_KEY);
    if (!s || s.ignoredNodes.has(nodeInfo.name)) return 0;
    const labels = nodeInfo.node?.metadata.labels ?? {};
    const ns = pod.metadata.namespace ?? 'default';
    let score = 0;
    s.constraints.forEach((c, i) => {
      const v = labels[c.topologyKey];
      if (v === undefined) return;
      const cnt = c.topologyKey === LABEL_HOSTNAME ? countPodsMatchSelector(nodeInfo, c.selector, ns) : s.pairCounts[i]!.get(v) ?? 0;
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
