/**
 * Node selector and toleration matching (component-helpers scheduling/corev1): the matching itself
 * lives once in @mk8s/api (the DaemonSet controller decides with it too); the scheduler adds the
 * pod-level wrappers and preferred-term scoring its plugins need.
 */
import { findUntoleratedTaint, nodeSelectorMatches, nodeSelectorTermMatches, podSpecMatchesNode, toleratesTaint, type PreferredSchedulingTerm, type Taint, type Toleration } from '@mk8s/api';
import type { Node, Pod } from '../../framework/types.js';

export { nodeSelectorMatches, nodeSelectorTermMatches, toleratesTaint };

/** spec.nodeSelector and required node affinity both hold (GetRequiredNodeAffinity(pod).Match). */
export function podMatchesNodeSelectorAndAffinity(pod: Pod, node: Node): boolean {
  return podSpecMatchesNode(pod.spec, node);
}

/** Sum of weights of preferred terms node matches. */
export function preferredSchedulingScore(terms: PreferredSchedulingTerm[] | undefined, node: Node): number {
  let s = 0;
  for (const t of terms ?? []) if (t.weight !== 0 && nodeSelectorTermMatches(t.preference, node)) s += t.weight;
  return s;
}

/** The first taint passing filter that no toleration tolerates (FindMatchingUntoleratedTaint). */
export function findMatchingUntoleratedTaint(taints: Taint[] | undefined, tolerations: Toleration[] | undefined,
  filter: (t: Taint) => boolean): Taint | undefined {
  return findUntoleratedTaint(taints, tolerations, filter);
}
