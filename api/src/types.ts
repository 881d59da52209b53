/**
 * API object types, from `kubernetes-types`. Re-exported here so every package imports them from
 * one place. `Named<T>` is what the server returns: metadata.name is always set (STYLE rule 9).
 */
export type * from 'kubernetes-types/core/v1.js';
export type { Deployment, DeploymentSpec, DeploymentStatus, DeploymentCondition, DeploymentList, ReplicaSet, ReplicaSetSpec, ReplicaSetStatus, ReplicaSetCondition, ReplicaSetList, RollingUpdateDeployment, DeploymentStrategy } from 'kubernetes-types/apps/v1.js';
export type {
  DaemonSet, DaemonSetSpec, DaemonSetStatus, DaemonSetCondition, DaemonSetList, DaemonSetUpdateStrategy, RollingUpdateDaemonSet,
  StatefulSet, StatefulSetSpec, StatefulSetStatus, StatefulSetCondition, StatefulSetList, StatefulSetUpdateStrategy, RollingUpdateStatefulSetStrategy,
  ControllerRevision, ControllerRevisionList,
} from 'kubernetes-types/apps/v1.js';
export type { PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus, PodDisruptionBudgetList, Eviction } from 'kubernetes-types/policy/v1.js';
export type { Lease, LeaseSpec, LeaseList } from 'kubernetes-types/coordination/v1.js';
export type { EndpointSlice, Endpoint as SliceEndpoint, EndpointPort, EndpointConditions, EndpointSliceList } from 'kubernetes-types/discovery/v1.js';
export type { PriorityClass } from 'kubernetes-types/scheduling/v1.js';
export type { StorageClass, StorageClassList } from 'kubernetes-types/storage/v1.js';
export type { ObjectMeta, ListMeta, OwnerReference, Status as ApiStatus, StatusCause, StatusDetails, LabelSelector, LabelSelectorRequirement, Time, Condition, DeleteOptions, Preconditions } from 'kubernetes-types/meta/v1.js';
export type { Job, JobSpec, JobStatus, JobCondition, JobList, JobTemplateSpec, CronJob, CronJobSpec, CronJobStatus, CronJobList, PodFailurePolicy, PodFailurePolicyRule, UncountedTerminatedPods } from 'kubernetes-types/batch/v1.js';
export type { Scale } from 'kubernetes-types/autoscaling/v1.js';
export type {
  HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, HorizontalPodAutoscalerStatus, HorizontalPodAutoscalerCondition, HorizontalPodAutoscalerList,
  HorizontalPodAutoscalerBehavior, HPAScalingRules, HPAScalingPolicy, MetricSpec, MetricStatus, MetricTarget, MetricValueStatus, MetricIdentifier,
  CrossVersionObjectReference, ResourceMetricSource, ResourceMetricStatus, ContainerResourceMetricSource, ContainerResourceMetricStatus,
  PodsMetricSource, PodsMetricStatus, ObjectMetricSource, ObjectMetricStatus, ExternalMetricSource, ExternalMetricStatus,
} from 'kubernetes-types/autoscaling/v2.js';

import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

/** Metadata as the server returns it: name, namespace (when namespaced), uid and resourceVersion set. */
export type ServerMeta = ObjectMeta & { name: string; uid?: string; resourceVersion?: string };

/** Any API object as stored and returned by the server. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ServerMeta;
  [field: string]: unknown;
}

/** T with metadata.name required. */
export type Named<T extends { metadata?: ObjectMeta }> = T & { metadata: ServerMeta };

/** A list as the server returns it. */
export interface KubeList<T = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** One watch event on the wire. */
export interface WatchEvent<T = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}
