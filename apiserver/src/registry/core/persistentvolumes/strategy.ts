import { PersistentVolumes } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/**
 * PersistentVolumes (upstream pkg/registry/core/persistentvolume): cluster-scoped; status (phase,
 * reason) only through /status, where the binder writes it. A new PV starts Pending; the binder
 * makes it Available or Bound.
 */
export const persistentVolumeStrategy: RestStrategy = {
  resource: PersistentVolumes,
  tracksGeneration: false,
  prepareForCreate(pv, ctx) {
    pv['status'] = { phase: 'Pending', lastPhaseTransitionTime: ctx.now.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  },
  prepareForStatusUpdate(next, prev, ctx) {
    // lastPhaseTransitionTime follows the phase (PersistentVolumeLastPhaseTransitionTime, GA in 1.31).
    const n = (next['status'] ?? {}) as Record<string, unknown>;
    const p = (prev['status'] ?? {}) as Record<string, unknown>;
    if (n['phase'] !== p['phase']) n['lastPhaseTransitionTime'] = ctx.now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  },
};
