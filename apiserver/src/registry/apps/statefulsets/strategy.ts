import { StatefulSets } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

export const statefulSetStrategy: RestStrategy = {
  resource: StatefulSets,
  tracksGeneration: true,
  prepareForCreate(sts) {
    sts['status'] = { replicas: 0, availableReplicas: 0 };
  },
};
