/**
 * validateObject: the one entry point the apiserver calls after defaulting, per resource, on
 * create (old undefined) and update. Returns field errors; invalidError turns them into the 422
 * Status upstream sends.
 */
import { ApiError } from '../errors.js';
import type { ResourceDescriptor } from '../scheme.js';
import type { StatusCause } from '../types.js';
import { aggregateMessage, type FieldError } from './field.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './meta.js';
import { nameIsDNS1035Label, nameIsDNSLabel, nameIsDNSSubdomain, pathSegmentName, type NameValidator } from './names.js';
import { validatePodSpec, validatePodUpdate } from './pod.js';
import {
  validateConfigMapData, validateConfigMapUpdate, validateEndpointSliceFields, validateEndpointsSubsets, validateEventFields,
  validateNamespaceSpec, validateNodeSpec, validateNodeUpdate, validateSecretData, validateSecretUpdate, validateServiceSpec,
  validateServiceUpdate, type ServiceValidationOptions,
} from './core.js';
import { rbacName, validateClusterRole, validateClusterRoleBinding, validateRole, validateRoleBinding, validateRoleRefUpdate } from './rbac.js';
import { validateCronJob, validateJob, validateJobUpdate } from './batch.js';
import { validatePersistentVolume, validatePersistentVolumeClaim, validatePersistentVolumeClaimUpdate, validatePersistentVolumeUpdate, validateStorageClass, validateStorageClassUpdate } from './storage.js';
import { validateDeploymentSpec, validateLeaseSpec, validatePriorityClassFields, validatePriorityClassUpdate, validateReplicaSetSpec, validateSelectorImmutable } from './apps.js';
import { validateControllerRevision, validateControllerRevisionUpdate, validateDaemonSet, validateDaemonSetUpdate, validatePodDisruptionBudget, validateStatefulSet, validateStatefulSetUpdate } from './apps-workloads.js';
import { validatePodTemplateObject, validateReplicationControllerSpec } from './replication.js';
import { validateLimitRange, validateResourceQuota } from './quota.js';
import { validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerStatus } from './autoscaling.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface KindRules {
  name: NameValidator;
  validate?: (obj: unknown, opts: ValidateOptions) => FieldError[];
  validateUpdate?: (next: unknown, prev: unknown) => FieldError[];
}

const RULES: Record<string, KindRules> = {
  '/pods': { name: nameIsDNSSubdomain, validate: (o) => validatePodSpec((o as Obj)?.spec, 'spec'), validateUpdate: validatePodUpdate },
  '/services': { name: nameIsDNS1035Label, validate: (o, opts) => validateServiceSpec(o, opts.service), validateUpdate: validateServiceUpdate },
  '/namespaces': { name: nameIsDNSLabel, validate: validateNamespaceSpec },
  '/nodes': { name: nameIsDNSSubdomain, validate: validateNodeSpec, validateUpdate: validateNodeUpdate },
  '/secrets': { name: nameIsDNSSubdomain, validate: validateSecretData, validateUpdate: validateSecretUpdate },
  '/configmaps': { name: nameIsDNSSubdomain, validate: validateConfigMapData, validateUpdate: validateConfigMapUpdate },
  '/events': { name: nameIsDNSSubdomain, validate: validateEventFields },
  '/endpoints': { name: nameIsDNSSubdomain, validate: validateEndpointsSubsets },
  '/serviceaccounts': { name: nameIsDNSSubdomain },
  '/replicationcontrollers': { name: nameIsDNSSubdomain, validate: validateReplicationControllerSpec },
  '/podtemplates': { name: nameIsDNSSubdomain, validate: validatePodTemplateObject },
  '/resourcequotas': { name: nameIsDNSSubdomain, validate: validateResourceQuota },
  '/limitranges': { name: nameIsDNSSubdomain, validate: validateLimitRange },
  'apps/deployments': { name: nameIsDNSSubdomain, validate: validateDeploymentSpec, validateUpdate: validateSelectorImmutable },
  'apps/replicasets': { name: nameIsDNSSubdomain, validate: validateReplicaSetSpec, validateUpdate: validateSelectorImmutable },
  'apps/daemonsets': { name: nameIsDNSSubdomain, validate: validateDaemonSet, validateUpdate: validateDaemonSetUpdate },
  'apps/statefulsets': { name: nameIsDNSSubdomain, validate: validateStatefulSet, validateUpdate: validateStatefulSetUpdate },
  'apps/controllerrevisions': { name: nameIsDNSSubdomain, validate: validateControllerRevision, validateUpdate: validateControllerRevisionUpdate },
  'policy/poddisruptionbudgets': { name: nameIsDNSSubdomain, validate: validatePodDisruptionBudget },
  'coordination.k8s.io/leases': { name: nameIsDNSSubdomain, validate: validateLeaseSpec },
  'discovery.k8s.io/endpointslices': { name: nameIsDNSSubdomain, validate: validateEndpointSliceFields },
  'scheduling.k8s.io/priorityclasses': { name: nameIsDNSSubdomain, validate: validatePriorityClassFields, validateUpdate: validatePriorityClassUpdate },
  'rbac.authorization.k8s.io/roles': { name: rbacName, validate: validateRole },
  'rbac.authorization.k8s.io/clusterroles': { name: rbacName, validate: validateClusterRole },
  'rbac.authorization.k8s.io/rolebindings': { name: rbacName, validate: validateRoleBinding, validateUpdate: validateRoleRefUpdate },
  'rbac.authorization.k8s.io/clusterrolebindings': { name: rbacName, validate: validateClusterRoleBinding, validateUpdate: validateRoleRefUpdate },
  'batch/jobs': { name: nameIsDNSSubdomain, validate: validateJob, validateUpdate: validateJobUpdate },
  'batch/cronjobs': { name: nameIsDNSSubdomain, validate: validateCronJob },
  '/persistentvolumes': { name: nameIsDNSSubdomain, validate: validatePersistentVolume, validateUpdate: validatePersistentVolumeUpdate },
  '/persistentvolumeclaims': { name: nameIsDNSSubdomain, validate: validatePersistentVolumeClaim, validateUpdate: validatePersistentVolumeClaimUpdate },
  // Upstream does not care what certificate requests are called (ValidateCertificateRequestName); the
  // request, usages, signer and conditions are checked by the apiserver's strategy, which parses the PEM.
  'certificates.k8s.io/certificatesigningrequests': { name: pathSegmentName },
  'storage.k8s.io/storageclasses': { name: nameIsDNSSubdomain, validate: validateStorageClass, validateUpdate: validateStorageClassUpdate },
  'autoscaling/horizontalpodautoscalers': { name: nameIsDNSSubdomain, validate: (o) => [...validateHorizontalPodAutoscaler(o), ...validateHorizontalPodAutoscalerStatus(o)] },
};

