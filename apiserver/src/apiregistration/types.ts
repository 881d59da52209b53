/**
 * apiregistration.k8s.io/v1 APIService: descriptor, fields, validation (upstream's
 * ValidateAPIService, in part). The status (Available) is the aggregator's.
 */
import { ALL_VERBS, field, type FieldError, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { RestStrategy } from '../registry/generic/strategy.js';

export const APIServices: ResourceDescriptor = {
  group: 'apiregistration.k8s.io', version: 'v1', kind: 'APIService', listKind: 'APIServiceList', resource: 'apiservices',
  singular: 'apiservice', namespaced: false, shortNames: [], categories: ['api-extensions'], verbs: ALL_VERBS, subresources: ['status'],
};

export interface APIServiceSpec {
  group?: string;
  version?: string;
  service?: { namespace: string; name: string; port?: number };
  caBundle?: string;
  insecureSkipTLSVerify?: boolean;
  groupPriorityMinimum: number;
  versionPriority: number;
}

export interface APIServiceCondition { type: string; status: 'True' | 'False' | 'Unknown'; lastTransitionTime?: string; reason?: string; message?: string }

export type APIService = KubeObject & { spec: APIServiceSpec; status?: { conditions?: APIServiceCondition[] } };

export function validateAPIService(a: APIService): FieldError[] {
  const errs: FieldError[] = [];
  const s = a.spec ?? ({} as APIServiceSpec);
  const want = s.group ? `${s.version}.${s.group}` : s.version;
  if (a.metadata.name !== want) errs.push(field.invalid('metadata.name', a.metadata.name, `must be ${want}`));
  if (!s.version) errs.push(field.required('spec.version'));
  if (s.service) {
    if (!s.service.namespace) errs.push(field.required('spec.service.namespace'));
    if (!s.service.name) errs.push(field.required('spec.service.name'));
    if (s.service.port !== undefined && (s.service.port < 1 || s.service.port > 65535)) errs.push(field.invalid('spec.service.port', s.service.port, 'port is not valid: must be between 1 and 65535, inclusive'));
    if (s.insecureSkipTLSVerify && s.caBundle) errs.push(field.invalid('spec.insecureSkipTLSVerify', s.insecureSkipTLSVerify, 'may not be true if caBundle is present'));
  }
  if (!(s.groupPriorityMinimum > 0 && s.groupPriorityMinimum <= 20000)) errs.push(field.invalid('spec.groupPriorityMinimum', s.groupPriorityMinimum, 'must be positive and less than 20000'));
  if (!(s.versionPriority > 0 && s.versionPriority <= 1000)) errs.push(field.invalid('spec.versionPriority', s.versionPriority, 'must be positive and less than 1000'));
  return errs;
}

export const apiServiceStrategy: RestStrategy = {
  resource: APIServices,
  statusSubresource: true,
  prepareForCreate: (obj) => { delete obj['status']; },
  validate: (obj) => validateAPIService(obj as APIService),
  validateUpdate: (obj) => validateAPIService(obj as APIService),
};
