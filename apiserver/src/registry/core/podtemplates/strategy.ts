import { isDeepStrictEqual } from 'node:util';
import { PodTemplates } from '@mk8s/api';
import { metaOf, type RestStrategy } from '../../generic/strategy.js';

/** podTemplateStrategy: no status; generation 1 on create, bumped when the template changes (upstream since 1.20). */
export const podTemplateStrategy: RestStrategy = {
  resource: PodTemplates,
  tracksGeneration: true,
  prepareForUpdate(next, prev) {
    if (!isDeepStrictEqual(next['template'], prev['template'])) metaOf(next).generation = (prev.metadata.generation ?? 0) + 1;
  },
};