export interface ValidateOptions {
  service?: ServiceValidationOptions;
}

/**
 * Validates obj (already defaulted) as a create, or as an update of old. Pure; never throws.
 * Unknown resources get ObjectMeta validation only (DNS-subdomain names).
 */
export function validateObject(resource: Pick<ResourceDescriptor, 'group' | 'resource' | 'namespaced'>, obj: unknown, old?: unknown, opts: ValidateOptions = {}): FieldError[] {
  const rules = RULES[`${resource.group}/${resource.resource}`] ?? { name: nameIsDNSSubdomain };
  const errs = validateObjectMeta((obj as Obj)?.metadata, { namespaced: resource.namespaced, nameFn: rules.name });
  errs.push(...(rules.validate?.(obj, opts) ?? []));
  if (old !== undefined) {
    errs.push(...validateObjectMetaUpdate((obj as Obj)?.metadata, (old as Obj)?.metadata));
    errs.push(...(rules.validateUpdate?.(obj, old) ?? []));
  }
  return errs;
}

/** metav1.StatusCause list as upstream's NewInvalid builds it (message without the field prefix). */
export function toStatusCauses(errs: readonly FieldError[]): StatusCause[] {
  return errs.map((e) => ({
    reason: e.type,
    message: e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message,
    field: e.field,
  }));
}

/**
 * The 422 Invalid ApiError upstream returns: `Deployment.apps "web" is invalid: <errors>` with
 * one cause per field error (several errors print as `[a, b]`).
 */
export function invalidError(resource: Pick<ResourceDescriptor, 'group' | 'kind'>, name: string, errs: readonly FieldError[]): ApiError {
  const qualified = resource.group ? `${resource.kind}.${resource.group}` : resource.kind;
  return new ApiError('Invalid', `${qualified} "${name}" is invalid: ${aggregateMessage(errs)}`, {
    details: { name, group: resource.group, kind: resource.kind, causes: toStatusCauses(errs) },
  });
}

export { validateObjectMeta, validateObjectMetaUpdate, validateLabels, validateAnnotations, validateLabelSelector, validateImmutableField, deepEqual } from './meta.js';
export { validatePodSpec, validatePodTemplateSpec, validatePodUpdate, validateResourceRequirements, validateTolerations, POD_UPDATE_FORBIDDEN_MSG } from './pod.js';
export { validateServiceSpec, validateServiceUpdate, DEFAULT_NODE_PORT_RANGE, type ServiceValidationOptions } from './core.js';
export { PVC_SPEC_IMMUTABLE_MSG, ACCESS_MODES } from './storage.js';
export { validateCrossVersionObjectReference, MAX_PERIOD_SECONDS, MAX_STABILIZATION_WINDOW_SECONDS } from './autoscaling.js';
