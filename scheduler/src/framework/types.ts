/**
 * The scheduler's view of pods and nodes (framework.PodInfo, framework.NodeInfo): API objects
 * decorated with what every cycle would otherwise recompute (requests, parsed affinity terms).
 * PodInfo and NodeInfo are owned by the cache; plugins treat them as read-only.
 */
import type { Named, Pod as ApiPod, Node as ApiNode, PodAffinityTerm, WeightedPodAffinityTerm } from '@mk8s/api';
import { labelSelectorFromObject, type Labels, type Selector } from '../util/labels.js';
import { EXISTING_TERM_KINDS, ExistingTerms, MatchCounts, TopologyDomains, nodeDelta, type ExistingTermKind, type PairCounts, type PodMatcher } from './pod-index.js';
import { addResourceList, cloneResource, emptyResource, podNonZeroRequests, podRequests, type Resource } from './resource.js';

export type Pod = Named<ApiPod>;
export type Node = Named<ApiNode>;

/** "namespace/name" of a pod. */
export const podKey = (pod: Pod): string => `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
/** The pod's priority: spec.priority as admission resolved it (0 if unset). */
export const podPriority = (pod: Pod): number => pod.spec?.priority ?? 0;

/** A pod affinity term with its selectors compiled (framework.AffinityTerm). */
export interface AffinityTerm {
  namespaces: ReadonlySet<string>;
  /** undefined: only `namespaces` counts. */
  namespaceSelector: Selector | undefined;
  selector: Selector;
  topologyKey: string;
  /** Equal keys mean equal terms (namespaces, both selectors, topologyKey): what indexes group by. */
  key: string;
}
export interface WeightedAffinityTerm extends AffinityTerm { weight: number }

/** Namespace labels by name; terms with a namespaceSelector need them. */
export type NamespaceLabels = (namespace: string) => Labels | undefined;

/** Whether term selects pod (namespace first, then labels). */
export function termMatches(term: AffinityTerm, pod: Pod, nsLabels: NamespaceLabels): boolean {
  const ns = pod.metadata.namespace ?? 'default';
  if (!term.namespaces.has(ns)) {
    if (!term.namespaceSelector) return false;
    if (!term.namespaceSelector.empty && !term.namespaceSelector.matches(nsLabels(ns))) return false;
  }
  return term.selector.matches(pod.metadata.labels);
}

function compileTerm(pod: Pod, t: PodAffinityTerm): AffinityTerm {
  const own = pod.metadata.namespace ?? 'default';
  const namespaces = new Set(t.namespaces?.length || t.namespaceSelector ? t.namespaces ?? [] : [own]);
  // matchLabelKeys / mismatchLabelKeys add the incoming pod's own label values to the selector.
  let labelSelector = t.labelSelector;
  const extra = [
    ...(t.matchLabelKeys ?? []).filter((k) => pod.metadata.labels?.[k] !== undefined)
      .map((k) => ({ key: k, operator: 'In', values: [pod.metadata.labels![k]!] })),
    ...(t.mismatchLabelKeys ?? []).filter((k) => pod.metadata.labels?.[k] !== undefined)
      .map((k) => ({ key: k, operator: 'NotIn', values: [pod.metadata.labels![k]!] })),
  ];
  if (extra.length && labelSelector) labelSelector = { ...labelSelector, matchExpressions: [...(labelSelector.matchExpressions ?? []), ...extra] };
  return {
    namespaces,
    namespaceSelector: t.namespaceSelector ? labelSelectorFromObject(t.namespaceSelector) : undefined,
    selector: labelSelectorFromObject(labelSelector),
    topologyKey: t.topologyKey,
    key: JSON.stringify([[...namespaces].sort(), t.namespaceSelector ?? null, labelSelector ?? null, t.topologyKey]),
  };
}
const compileWeighted = (pod: Pod, ts: WeightedPodAffinityTerm[] | undefined): WeightedAffinityTerm[] =>
  (ts ?? []).map((w) => ({ ...compileTerm(pod, w.podAffinityTerm), weight: w.weight }));

const podInfos = new WeakMap<Pod, PodInfo>();

/** A pod plus what the scheduler derives from it once. Immutable once built. */
export class PodInfo {
  /** The PodInfo of this pod object, built once per object (API objects are never mutated). */
  static of(pod: Pod): PodInfo {
    let pi = podInfos.get(pod);
    if (!pi) { pi = new PodInfo(pod); podInfos.set(pod, pi); }
    return pi;
  }

  /**
   * Registers the PodInfo of a copy of from.pod that differs only in spec.nodeName (the assumed
   * pod), sharing everything derived: rebuilding it would cost as much as the first time.
   */
  static alias(copy: Pod, from: PodInfo): PodInfo {
    const pi: PodInfo = Object.assign(Object.create(PodInfo.prototype) as PodInfo, from, { pod: copy });
    podInfos.set(copy, pi);
    return pi;
  }

  readonly pod: Pod;
  readonly key: string;
  readonly requests: Resource;
  readonly nonZero: { milliCpu: number; memory: number };
  /** Names of the extended resources the pod requests. */
  readonly scalarResources: readonly string[];
  readonly requiredAffinityTerms: AffinityTerm[];
  readonly requiredAntiAffinityTerms: AffinityTerm[];
  readonly preferredAffinityTerms: WeightedAffinityTerm[];
  readonly preferredAntiAffinityTerms: WeightedAffinityTerm[];
  constructor(pod: Pod) {
    this.pod = pod;
    this.key = podKey(pod);
    this.requests = podRequests(pod);
    this.nonZero = podNonZeroRequests(pod);
    this.scalarResources = Object.keys(this.requests.scalar).filter((k) => this.requests.scalar[k] !== 0);
    const a = pod.spec?.affinity;
    this.requiredAffinityTerms = (a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => compileTerm(pod, t));
    this.requiredAntiAffinityTerms = (a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => compileTerm(pod, t));
    this.preferredAffinityTerms = compileWeighted(pod, a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
    this.preferredAntiAffinityTerms = compileWeighted(pod, a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
  }
  get hasAffinity(): boolean {
    return this.requiredAffinityTerms.length + this.requiredAntiAffinityTerms.length
      + this.preferredAffinityTerms.length + this.preferredAntiAffinityTerms.length > 0;
  }
}

let generationCounter = 0;
/** A process-wide increasing counter: NodeInfo generations order changes across all nodes. */
export const nextGeneration = (): number => ++generationCounter;

/** A node plus the pods on it (bound and assumed) and their summed requests. */
export class NodeInfo {
  node: Node | undefined;
  pods: PodInfo[] = [];
  podsWithAffinity: PodInfo[] = [];
  podsWithRequiredAntiAffinity: PodInfo[] = [];
  requested: Resource = emptyResource();
  /** Requests with the scoring defaults for containers that request nothing. */
  nonZeroRequested: Resource = emptyResource();
  allocatable: Resource = emptyResource();
  /** hostIP/protocol/port triples in use, "0.0.0.0/TCP/80". */
  usedPorts = new Set<string>();
  generation = nextGeneration();

  constructor(node?: Node, ...pods: PodInfo[]) {
    if (node) this.setNode(node);
    for (const p of pods) this.addPod(p);
  }
  get name(): string { return this.node?.metadata.name ?? ''; }

  setNode(node: Node): void {
    this.node = node;
    this.allocatable = emptyResource();
    addResourceList(this.allocatable, node.status?.allocatable ?? node.status?.capacity);
    this.generation = nextGeneration();
  }

  addPod(pi: PodInfo): void {
    this.pods.push(pi);
    if (pi.hasAffinity) this.podsWithAffinity.push(pi);
    if (pi.requiredAntiAffinityTerms.length) this.podsWithRequiredAntiAffinity.push(pi);
    this.update(pi, 1);
    this.generation = nextGeneration();
  }

  /** Removes the pod with this key; false if it was not here. */
  removePod(key: string): boolean {
    const i = this.pods.findIndex((p) => p.key === key);
    if (i < 0) return false;
    const pi = this.pods[i]!;
    this.pods.splice(i, 1);
    this.podsWithAffinity = this.podsWithAffinity.filter((p) => p.key !== key);
    this.podsWithRequiredAntiAffinity = this.podsWithRequiredAntiAffinity.filter((p) => p.key !== key);
    this.update(pi, -1);
    this.generation = nextGeneration();
    return true;
  }

  private update(pi: PodInfo, sign: 1 | -1): void {
    const r = this.requested;
    r.milliCpu += sign * pi.requests.milliCpu;
    r.memory += sign * pi.requests.memory;
    r.ephemeralStorage += sign * pi.requests.ephemeralStorage;
    for (const [k, v] of Object.entries(pi.requests.scalar)) r.scalar[k] = (r.scalar[k] ?? 0) + sign * v;
    this.nonZeroRequested.milliCpu += sign * pi.nonZero.milliCpu;
    this.nonZeroRequested.memory += sign * pi.nonZero.memory;
    for (const c of pi.pod.spec?.containers ?? []) {
      for (const p of c.ports ?? []) {
        if (!p.hostPort) continue;
        const key = `${p.hostIP || '0.0.0.0'}/${p.protocol ?? 'TCP'}/${p.hostPort}`;
        if (sign > 0) this.usedPorts.add(key); else this.usedPorts.delete(key);
      }
    }
  }

  /** A copy whose pod lists and sums can change without touching this one (PodInfos are shared). */
  clone(): NodeInfo {
    const c = new NodeInfo();
    c.node = this.node;
    c.pods = [...this.pods];
    c.podsWithAffinity = [...this.podsWithAffinity];
    c.podsWithRequiredAntiAffinity = [...this.podsWithRequiredAntiAffinity];
    c.requested = cloneResource(this.requested);
    c.nonZeroRequested = cloneResource(this.nonZeroRequested);
    c.allocatable = cloneResource(this.allocatable);
    c.usedPorts = new Set(this.usedPorts);
    c.generation = this.generation;
    return c;
  }
}

/**
 * A consistent, read-only view of all nodes for one scheduling cycle (internal/cache.Snapshot).
 * Plugins read it from CycleState.snapshot; preemption builds modified copies with withNode. The
 * cache updates its own snapshot in place between cycles (set/remove), never during one.
 */
export class Snapshot {
  private readonly list: NodeInfo[];
  private readonly index = new Map<string, number>();
  private affinityList: NodeInfo[] | undefined;
  private antiAffinityList: NodeInfo[] | undefined;
  /** Pod indexes (pod-index.ts), built on first use and kept in step by set/remove. */
  private readonly counts = new Map<string, MatchCounts>();
  private readonly terms = new Map<ExistingTermKind, ExistingTerms>();
  private readonly topology: TopologyDomains;
  private round = 0;
  constructor(nodes: NodeInfo[]) {
    this.list = [...nodes];
    this.list.forEach((n, i) => this.index.set(n.name, i));
    this.topology = new TopologyDomains(this.list);
  }
  get nodeInfoList(): readonly NodeInfo[] { return this.list; }
  /** Nodes with at least one pod that has (anti-)affinity terms. */
  get havePodsWithAffinityList(): readonly NodeInfo[] {
    return (this.affinityList ??= this.list.filter((n) => n.podsWithAffinity.length > 0));
  }
  /** Nodes with at least one pod that has required anti-affinity terms. */
  get havePodsWithRequiredAntiAffinityList(): readonly NodeInfo[] {
    return (this.antiAffinityList ??= this.list.filter((n) => n.podsWithRequiredAntiAffinity.length > 0));
  }
  get(name: string): NodeInfo | undefined { const i = this.index.get(name); return i === undefined ? undefined : this.list[i]; }
  get numNodes(): number { return this.list.length; }

  /**
   * Pods matching m, per node and per topology pair. An indexable matcher (m.key set) is counted
   * with one scan the first time and kept up to date afterwards; others are counted afresh.
   * Valid until the snapshot next changes.
   */
  podCounts(m: PodMatcher): MatchCounts {
    if (m.key === undefined) return new MatchCounts(m, this.list);
    let mc = this.counts.get(m.key);
    if (mc) this.counts.delete(m.key); // re-inserted last: the Map's order is least recently used first
    else mc = new MatchCounts(m, this.list);
    this.counts.set(m.key, mc);
    mc.lastUsed = this.round;
    if (this.counts.size > MAX_MATCH_INDEXES) this.counts.delete(this.counts.keys().next().value!);
    return mc;
  }

  /** Matching pods per value of topologyKey (nodes without the label left out). Read-only. */
  pairCounts(mc: MatchCounts, topologyKey: string): PairCounts {
    return mc.pairs(topologyKey, (n) => this.get(n));
  }

  /** The (anti-)affinity terms of one kind that pods on these nodes carry, grouped by term. */
  existingTerms(kind: ExistingTermKind): ExistingTerms {
    let t = this.terms.get(kind);
    if (!t) { t = new ExistingTerms(kind, this.list); this.terms.set(kind, t); }
    return t;
  }

  /** value → number of nodes carrying topologyKey=value. Read-only. */
  domains(topologyKey: string): PairCounts { return this.topology.of(topologyKey); }

  /** A snapshot where the node of the same name is replaced by ni (its indexes start empty). */
  withNode(ni: NodeInfo): Snapshot {
    return new Snapshot(this.list.map((n) => (n.name === ni.name ? ni : n)));
  }
  /** @internal The cache's incremental update: adds or replaces a node. */
  set(ni: NodeInfo): void {
    const i = this.index.get(ni.name);
    const prev = i === undefined ? undefined : this.list[i];
    if (i === undefined) { this.index.set(ni.name, this.list.length); this.list.push(ni); } else this.list[i] = ni;
    this.invalidate(prev, ni);
    this.applyToIndexes(prev, ni);
  }
  /** @internal The cache's incremental update: drops a node (the last one takes its slot). */
  remove(name: string): void {
    const i = this.index.get(name);
    if (i === undefined) return;
    const prev = this.list[i]!;
    const last = this.list.pop()!;
    this.index.delete(name);
    if (last !== prev) { this.list[i] = last; this.index.set(last.name, i); }
    this.affinityList = undefined; this.antiAffinityList = undefined;
    this.applyToIndexes(prev, undefined);
  }
  /**
   * @internal Called by the cache after each update: drops match indexes no cycle asked for in a
   * while, so pods seen once do not cost every later update.
   */
  endUpdate(): void {
    this.round++;
    for (const [k, mc] of this.counts) if (this.round - mc.lastUsed > IDLE_ROUNDS_BEFORE_EVICTION) this.counts.delete(k);
  }
  private applyToIndexes(prev: NodeInfo | undefined, next: NodeInfo | undefined): void {
    if (prev === next || (!this.counts.size && !this.terms.size && !this.topology.active)) return;
    const d = nodeDelta(prev, next);
    for (const mc of this.counts.values()) mc.apply(d);
    for (const kind of EXISTING_TERM_KINDS) this.terms.get(kind)?.apply(d);
    this.topology.apply(d);
  }
  private invalidate(prev: NodeInfo | undefined, next: NodeInfo): void {
    if (this.affinityList && (prev?.podsWithAffinity.length ?? 0) + next.podsWithAffinity.length > 0) this.affinityList = undefined;
    if (this.antiAffinityList && (prev?.podsWithRequiredAntiAffinity.length ?? 0) + next.podsWithRequiredAntiAffinity.length > 0) this.antiAffinityList = undefined;
  }
}
/** Match indexes kept at most; beyond, the least recently used goes. */
const MAX_MATCH_INDEXES = 64;
/** Cache updates a match index may go unused before it is dropped. */
const IDLE_ROUNDS_BEFORE_EVICTION = 200;

/**
 * Per-cycle scratch space shared by a pod's plugins (framework.CycleState). Written by PreFilter /
 * PreScore, read by Filter / Score of the same plugin. Not shared across pods.
 */
export class CycleState {
  readonly snapshot: Snapshot;
  private readonly data = new Map<string, unknown>();
  /** Plugins whose PreFilter returned Skip: their Filter does not run this cycle. */
  readonly skipFilterPlugins = new Set<string>();
  /** Plugins whose PreScore returned Skip: their Score does not run this cycle. */
  readonly skipScorePlugins = new Set<string>();
  /** @internal The framework's per-cycle list of filter plugins not skipped (and the skip count it was made for). */
  activeFilterPlugins: unknown;
  activeFilterPluginsFor = -1;
  constructor(snapshot: Snapshot = new Snapshot([])) { this.snapshot = snapshot; }
  read<T>(key: string): T | undefined { return this.data.get(key) as T | undefined; }
  write(key: string, value: unknown): void { this.data.set(key, value); }
  /** A copy with another snapshot (preemption dry runs); plugin data is shared by reference. */
  withSnapshot(snapshot: Snapshot): CycleState {
    const c = new CycleState(snapshot);
    for (const [k, v] of this.data) c.data.set(k, v);
    for (const s of this.skipFilterPlugins) c.skipFilterPlugins.add(s);
    for (const s of this.skipScorePlugins) c.skipScorePlugins.add(s);
    return c;
  }
}
