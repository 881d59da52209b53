import { PersistentVolumeClaims } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/**
 * PersistentVolumeClaims (upstream pkg/registry/core/persistentvolumeclaim): status (phase,
 * capacity, accessModes) only through /status; a new claim starts Pending.
 */
export const persistentVolumeClaimStrategy: RestStrategy = {
  resource: PersistentVolumeClaims,
  tracksGeneration: false,
  prepareForCreate(pvc) {
    pvc['status'] = { phase: 'Pending' };
  },
};
