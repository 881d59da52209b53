/**
 * The replica calculator (upstream replica_calculator.go), as pure functions over the pods (from
 * the informer) and the metrics already fetched: group pods into ready / unready / missing /
 * ignored, compute the usage ratio, stay put within the tolerance, and treat missing and unready
 * pods conservatively (missing as 100 % on a scale-down and 0 % on a scale-up, unready as 0 % on a
 * scale-up) so that a decision never flips direction because of them.
 */
import type { Pod } from '@mk8s/api';
import type { DeepReadonly } from '@mk8s/client';
import { milliValue, type PodMetricsInfo } from './metrics-client.js';

type P = DeepReadonly<Pod> | Pod;

/** --horizontal-pod-autoscaler-tolerance. */
export const DEFAULT_TOLERANCE = 0.1;
/** --horizontal-pod-autoscaler-cpu-initialization-period. */
export const DEFAULT_CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
/** --horizontal-pod-autoscaler-initial-readiness-delay. */
export const DEFAULT_INITIAL_READINESS_DELAY_MS = 30_000;

export interface CalculatorOptions {
  tolerance: number;
  cpuInitializationPeriodMs: number;
  delayOfInitialReadinessStatusMs: number;
  /** Now, epoch ms (the controller's clock). */
  now: number;
}

export const defaultCalculatorOptions = (now: number): CalculatorOptions => ({
  tolerance: DEFAULT_TOLERANCE, cpuInitializationPeriodMs: DEFAULT_CPU_INITIALIZATION_PERIOD_MS, delayOfInitialReadinessStatusMs: DEFAULT_INITIAL_READINESS_DELAY_MS, now,
});

export interface PodGroups { readyPodCount: number; unready: Set<string>; missing: Set<string>; ignored: Set<string> }

/** groupPods: deleting and failed pods are ignored; pending ones unready; cpu samples of starting pods are not trusted. */
export function groupPods(pods: readonly P[], metrics: PodMetricsInfo, resource: string, o: CalculatorOptions): PodGroups {
  const g: PodGroups = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata!.name!;
    if (pod.metadata?.deletionTimestamp || pod.status?.phase === 'Failed') { g.ignored.add(name); continue; }
    if (pod.status?.phase === 'Pending') { g.unready.add(name); continue; }
    const metric = metrics.get(name);
    if (!metric) { g.missing.add(name); continue; }
    if (resource === 'cpu') {
      const cond = pod.status?.conditions?.find((c) => c.type === 'Ready');
      const start = pod.status?.startTime ? Date.parse(pod.status.startTime) : NaN;
      let unready: boolean;
      if (!cond || Number.isNaN(start)) unready = true;
      else {
        const transition = cond.lastTransitionTime ? Date.parse(cond.lastTransitionTime) : 0;
        if (start + o.cpuInitializationPeriodMs > o.now) {
          // Still initializing: the sample counts only once a full window was collected since the last transition.
          unready = cond.status === 'False' || metric.timestampMs < transition + metric.windowMs;
        } else {
          // Unready and never ready: ignore it.
          unready = cond.status === 'False' && start + o.delayOfInitialReadinessStatusMs > transition;
        }
      }
      if (unready) { g.unready.add(name); continue; }
    }
    g.readyPodCount++;
  }
  return g;
}

/** calculatePodRequests: each pod's request of resource (milli), over its containers (or `container`) and sidecars. */
export function podRequests(pods: readonly P[], container: string, resource: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    let sum = 0;
    const cs = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
    for (const c of cs) {
      if (container && c.name !== container) continue;
      const req = c.resources?.requests?.[resource];
      if (req === undefined) throw new Error(`missing request for ${resource} in container ${c.name} of Pod ${pod.metadata!.name}`);
      sum += milliValue(req);
    }
    out.set(pod.metadata!.name!, sum);
  }
  return out;
}

/** GetResourceUtilizationRatio: total usage over total request of the pods that have both. */
export function resourceUtilizationRatio(metrics: PodMetricsInfo, requests: Map<string, number>, targetUtilization: number): { ratio: number; utilization: number; rawAverage: number } {
  let metricsTotal = 0, requestsTotal = 0, n = 0;
  for (const [pod, m] of metrics) {
    const r = requests.get(pod);
    if (r === undefined) continue;
    metricsTotal += m.value; requestsTotal += r; n++;
  }
  if (requestsTotal === 0) throw new Error('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / n) };
}

/** GetMetricUsageRatio: average value over the target. */
export function metricUsageRatio(metrics: PodMetricsInfo, targetUsage: number): { ratio: number; usage: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / targetUsage, usage };
}

const withoutPods = (metrics: PodMetricsInfo, names: Set<string>): PodMetricsInfo => {
  const out = new Map(metrics);
  for (const n of names) out.delete(n);
  return out;
};

export interface UtilizationProposal { replicas: number; utilization: number; rawAverage: number }

