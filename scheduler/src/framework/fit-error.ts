/**
 * FitError: why a pod fits nowhere, in the exact form kubectl users know (framework.FitError.Error()):
 * "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. preemption: ..."
 */
import type { Status } from './status.js';

export const NO_NODES_AVAILABLE_MSG = 'no nodes available to schedule pods';

export interface Diagnosis {
  /** Each rejected node's status. */
  nodeStatuses: Map<string, Status>;
  /** Plugins that rejected the pod somewhere; decides which cluster events requeue it. */
  unschedulablePlugins: Set<string>;
  /** Set when PreFilter rejected the pod (then nodeStatuses repeat it for every node). */
  preFilterMsg: string;
  postFilterMsg: string;
}

export const newDiagnosis = (): Diagnosis => ({ nodeStatuses: new Map(), unschedulablePlugins: new Set(), preFilterMsg: '', postFilterMsg: '' });

export class FitError extends Error {
  readonly numAllNodes: number;
  readonly diagnosis: Diagnosis;
  constructor(numAllNodes: number, diagnosis: Diagnosis) {
    super(fitErrorMessage(numAllNodes, diagnosis));
    this.name = 'FitError';
    this.numAllNodes = numAllNodes;
    this.diagnosis = diagnosis;
  }
  /** Records PostFilter's (preemption's) message and refreshes the error message. */
  setPostFilterMsg(msg: string): void {
    this.diagnosis.postFilterMsg = msg;
    this.message = fitErrorMessage(this.numAllNodes, this.diagnosis);
  }
}

/** Reasons counted per node, "<count> <reason>" sorted as strings (upstream sorts the formatted strings). */
export function reasonsHistogram(statuses: Iterable<Status>): string[] {
  const counts = new Map<string, number>();
  for (const s of statuses) for (const r of s.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([r, n]) => `${n} ${r}`).sort(byGoString);
}

export function fitErrorMessage(numAllNodes: number, d: Diagnosis): string {
  let msg = `0/${numAllNodes} nodes are available:`;
  if (d.preFilterMsg) msg += ` ${d.preFilterMsg}.`;
  else {
    const h = reasonsHistogram(d.nodeStatuses.values());
    if (h.length) msg += ` ${h.join(', ')}.`;
  }
  if (d.postFilterMsg) msg += ` ${d.postFilterMsg}`;
  return msg;
}

/** Go's sort.Strings order: bytewise, not locale. */
export const byGoString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
