/**
 * pods/binding (the scheduler's write); pods/eviction lives in eviction.ts.
 */
import { ApiError, type KubeObject } from '@mk8s/api';
import type { RequestContext, Store } from '../../generic/store.js';

type Obj = Record<string, unknown>;

/**
 * Binds a pod to a node: sets spec.nodeName if unset (409 Conflict otherwise) and the
 * PodScheduled condition, as upstream's BindingREST.
 */
export async function bindPod(store: Store, rc: RequestContext, namespace: string, name: string, binding: Obj, now: Date): Promise<KubeObject> {
  const meta = (binding['metadata'] ?? {}) as Obj;
  if (meta['name'] !== undefined && meta['name'] !== name) {
    throw new ApiError('BadRequest', `the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
  }
  const target = (binding['target'] ?? {}) as Obj;
  const nodeName = target['name'];
  if (typeof nodeName !== 'string' || nodeName === '') {
    throw new ApiError('Invalid', `Binding.meta.k8s.io "${name}" is invalid: target.name: Required value`, {
      details: { name, kind: 'Binding', causes: [{ reason: 'FieldValueRequired', field: 'target.name', message: 'target.name: Required value' }] },
    });
  }
  const apply = (pod: KubeObject): KubeObject => {
    const spec = (pod['spec'] ?? {}) as Obj;
    if (pod.metadata.deletionTimestamp) {
      throw new ApiError('Conflict', `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is being deleted, cannot be assigned to a host`,
        { details: { name, kind: 'pods/binding' } });
    }
    if (spec['nodeName']) {
      throw new ApiError('Conflict', `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${String(spec['nodeName'])}"`,
        { details: { name, kind: 'pods/binding' } });
    }
    const uid = (meta['uid'] as string | undefined);
    if (uid && uid !== pod.metadata.uid) {
      throw new ApiError('Conflict', `Operation cannot be fulfilled on pods/binding "${name}": Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.metadata.uid ?? ''}`,
        { details: { name, kind: 'pods/binding' } });
    }
    pod['spec'] = { ...spec, nodeName };
    const annotations = meta['annotations'] as Record<string, string> | undefined;
    if (annotations) pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...annotations };
    const status = (pod['status'] ?? {}) as Obj;
    const conditions = ((status['conditions'] ?? []) as Obj[]).filter((c) => c['type'] !== 'PodScheduled');
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z') });
    pod['status'] = { ...status, conditions };
    return pod;
  };
  if (rc.dryRun) return apply(await store.get(namespace, name));
  return store.mutate(namespace, name, apply);
}