/** GetResourceReplicas (Utilization targets): replicas from a target utilization of the pods' requests. */
export function resourceReplicas(currentReplicas: number, targetUtilization: number, resource: string, container: string,
  pods: readonly P[], fetched: PodMetricsInfo, o: CalculatorOptions): UtilizationProposal {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, fetched, resource, o);
  let metrics = withoutPods(withoutPods(fetched, g.ignored), g.unready);
  const requests = podRequests(pods, container, resource);
  if (metrics.size === 0) throw new Error('did not receive metrics for targeted pods (pods might be unready)');
  const { ratio, utilization, rawAverage } = resourceUtilizationRatio(metrics, requests, targetUtilization);
  const keep = { replicas: currentReplicas, utilization, rawAverage };
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (Math.abs(1 - ratio) <= o.tolerance) return keep;
    return { replicas: Math.ceil(ratio * g.readyPodCount), utilization, rawAverage };
  }
  metrics = new Map(metrics);
  if (g.missing.size > 0) {
    // Scale-down: missing pods use 100 % of their request (or the target when it is higher); scale-up: 0 %.
    const fallback = Math.max(100, targetUtilization);
    for (const p of g.missing) {
      if (ratio < 1) metrics.set(p, { value: Math.trunc((requests.get(p)! * fallback) / 100), timestampMs: 0, windowMs: 0 });
      else if (ratio > 1) metrics.set(p, { value: 0, timestampMs: 0, windowMs: 0 });
    }
  }
  if (scaleUpWithUnready) for (const p of g.unready) metrics.set(p, { value: 0, timestampMs: 0, windowMs: 0 });
  const next = resourceUtilizationRatio(metrics, requests, targetUtilization).ratio;
  if (Math.abs(1 - next) <= o.tolerance || (ratio < 1 && next > 1) || (ratio > 1 && next < 1)) return keep;
  const replicas = Math.ceil(next * metrics.size);
  if ((next < 1 && replicas > currentReplicas) || (next > 1 && replicas < currentReplicas)) return keep;
  return { replicas, utilization, rawAverage };
}

export interface UsageProposal { replicas: number; usage: number }

/** calcPlainMetricReplicas (AverageValue resource targets and Pods metrics): replicas from a target average value. */
export function plainMetricReplicas(currentReplicas: number, targetUsage: number, resource: string,
  pods: readonly P[], fetched: PodMetricsInfo, o: CalculatorOptions): UsageProposal {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, fetched, resource, o);
  let metrics = withoutPods(withoutPods(fetched, g.ignored), g.unready);
  if (metrics.size === 0) throw new Error('did not receive metrics for targeted pods (pods might be unready)');
  const { ratio, usage } = metricUsageRatio(metrics, targetUsage);
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (Math.abs(1 - ratio) <= o.tolerance) return { replicas: currentReplicas, usage };
    return { replicas: Math.ceil(ratio * g.readyPodCount), usage };
  }
  metrics = new Map(metrics);
  for (const p of g.missing) metrics.set(p, { value: ratio < 1 ? targetUsage : 0, timestampMs: 0, windowMs: 0 });
  if (scaleUpWithUnready) for (const p of g.unready) metrics.set(p, { value: 0, timestampMs: 0, windowMs: 0 });
  const next = metricUsageRatio(metrics, targetUsage).ratio;
  if (Math.abs(1 - next) <= o.tolerance || (ratio < 1 && next > 1) || (ratio > 1 && next < 1)) return { replicas: currentReplicas, usage };
  const replicas = Math.ceil(next * metrics.size);
  if ((next < 1 && replicas > currentReplicas) || (next > 1 && replicas < currentReplicas)) return { replicas: currentReplicas, usage };
  return { replicas, usage };
}

/** getReadyPodsCount: Running and Ready pods (Object and External metrics scale by them). */
export function readyPodsCount(pods: readonly P[]): number {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  return pods.filter((p) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

/** GetObjectMetricReplicas (Value targets): the object's value over the target, times the ready pods. */
export function objectMetricReplicas(currentReplicas: number, usage: number, targetUsage: number, pods: readonly P[], tolerance: number): number {
  const ratio = usage / targetUsage;
  if (Math.abs(1 - ratio) <= tolerance) return currentReplicas;
  return Math.ceil(ratio * readyPodsCount(pods));
}

/** GetObjectPerPodMetricReplicas / external AverageValue: the total over the per-pod target. */
export function perPodMetricReplicas(currentReplicas: number, total: number, targetAverage: number, tolerance: number): { replicas: number; average: number } {
  let replicas = currentReplicas;
  const ratio = total / (targetAverage * currentReplicas);
  if (Math.abs(1 - ratio) > tolerance) replicas = Math.ceil(total / targetAverage);
  return { replicas, average: Math.trunc(total / currentReplicas) };
}
