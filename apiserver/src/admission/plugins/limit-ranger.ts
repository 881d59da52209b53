/**
 * LimitRanger (upstream plugin/pkg/admission/limitranger): on pod create, containers that leave a
 * request or limit out get the namespace's LimitRange defaults (noted in the
 * `kubernetes.io/limit-ranger` annotation); then every Container and Pod min/max/ratio must hold,
 * or the create is refused with 403 in upstream's words. Pod updates are not checked (container
 * resources cannot change), as upstream.
 */
import { applyLimitRangeDefaults, qualifiedResource, validatePodLimits, type KubeObject } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import { forbidden } from './namespace-lifecycle.js';

export const NAME = 'LimitRanger';
export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

export interface LimitRangerOptions {
  /** The namespace's LimitRanges (the watch cache will do). */
  listLimitRanges(namespace: string): Promise<KubeObject[]>;
}

const isPodCreate = (a: AdmissionAttributes): boolean =>
  a.operation === 'CREATE' && a.subresource === '' && a.resource.group === '' && a.resource.resource === 'pods' && !!a.object && !!a.namespace;

export class LimitRanger implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly o: LimitRangerOptions) {}

  handles(op: AdmissionOperation): boolean { return op === 'CREATE'; }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPodCreate(a)) return;
    const lrs = await this.o.listLimitRanges(a.namespace);
    if (lrs.length === 0) return;
    const note = applyLimitRangeDefaults(a.object!, lrs);
    if (note) a.object!.metadata.annotations = { ...(a.object!.metadata.annotations ?? {}), [LIMIT_RANGER_ANNOTATION]: note };
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPodCreate(a)) return;
    const lrs = await this.o.listLimitRanges(a.namespace);
    if (lrs.length === 0) return;
    const errs = [...new Set(validatePodLimits(a.object!, lrs))];
    if (errs.length === 0) return;
    throw forbidden(qualifiedResource(a.resource), a.name || a.object!.metadata.name || '', errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
  }
}
