import { isDeepStrictEqual } from 'node:util';
import { DaemonSets, type KubeObject } from '@mk8s/api';
import { metaOf, type RestStrategy } from '../../generic/strategy.js';

/** The annotation apps/v1 carries the internal spec.templateGeneration in (upstream's conversion). */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

const templateOf = (o: KubeObject): unknown => (o['spec'] as { template?: unknown } | undefined)?.template;

export const daemonSetStrategy: RestStrategy = {
  resource: DaemonSets,
  tracksGeneration: true,
  prepareForCreate(ds) {
    ds['status'] = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
    metaOf(ds).annotations = { ...(ds.metadata.annotations ?? {}), [TEMPLATE_GENERATION_ANNOTATION]: '1' };
  },
  prepareForUpdate(next, prev) {
    // templateGeneration counts template changes only (the generation counts every spec change).
    const prevGen = Number(prev.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION] ?? '1') || 1;
    const gen = isDeepStrictEqual(templateOf(next), templateOf(prev)) ? prevGen : prevGen + 1;
    metaOf(next).annotations = { ...(next.metadata.annotations ?? {}), [TEMPLATE_GENERATION_ANNOTATION]: String(gen) };
  },
};
