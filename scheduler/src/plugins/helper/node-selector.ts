/**
 * Node selector and toleration matching (component-helpers scheduling/corev1).
 */
import type { NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm, Taint, Toleration } from '@mk8s/api';
import type { Node, Pod } from '../../framework/types.js';

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined, present: boolean): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': return present && values.includes(value as string);
    case 'NotIn': return !present || !values.includes(value as string);
    case 'Exists': return present;
    case 'DoesNotExist': return !present;
    case 'Gt':
    case 'Lt': {
      if (!present || values.length !== 1) return false;
      const want = Number.parseInt(values[0]!, 10);
      const have = Number.parseInt(value as string, 10);
      if (!/^-?\d+$/.test(values[0]!) || !/^-?\d+$/.test(value as string)) return false;
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default: return false;
  }
}

/** A term matches if all its expressions and fields match; an empty term matches nothing. */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  for (const r of exprs) if (!requirementMatches(r, labels[r.key], Object.prototype.hasOwnProperty.call(labels, r.key))) return false;
  for (const r of fields) {
    // Only metadata.name is a supported field (validation rejects others).
    if (r.key !== 'metadata.name') return false;
    if (!requirementMatches(r, node.metadata.name, true)) return false;
  }
  return true;
}

/** The terms are ORed (nodeSelectorTerms). */
export function nodeSelectorMatches(sel: NodeSelector, node: Node): boolean {
  return sel.nodeSelectorTerms.some((t) => nodeSelectorTermMatches(t, node));
}

/** spec.nodeSelector and required node affinity both hold (GetRequiredNodeAffinity(pod).Match). */
export function podMatchesNodeSelectorAndAffinity(pod: Pod, node: Node): boolean {
  const ns = pod.spec?.nodeSelector;
  if (ns) {
    const labels = node.metadata.labels ?? {};
    for (const [k, v] of Object.entries(ns)) if (labels[k] !== v) return false;
  }
  const req = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return !req || nodeSelectorMatches(req, node);
}

/** Sum of weights of preferred terms node matches. */
export function preferredSchedulingScore(terms: PreferredSchedulingTerm[] | undefined, node: Node): number {
  let s = 0;
  for (const t of terms ?? []) if (t.weight !== 0 && nodeSelectorTermMatches(t.preference, node)) s += t.weight;
  return s;
}

/** Toleration.ToleratesTaint. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists': return true;
    case 'Equal': return (t.value ?? '') === (taint.value ?? '');
    default: return false;
  }
}

/** The first taint passing filter that no toleration tolerates. */
export function findMatchingUntoleratedTaint(taints: Taint[] | undefined, tolerations: Toleration[] | undefined,
  filter: (t: Taint) => boolean): Taint | undefined {
  for (const taint of taints ?? []) {
    if (!filter(taint)) continue;
    if (!(tolerations ?? []).some((t) => toleratesTaint(t, taint))) return taint;
  }
  return undefined;
}
