import type { FilterPlugin, PluginFactory } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { CycleState, NodeInfo, Pod } from '../../framework/types.js';

export const NAME = 'NodeName';
export const ERR_REASON = "node(s) didn't match the requested node name";

/** Fits reports whether pod may run on node, considering only spec.nodeName. */
export const fits = (pod: Pod, node: NodeInfo): boolean => !pod.spec?.nodeName || pod.spec.nodeName === node.name;

export class NodeName implements FilterPlugin {
  readonly name = NAME;
  filter(_s: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    return fits(pod, node) ? undefined : Status.unschedulableAndUnresolvable(ERR_REASON);
  }
}
export const create: PluginFactory = () => new NodeName();
