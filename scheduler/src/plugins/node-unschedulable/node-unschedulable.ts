import type { FilterPlugin, PluginFactory } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { CycleState, NodeInfo, Pod } from '../../framework/types.js';
import { toleratesTaint } from '../helper/node-selector.js';

export const NAME = 'NodeUnschedulable';
export const ERR_REASON_UNKNOWN_CONDITION = 'node(s) had unknown conditions';
export const ERR_REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/** Rejects cordoned nodes (spec.unschedulable) unless the pod tolerates the unschedulable taint. */
export class NodeUnschedulable implements FilterPlugin {
  readonly name = NAME;
  filter(_s: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const node = nodeInfo.node;
    if (!node) return Status.unschedulableAndUnresolvable(ERR_REASON_UNKNOWN_CONDITION);
    if (!node.spec?.unschedulable) return undefined;
    const taint = { key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' };
    if ((pod.spec?.tolerations ?? []).some((t) => toleratesTaint(t, taint))) return undefined;
    return Status.unschedulableAndUnresolvable(ERR_REASON_UNSCHEDULABLE);
  }
}
export const create: PluginFactory = () => new NodeUnschedulable();
