import { PodDisruptionBudgets } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

export const podDisruptionBudgetStrategy: RestStrategy = {
  resource: PodDisruptionBudgets,
  tracksGeneration: true,
  prepareForCreate(pdb) {
    pdb['status'] = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  },
};
