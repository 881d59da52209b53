/**
 * The Pod GC controller's metrics, named and labelled as upstream's (pkg/controller/podgc/metrics,
 * STABLE): pod_gc_collector_force_delete_pods_total{namespace,reason} counts every forced
 * deletion attempted, pod_gc_collector_force_delete_pod_errors_total{namespace,reason} those that
 * failed.
 */
import { Counter, type Registry } from 'prom-client';
import { metricOnce } from '@mk8s/component-base';

/** Why a pod is force-deleted: upstream's reason label values. */
export type PodGCReason = 'terminated' | 'orphaned' | 'unscheduled' | 'out-of-service';

export const FORCE_DELETE_PODS_TOTAL = 'pod_gc_collector_force_delete_pods_total';
export const FORCE_DELETE_POD_ERRORS_TOTAL = 'pod_gc_collector_force_delete_pod_errors_total';

/** The hooks PodGCController calls; safe to share between controllers of one registry. */
export interface PodGCMetrics {
  /** One forced deletion of a pod of namespace attempted for reason; ok false when it failed. */
  forcedDeletion(namespace: string, reason: PodGCReason, ok: boolean): void;
}

/**
 * newPodGCMetrics registers both families on registry (once per registry: a second controller
 * of the same component shares them). Without a registry they count but are served nowhere.
 */
export function newPodGCMetrics(registry?: Registry): PodGCMetrics {
  const counter = (name: string, help: string): Counter => {
    const make = () => new Counter({ name, help, labelNames: ['namespace', 'reason'], registers: registry ? [registry] : [] });
    return registry ? metricOnce(registry, name, make) : make();
  };
  const total = counter(FORCE_DELETE_PODS_TOTAL, 'Number of pods that are being forcefully deleted since the Pod GC Controller started.');
  const errorsTotal = counter(FORCE_DELETE_POD_ERRORS_TOTAL, 'Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.');
  return {
    forcedDeletion(namespace, reason, ok) {
      // As upstream: the attempt counts whatever its outcome; a failure counts once more as an error.
      total.inc({ namespace, reason });
      if (!ok) errorsTotal.inc({ namespace, reason });
    },
  };
}
