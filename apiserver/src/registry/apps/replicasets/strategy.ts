import { ReplicaSets } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

export const replicaSetStrategy: RestStrategy = {
  resource: ReplicaSets,
  tracksGeneration: true,
  prepareForCreate(rs) {
    rs['status'] = { replicas: 0 };
  },
};
