/**
 * Node selector, node affinity and taint/toleration matching (component-helpers
 * scheduling/corev1 and nodeaffinity), for code outside the scheduler that must decide whether a
 * pod fits a node: the DaemonSet controller's NodeShouldRunDaemonPod.
 */
import type { Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec, Taint, Toleration } from '../types.js';

type NodeLike = { metadata?: { name?: string; labels?: Record<string, string> } } | Node;

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined, present: boolean): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': return present && values.includes(value as string);
    case 'NotIn': return !present || !values.includes(value as string);
    case 'Exists': return present;
    case 'DoesNotExist': return !present;
    case 'Gt': case 'Lt': {
      if (!present || values.length !== 1 || !/^-?\d+$/.test(values[0]!) || !/^-?\d+$/.test(value as string)) return false;
      const want = Number.parseInt(values[0]!, 10), have = Number.parseInt(value as string, 10);
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default: return false;
  }
}

/** A term matches when all its expressions and fields (only metadata.name) match; an empty term matches nothing. */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: NodeLike): boolean {
  const exprs = term.matchExpressions ?? [], fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  for (const r of exprs) if (!requirementMatches(r, labels[r.key], Object.prototype.hasOwnProperty.call(labels, r.key))) return false;
  for (const r of fields) if (r.key !== 'metadata.name' || !requirementMatches(r, node.metadata?.name, true)) return false;
  return true;
}

/** nodeSelectorTerms are ORed. */
export function nodeSelectorMatches(sel: NodeSelector, node: NodeLike): boolean {
  return (sel.nodeSelectorTerms ?? []).some((t) => nodeSelectorTermMatches(t, node));
}

/** GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector and the required node affinity. */
export function podSpecMatchesNode(spec: PodSpec | undefined, node: NodeLike): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const req = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return !req || nodeSelectorMatches(req, node);
}

/** ToleratesTaint. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists': return true;
    case 'Equal': return (t.value ?? '') === (taint.value ?? '');
    default: return false;
  }
}

/** FindMatchingUntoleratedTaint: the first taint passing filter that no toleration tolerates. */
export function findUntoleratedTaint(taints: readonly Taint[] | undefined, tolerations: readonly Toleration[] | undefined, filter: (t: Taint) => boolean): Taint | undefined {
  for (const taint of taints ?? []) {
    if (filter(taint) && !(tolerations ?? []).some((t) => toleratesTaint(t, taint))) return taint;
  }
  return undefined;
}

/** AddOrUpdateDaemonPodTolerations: what every daemon pod tolerates, so node conditions do not evict it. */
export function daemonPodTolerations(spec: PodSpec): Toleration[] {
  const add: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec.hostNetwork) add.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  const out = structuredClone((spec.tolerations ?? []) as Toleration[]);
  for (const t of add) {
    // AddOrUpdateTolerationInPodSpec: one with the same key/operator/value/effect is replaced.
    const i = out.findIndex((o) => o.key === t.key && (o.operator ?? 'Equal') === t.operator && (o.value ?? '') === '' && o.effect === t.effect);
    if (i >= 0) out[i] = t; else out.push(t);
  }
  return out;
}

/** Why a node does not get (or keep) the daemon pod; undefined when it should run there. */
export type NodeUnfitReason = { reason: 'NodeName' | 'NodeAffinity' | 'Taint'; message: string };

/**
 * NodeShouldRunDaemonPod: shouldRun (a pod should be created there) and shouldContinueRunning (an
 * existing one may stay: a NoSchedule taint added later keeps it; an untolerated NoExecute does not).
 */
export interface DaemonPodFit { shouldRun: boolean; shouldContinueRunning: boolean; unfit?: NodeUnfitReason }

export function daemonPodFitsNode(templateSpec: PodSpec | undefined, node: NodeLike): DaemonPodFit {
  const spec = templateSpec ?? { containers: [] };
  if (spec.nodeName && spec.nodeName !== node.metadata?.name) {
    return { shouldRun: false, shouldContinueRunning: false, unfit: { reason: 'NodeName', message: `the template's nodeName is ${spec.nodeName}` } };
  }
  if (!podSpecMatchesNode(spec, node)) {
    return { shouldRun: false, shouldContinueRunning: false, unfit: { reason: 'NodeAffinity', message: "node(s) didn't match Pod's node affinity/selector" } };
  }
  const tolerations = daemonPodTolerations(spec);
  const taints = ('spec' in node ? node.spec?.taints : undefined) ?? [];
  const blocking = findUntoleratedTaint(taints, tolerations, (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
  if (blocking) {
    const noExecute = findUntoleratedTaint(taints, tolerations, (t) => t.effect === 'NoExecute');
    return { shouldRun: false, shouldContinueRunning: !noExecute, unfit: { reason: 'Taint', message: `node(s) had untolerated taint {${blocking.key}: ${blocking.value ?? ''}}` } };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

