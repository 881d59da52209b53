import { isDeepStrictEqual } from 'node:util';
import { Deployments } from '@mk8s/api';
import { metaOf, type RestStrategy } from '../../generic/strategy.js';

export const deploymentStrategy: RestStrategy = {
  resource: Deployments,
  tracksGeneration: true,
  prepareForCreate(d) {
    d['status'] = {};
  },
  prepareForUpdate(next, prev) {
    // Annotations are copied to ReplicaSets, so changing them is a new generation too (upstream).
    if (!isDeepStrictEqual(next.metadata.annotations ?? {}, prev.metadata.annotations ?? {})) {
      metaOf(next).generation = (prev.metadata.generation ?? 0) + 1;
    }
  },
};
