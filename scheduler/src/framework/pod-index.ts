/**
 * Indexes a Snapshot keeps so that InterPodAffinity and PodTopologySpread do not scan every pod
 * of the cluster in each PreFilter/PreScore. Upstream computes the same counts afresh each cycle
 * with 16 goroutines over all nodes; one event loop cannot, so the counts are built once (a full
 * scan, the first time a matcher is asked for) and then kept up to date from the per-node
 * changes the cache applies to the snapshot between cycles (usually one or two nodes).
 *
 * Three kinds:
 * - MatchCounts: pods matching one PodMatcher (a term of the incoming pod, a spread selector),
 *   per node and per topology pair (key → value → count).
 * - ExistingTerms: the (anti-)affinity terms existing pods carry, grouped by identical term, with
 *   the topology pairs of the nodes those pods run on: the incoming pod is matched once per
 *   distinct term instead of once per pod.
 * - TopologyDomains: per topology key, the values nodes carry (and how many nodes carry each).
 *
 * Everything here is read-only to plugins and valid for the snapshot's current state only: maps
 * handed out change at the next cache update, so a plugin must not keep them across cycles.
 */
import type { AffinityTerm, NodeInfo, PodInfo, WeightedAffinityTerm } from './types.js';

/** Which pods a MatchCounts counts. */
export interface PodMatcher {
  /**
   * Names the matcher across cycles: two matchers with the same key must match the same pods
   * whatever else changes (namespace labels included). undefined: not indexable, counted afresh.
   */
  readonly key: string | undefined;
  matches(pi: PodInfo): boolean;
}

/** value → count; entries are never 0. */
export type PairCounts = Map<string, number>;

function add(m: Map<string, number>, k: string, by: number): void {
  const n = (m.get(k) ?? 0) + by;
  if (n === 0) m.delete(k); else m.set(k, n);
}

/** The pods a node change added and removed (PodInfos are shared between NodeInfo clones). */
export interface NodeDelta {
  prev: NodeInfo | undefined;
  next: NodeInfo | undefined;
  added: readonly PodInfo[];
  removed: readonly PodInfo[];
  /** True when the node's labels changed (or it appeared or went). */
  relabeled: boolean;
}

export function nodeDelta(prev: NodeInfo | undefined, next: NodeInfo | undefined): NodeDelta {
  const before = new Set(prev?.pods ?? []);
  const added: PodInfo[] = [];
  for (const p of next?.pods ?? []) if (!before.delete(p)) added.push(p);
  const pl = prev?.node?.metadata.labels; const nl = next?.node?.metadata.labels;
  return { prev, next, added, removed: [...before], relabeled: !prev?.node || !next?.node || (pl !== nl && !sameLabels(pl, nl)) };
}

function sameLabels(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const ak = Object.keys(a ?? {}); const bk = Object.keys(b ?? {});
  return ak.length === bk.length && ak.every((k) => a![k] === b?.[k]);
}

const labelOf = (ni: NodeInfo | undefined, key: string): string | undefined => ni?.node?.metadata.labels?.[key];

/** Pods matching one matcher, per node and per topology pair. */
export class MatchCounts {
  /** Matching pods per node name; nodes with none are absent. */
  private readonly perNode = new Map<string, number>();
  private readonly byKey = new Map<string, PairCounts>();
  /** The snapshot round this index was last asked for (for eviction). */
  lastUsed = 0;

  constructor(readonly matcher: PodMatcher, nodes: readonly NodeInfo[]) {
    for (const ni of nodes) {
      let n = 0;
      for (const p of ni.pods) if (matcher.matches(p)) n++;
      if (n) this.perNode.set(ni.name, n);
    }
  }

  /** Matching pods on the node with this name. */
  countOn(nodeName: string): number { return this.perNode.get(nodeName) ?? 0; }

  /** Matching pods per value of topologyKey, over nodes that carry the label. Read-only. */
  pairs(topologyKey: string, byName: (name: string) => NodeInfo | undefined): PairCounts {
    let m = this.byKey.get(topologyKey);
    if (!m) {
      m = new Map();
      for (const [name, n] of this.perNode) {
        const v = labelOf(byName(name), topologyKey);
        if (v !== undefined) add(m, v, n);
      }
      this.byKey.set(topologyKey, m);
    }
    return m;
  }

