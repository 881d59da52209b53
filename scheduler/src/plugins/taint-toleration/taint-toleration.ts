import type { Toleration } from '@mk8s/api';
import type { FilterPlugin, NodeScore, PluginFactory, PreScorePlugin, ScorePlugin } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { CycleState, NodeInfo, Pod } from '../../framework/types.js';
import { findMatchingUntoleratedTaint, toleratesTaint } from '../helper/node-selector.js';
import { defaultNormalizeScore } from '../helper/normalize-score.js';

export const NAME = 'TaintToleration';
const STATE_KEY = `PreScore${NAME}`;

/**
 * Filter: the node has no NoSchedule/NoExecute taint the pod does not tolerate. Score: fewer
 * untolerated PreferNoSchedule taints is better.
 */
export class TaintToleration implements FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = NAME;
  filter(_s: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const node = nodeInfo.node;
    if (!node) return Status.error(new Error('invalid nodeInfo'));
    const taint = findMatchingUntoleratedTaint(node.spec?.taints, pod.spec?.tolerations,
      (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
    if (!taint) return undefined;
    return Status.unschedulableAndUnresolvable(`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`);
  }
  preScore(state: CycleState, pod: Pod): Status | undefined {
    state.write(STATE_KEY, (pod.spec?.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule'));
    return undefined;
  }
  score(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): number {
    const tolerations = state.read<Toleration[]>(STATE_KEY) ?? [];
    let n = 0;
    for (const taint of nodeInfo.node?.spec?.taints ?? []) {
      if (taint.effect !== 'PreferNoSchedule') continue;
      if (!tolerations.some((t) => toleratesTaint(t, taint))) n++;
    }
    return n;
  }
  normalizeScore(_s: CycleState, _pod: Pod, scores: NodeScore[]): void { defaultNormalizeScore(scores, true); }
}
export const create: PluginFactory = () => new TaintToleration();
