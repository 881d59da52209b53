import { StatefulSets, type KubeObject } from '@mk8s/api';
import { defaultFeatureGate, type FeatureGate } from '@mk8s/component-base';
import type { RestStrategy } from '../../generic/strategy.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;

const maxUnavailableInUse = (sts: KubeObject | undefined): boolean =>
  (sts as Loose | undefined)?.['spec']?.updateStrategy?.rollingUpdate?.maxUnavailable != null;

/**
 * Upstream dropStatefulSetDisabledFields: with MaxUnavailableStatefulSet off (1.32's default),
 * spec.updateStrategy.rollingUpdate.maxUnavailable is dropped on create, and on update unless the
 * stored object already has it. Mutates next.
 */
export function dropStatefulSetDisabledFields(next: KubeObject, prev: KubeObject | undefined, gates: FeatureGate = defaultFeatureGate): void {
  if (gates.enabled('MaxUnavailableStatefulSet') || maxUnavailableInUse(prev)) return;
  const ru = (next as Loose)['spec']?.updateStrategy?.rollingUpdate as Loose | undefined;
  if (ru && typeof ru === 'object') delete ru['maxUnavailable'];
}

export const statefulSetStrategy: RestStrategy = {
  resource: StatefulSets,
  tracksGeneration: true,
  prepareForCreate(sts) {
    sts['status'] = { replicas: 0, availableReplicas: 0 };
    dropStatefulSetDisabledFields(sts, undefined);
  },
  prepareForUpdate(next, prev) {
    dropStatefulSetDisabledFields(next, prev);
  },
};