  /** Applies one node's change (the cache's snapshot update). */
  apply(d: NodeDelta): void {
    const name = (d.next ?? d.prev)!.name;
    const before = this.perNode.get(name) ?? 0;
    let after = before;
    if (!d.next) after = 0;
    else {
      for (const p of d.added) if (this.matcher.matches(p)) after++;
      for (const p of d.removed) if (this.matcher.matches(p)) after--;
    }
    if (after === before && !d.relabeled) return;
    if (after) this.perNode.set(name, after); else this.perNode.delete(name);
    for (const [key, m] of this.byKey) {
      const pv = labelOf(d.prev, key); const nv = labelOf(d.next, key);
      if (pv !== undefined && before) add(m, pv, -before);
      if (nv !== undefined && after) add(m, nv, after);
    }
  }
}

export type ExistingTermKind = 'requiredAffinity' | 'requiredAntiAffinity' | 'preferredAffinity' | 'preferredAntiAffinity';
export const EXISTING_TERM_KINDS: readonly ExistingTermKind[] = ['requiredAffinity', 'requiredAntiAffinity', 'preferredAffinity', 'preferredAntiAffinity'];

/** Identical terms carried by existing pods, and where those pods run. */
export interface TermGroup {
  /** One of the identical terms (they differ only in which pod carries them). */
  readonly term: AffinityTerm;
  /** The term's weight (preferred terms), 0 for required ones. */
  readonly weight: number;
  /** Pods carrying the term per value of term.topologyKey (nodes with the label only). */
  readonly pairs: PairCounts;
  /** Pods carrying the term, wherever they run. */
  pods: number;
}

const termsOf = (pi: PodInfo, kind: ExistingTermKind): readonly (AffinityTerm | WeightedAffinityTerm)[] =>
  kind === 'requiredAffinity' ? pi.requiredAffinityTerms
    : kind === 'requiredAntiAffinity' ? pi.requiredAntiAffinityTerms
      : kind === 'preferredAffinity' ? pi.preferredAffinityTerms : pi.preferredAntiAffinityTerms;

/** The terms of one kind that existing pods carry, grouped. */
export class ExistingTerms {
  readonly groups = new Map<string, TermGroup>();
  constructor(private readonly kind: ExistingTermKind, nodes: readonly NodeInfo[]) {
    for (const ni of nodes) for (const p of ni.podsWithAffinity) this.count(p, ni, 1);
  }

  private count(pi: PodInfo, ni: NodeInfo | undefined, by: 1 | -1): void {
    for (const t of termsOf(pi, this.kind)) {
      const weight = 'weight' in t ? t.weight : 0;
      const gk = weight ? `${weight}|${t.key}` : t.key;
      let g = this.groups.get(gk);
      if (!g) { g = { term: t, weight, pairs: new Map(), pods: 0 }; this.groups.set(gk, g); }
      g.pods += by;
      const v = labelOf(ni, t.topologyKey);
      if (v !== undefined) add(g.pairs, v, by);
      if (g.pods === 0) this.groups.delete(gk);
    }
  }

  apply(d: NodeDelta): void {
    if (d.relabeled) {
      // Every pod with terms moves to other pairs: take all of prev out, put all of next in.
      for (const p of d.prev?.podsWithAffinity ?? []) this.count(p, d.prev, -1);
      for (const p of d.next?.podsWithAffinity ?? []) this.count(p, d.next, 1);
      return;
    }
    for (const p of d.removed) if (p.hasAffinity) this.count(p, d.prev, -1);
    for (const p of d.added) if (p.hasAffinity) this.count(p, d.next, 1);
  }
}

/** Per topology key, the values nodes carry and how many nodes carry each. */
export class TopologyDomains {
  private readonly byKey = new Map<string, PairCounts>();
  constructor(private readonly nodes: readonly NodeInfo[]) {}
  /** Whether any key is indexed (so node changes need applying). */
  get active(): boolean { return this.byKey.size > 0; }

  /** value → number of nodes with that label value. Read-only. */
  of(key: string): PairCounts {
    let m = this.byKey.get(key);
    if (!m) {
      m = new Map();
      for (const ni of this.nodes) { const v = labelOf(ni, key); if (v !== undefined) add(m, v, 1); }
      this.byKey.set(key, m);
    }
    return m;
  }

  apply(d: NodeDelta): void {
    if (!d.relabeled) return;
    for (const [key, m] of this.byKey) {
      const pv = labelOf(d.prev, key); const nv = labelOf(d.next, key);
      if (pv !== undefined) add(m, pv, -1);
      if (nv !== undefined) add(m, nv, 1);
    }
  }
}
