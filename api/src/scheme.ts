/**
 * The scheme: every resource the apiserver serves, described once. The apiserver builds its
 * routes, discovery and OpenAPI from this table; clients address resources by these descriptors.
 * Mirrors apimachinery's RESTMapper + the apiserver's APIGroupInfo.
 */

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';
export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** A resource's identity and shape, as discovery reports it. */
export interface ResourceDescriptor<T = unknown> {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  /** The plural, lower case: the URL segment and etcd key segment. */
  readonly resource: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly Verb[];
  /** Subresources served, e.g. 'status', 'scale', 'binding', 'log', 'exec', 'eviction'. */
  readonly subresources: readonly string[];
  /** Phantom field carrying the object type for typed clients; never set. */
  readonly _type?: T;
}

/** apiVersion as it appears in objects: 'v1' or 'apps/v1'. */
export function apiVersionOf(r: Pick<ResourceDescriptor, 'group' | 'version'>): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** The group-qualified resource name as upstream messages print it: 'pods', 'deployments.apps'. */
export function qualifiedResource(r: Pick<ResourceDescriptor, 'group' | 'resource'>): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

/** URL path prefix of a resource's collection (namespace '' or undefined = all namespaces / cluster-scoped). */
export function collectionPath(r: ResourceDescriptor, namespace?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.resource}` : `${base}/${r.resource}`;
}

/** etcd key prefix: /registry/<group>/<resource>/ (core group: no group segment). */
export function registryPrefix(r: Pick<ResourceDescriptor, 'group' | 'resource'>): string {
  return r.group ? `/registry/${r.group}/${r.resource}/` : `/registry/${r.resource}/`;
}

function define<T>(d: Omit<ResourceDescriptor<T>, 'listKind' | 'singular' | 'verbs' | 'shortNames' | 'categories' | 'subresources'> &
  Partial<Pick<ResourceDescriptor<T>, 'verbs' | 'shortNames' | 'categories' | 'subresources'>>): ResourceDescriptor<T> {
  return {
    listKind: `${d.kind}List`,
    singular: d.kind.toLowerCase(),
    verbs: ALL_VERBS,
    shortNames: [],
    categories: [],
    subresources: [],
    ...d,
  };
}

import type * as core from 'kubernetes-types/core/v1.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type * as coordination from 'kubernetes-types/coordination/v1.js';
import type * as discovery from 'kubernetes-types/discovery/v1.js';
import type * as scheduling from 'kubernetes-types/scheduling/v1.js';
import type * as rbac from 'kubernetes-types/rbac/v1.js';
import type * as batch from 'kubernetes-types/batch/v1.js';
import type * as certificates from 'kubernetes-types/certificates/v1.js';
import type * as policy from 'kubernetes-types/policy/v1.js';
import type * as storage from 'kubernetes-types/storage/v1.js';
import type * as autoscaling from 'kubernetes-types/autoscaling/v2.js';
import type * as autoscalingv1 from 'kubernetes-types/autoscaling/v1.js';

export const Namespaces = define<core.Namespace>({ group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false, shortNames: ['ns'], subresources: ['status', 'finalize'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] });
export const Pods = define<core.Pod>({ group: '', version: 'v1', kind: 'Pod', resource: 'pods', namespaced: true, shortNames: ['po'], categories: ['all'], subresources: ['status', 'binding', 'log', 'exec', 'attach', 'portforward', 'eviction'] });
export const Services = define<core.Service>({ group: '', version: 'v1', kind: 'Service', resource: 'services', namespaced: true, shortNames: ['svc'], categories: ['all'], subresources: ['status'], verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] });
export const EndpointsResource = define<core.Endpoints>({ group: '', version: 'v1', kind: 'Endpoints', resource: 'endpoints', namespaced: true, shortNames: ['ep'], });
export const ConfigMaps = define<core.ConfigMap>({ group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true, shortNames: ['cm'] });
export const Secrets = define<core.Secret>({ group: '', version: 'v1', kind: 'Secret', resource: 'secrets', namespaced: true });
export const Nodes = define<core.Node>({ group: '', version: 'v1', kind: 'Node', resource: 'nodes', namespaced: false, shortNames: ['no'], subresources: ['proxy', 'status'] });
export const Events = define<core.Event>({ group: '', version: 'v1', kind: 'Event', resource: 'events', namespaced: true, shortNames: ['ev'] });
export const ServiceAccounts = define<core.ServiceAccount>({ group: '', version: 'v1', kind: 'ServiceAccount', resource: 'serviceaccounts', namespaced: true, shortNames: ['sa'], subresources: ['token'] });
export const Deployments = define<apps.Deployment>({ group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true, shortNames: ['deploy'], categories: ['all'], subresources: ['status', 'scale'] });
export const ReplicaSets = define<apps.ReplicaSet>({ group: 'apps', version: 'v1', kind: 'ReplicaSet', resource: 'replicasets', namespaced: true, shortNames: ['rs'], categories: ['all'], subresources: ['status', 'scale'] });
export const DaemonSets = define<apps.DaemonSet>({ group: 'apps', version: 'v1', kind: 'DaemonSet', resource: 'daemonsets', namespaced: true, shortNames: ['ds'], categories: ['all'], subresources: ['status'] });
export const StatefulSets = define<apps.StatefulSet>({ group: 'apps', version: 'v1', kind: 'StatefulSet', resource: 'statefulsets', namespaced: true, shortNames: ['sts'], categories: ['all'], subresources: ['status', 'scale'] });
export const ControllerRevisions = define<apps.ControllerRevision>({ group: 'apps', version: 'v1', kind: 'ControllerRevision', resource: 'controllerrevisions', namespaced: true });
export const PodDisruptionBudgets = define<policy.PodDisruptionBudget>({ group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', resource: 'poddisruptionbudgets', namespaced: true, shortNames: ['pdb'], subresources: ['status'] });
export const Leases = define<coordination.Lease>({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', resource: 'leases', namespaced: true });
export const EndpointSlices = define<discovery.EndpointSlice>({ group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', resource: 'endpointslices', namespaced: true });
export const PriorityClasses = define<scheduling.PriorityClass>({ group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass', resource: 'priorityclasses', namespaced: false, shortNames: ['pc'] });

export const Jobs = define<batch.Job>({ group: 'batch', version: 'v1', kind: 'Job', resource: 'jobs', namespaced: true, categories: ['all'], subresources: ['status'] });
export const CronJobs = define<batch.CronJob>({ group: 'batch', version: 'v1', kind: 'CronJob', resource: 'cronjobs', namespaced: true, shortNames: ['cj'], categories: ['all'], subresources: ['status'] });
export const PersistentVolumes = define<core.PersistentVolume>({ group: '', version: 'v1', kind: 'PersistentVolume', resource: 'persistentvolumes', namespaced: false, shortNames: ['pv'], subresources: ['status'] });
export const PersistentVolumeClaims = define<core.PersistentVolumeClaim>({ group: '', version: 'v1', kind: 'PersistentVolumeClaim', resource: 'persistentvolumeclaims', namespaced: true, shortNames: ['pvc'], subresources: ['status'] });
export const StorageClasses = define<storage.StorageClass>({ group: 'storage.k8s.io', version: 'v1', kind: 'StorageClass', resource: 'storageclasses', namespaced: false, shortNames: ['sc'] });
export const ReplicationControllers = define<core.ReplicationController>({ group: '', version: 'v1', kind: 'ReplicationController', resource: 'replicationcontrollers', namespaced: true, shortNames: ['rc'], categories: ['all'], subresources: ['status', 'scale'] });
export const ResourceQuotas = define<core.ResourceQuota>({ group: '', version: 'v1', kind: 'ResourceQuota', resource: 'resourcequotas', namespaced: true, shortNames: ['quota'], subresources: ['status'] });
export const LimitRanges = define<core.LimitRange>({ group: '', version: 'v1', kind: 'LimitRange', resource: 'limitranges', namespaced: true, shortNames: ['limits'] });
export const PodTemplates = define<core.PodTemplate>({ group: '', version: 'v1', kind: 'PodTemplate', resource: 'podtemplates', namespaced: true });

/**
 * autoscaling HorizontalPodAutoscalers: v2 is the preferred and storage version; v1 serves the same
 * stored objects converted (the apiserver converts, as upstream: targetCPUUtilizationPercentage ⇄
 * a cpu Utilization metric, v2-only fields in `autoscaling.alpha.kubernetes.io/*` annotations).
 */
