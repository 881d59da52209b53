import { Pods } from '@mk8s/api';
import type { BindPlugin, Handle, PluginFactory } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { CycleState, Pod } from '../../framework/types.js';

export const NAME = 'DefaultBinder';

/** Binds through the pods/binding subresource; the apiserver refuses a pod already bound. */
export class DefaultBinder implements BindPlugin {
  readonly name = NAME;
  constructor(private readonly h: Pick<Handle, 'client'>) {}
  async bind(_s: CycleState, pod: Pod, nodeName: string, signal: AbortSignal): Promise<Status | undefined> {
    if (!this.h.client) return Status.error(new Error('DefaultBinder needs a client'));
    const binding = {
      apiVersion: 'v1', kind: 'Binding',
      metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}) },
      target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    };
    try {
      await this.h.client.resource(Pods, pod.metadata.namespace ?? 'default').createSubresource(pod.metadata.name, 'binding', binding, { signal });
      return undefined;
    } catch (err) {
      return Status.error(err);
    }
  }
}
export const create: PluginFactory = (_args, h) => new DefaultBinder(h);
