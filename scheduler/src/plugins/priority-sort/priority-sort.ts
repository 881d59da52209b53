import type { PluginFactory, QueueSortPlugin, QueuedPodInfo } from '../../framework/interfaces.js';
import { podPriority } from '../../framework/types.js';

export const NAME = 'PrioritySort';

/** Orders the active queue: higher priority first, then earlier queue timestamp. */
export class PrioritySort implements QueueSortPlugin {
  readonly name = NAME;
  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
    const pa = podPriority(a.pod); const pb = podPriority(b.pod);
    return pa > pb || (pa === pb && a.timestamp < b.timestamp);
  }
}
export const create: PluginFactory = () => new PrioritySort();
