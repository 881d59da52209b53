/**
 * The /scale subresource (autoscaling/v1 Scale) for resources with spec.replicas and
 * spec.selector (deployments, replicasets).
 */
import { ApiError, errors, labelSelectorFromSet, selectorToString, type KubeObject } from '@mk8s/api';

type Obj = Record<string, unknown>;

/**
 * Builds the Scale view of obj (status.selector as a label-selector string). ReplicationControllers'
 * spec.selector is a plain label map (setSelector), the apps/v1 kinds' a LabelSelector.
 */
export function scaleOf(obj: KubeObject, o: { setSelector?: boolean } = {}): KubeObject {
  const spec = (obj['spec'] ?? {}) as Obj;
  const status = (obj['status'] ?? {}) as Obj;
  const m = obj.metadata;
  let selector = '';
  try {
    selector = o.setSelector ? labelSelectorFromSet(spec['selector'] as Record<string, string> | undefined).toString()
      : selectorToString(spec['selector'] as never);
  } catch { selector = ''; }
  const metadata: Record<string, unknown> = { name: m.name };
  if (m.namespace !== undefined) metadata.namespace = m.namespace;
  if (m.uid !== undefined) metadata.uid = m.uid;
  if (m.resourceVersion !== undefined) metadata.resourceVersion = m.resourceVersion;
  if (m.creationTimestamp !== undefined) metadata.creationTimestamp = m.creationTimestamp;
  return {
    kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: metadata as unknown as KubeObject["metadata"],
    spec: { replicas: typeof spec['replicas'] === 'number' ? spec['replicas'] : 1 },
    status: { replicas: typeof status['replicas'] === 'number' ? status['replicas'] : 0, selector },
  };
}

/**
 * Validates a desired Scale and returns spec.replicas. metadata.resourceVersion, when set, is a
 * precondition checked by the caller's update.
 */
export function desiredReplicas(scale: unknown, name: string): number {
  const s = (scale ?? {}) as { kind?: string; apiVersion?: string; metadata?: Obj; spec?: Obj };
  if (s.metadata?.['name'] !== undefined && s.metadata['name'] !== name) {
    throw new ApiError('BadRequest', `the name of the object (${String(s.metadata['name'])}) does not match the name on the URL (${name})`);
  }
  const replicas = s.spec?.['replicas'];
  if (replicas === undefined) return 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw errors.invalid('Scale', 'autoscaling', name, [{ reason: 'FieldValueInvalid', field: 'spec.replicas',
      message: `spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]);
  }
  return replicas;
}
