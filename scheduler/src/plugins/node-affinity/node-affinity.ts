import type { FilterPlugin, NodeScore, PluginFactory, PreScorePlugin, ScorePlugin } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { CycleState, NodeInfo, Pod } from '../../framework/types.js';
import { podMatchesNodeSelectorAndAffinity, preferredSchedulingScore } from '../helper/node-selector.js';
import { defaultNormalizeScore } from '../helper/normalize-score.js';

export const NAME = 'NodeAffinity';
export const ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector";

/**
 * Filter: spec.nodeSelector and requiredDuringScheduling node affinity (In, NotIn, Exists,
 * DoesNotExist, Gt, Lt; matchFields metadata.name). Score: sum of matching preferred term weights.
 */
export class NodeAffinity implements FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = NAME;
  filter(_s: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const node = nodeInfo.node;
    if (!node) return Status.error(new Error('node not found'));
    return podMatchesNodeSelectorAndAffinity(pod, node) ? undefined : Status.unschedulableAndUnresolvable(ERR_REASON_POD);
  }
  preScore(_s: CycleState, pod: Pod): Status | undefined {
    const pref = pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
    return pref?.length ? undefined : Status.skip();
  }
  score(_s: CycleState, pod: Pod, nodeInfo: NodeInfo): number {
    if (!nodeInfo.node) return 0;
    return preferredSchedulingScore(pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution, nodeInfo.node);
  }
  normalizeScore(_s: CycleState, _pod: Pod, scores: NodeScore[]): void { defaultNormalizeScore(scores, false); }
}
export const create: PluginFactory = () => new NodeAffinity();