export const HorizontalPodAutoscalers = define<autoscaling.HorizontalPodAutoscaler>({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', resource: 'horizontalpodautoscalers', namespaced: true, shortNames: ['hpa'], categories: ['all'], subresources: ['status'] });
export const HorizontalPodAutoscalersV1 = define<autoscalingv1.HorizontalPodAutoscaler>({ group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler', resource: 'horizontalpodautoscalers', namespaced: true, shortNames: ['hpa'], categories: ['all'], subresources: ['status'] });

/**
 * events.k8s.io/v1 Events: a second view of the core Events (the same stored objects, as upstream
 * serves them); the apiserver converts between the two.
 */
export const EventsV1 = define({ group: 'events.k8s.io', version: 'v1', kind: 'Event', resource: 'events', namespaced: true, shortNames: ['ev'] });

/** certificates.k8s.io/v1: cluster-scoped; /approval carries the Approved/Denied conditions, /status the signer's certificate. */
export const CertificateSigningRequests = define<certificates.CertificateSigningRequest>({ group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest', resource: 'certificatesigningrequests', namespaced: false, shortNames: ['csr'], subresources: ['status', 'approval'] });

export const Roles = define<rbac.Role>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', resource: 'roles', namespaced: true });
export const ClusterRoles = define<rbac.ClusterRole>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', resource: 'clusterroles', namespaced: false });
export const RoleBindings = define<rbac.RoleBinding>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', resource: 'rolebindings', namespaced: true });
export const ClusterRoleBindings = define<rbac.ClusterRoleBinding>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', resource: 'clusterrolebindings', namespaced: false });

/**
 * The review kinds (authentication.k8s.io, authorization.k8s.io): create-only, never stored, answered
 * by the authenticators and authorizers. In discovery and OpenAPI, never in the registry (so no
 * controller lists or watches them).
 */
const review = (group: string, kind: string, resource: string, namespaced = false) =>
  define({ group, version: 'v1', kind, resource, namespaced, verbs: ['create'] });
export const TokenReviews = review('authentication.k8s.io', 'TokenReview', 'tokenreviews');
export const SelfSubjectReviews = review('authentication.k8s.io', 'SelfSubjectReview', 'selfsubjectreviews');
export const LocalSubjectAccessReviews = review('authorization.k8s.io', 'LocalSubjectAccessReview', 'localsubjectaccessreviews', true);
export const SelfSubjectAccessReviews = review('authorization.k8s.io', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews');
export const SubjectAccessReviews = review('authorization.k8s.io', 'SubjectAccessReview', 'subjectaccessreviews');
export const REVIEW_RESOURCES: readonly ResourceDescriptor[] = [TokenReviews, SelfSubjectReviews, LocalSubjectAccessReviews, SelfSubjectAccessReviews, SubjectAccessReviews];

/** Every served resource, in discovery order. */
export const RESOURCES: readonly ResourceDescriptor[] = [
  Pods, ReplicationControllers, PodTemplates, ResourceQuotas, LimitRanges, Services, EndpointsResource, ConfigMaps, Secrets, Namespaces, Nodes, Events, ServiceAccounts,
  Deployments, ReplicaSets, Leases, EndpointSlices, PriorityClasses,
  Roles, ClusterRoles, RoleBindings, ClusterRoleBindings,
  Jobs, CronJobs,
  DaemonSets, StatefulSets, ControllerRevisions, PodDisruptionBudgets,
  PersistentVolumes, PersistentVolumeClaims, StorageClasses,
  CertificateSigningRequests, EventsV1,
  HorizontalPodAutoscalers, HorizontalPodAutoscalersV1,
];

/** Finds a served resource by group and plural name. */
export function lookupResource(group: string, resource: string): ResourceDescriptor | undefined {
  return RESOURCES.find((r) => r.group === group && r.resource === resource);
}

/** Finds a served resource by apiVersion and kind (as in a manifest). */
export function lookupKind(apiVersion: string, kind: string): ResourceDescriptor | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}
