/**
 * `mkctl trace hpa/x`, pure. A HorizontalPodAutoscaler's chain: stored (target, bounds) → target
 * (its scale read: AbleToScale) → metrics (available? ScalingActive, the Warning that says why not)
 * → current vs target (each metric's current value against its target) → desired (the
 * recommendation and what limited or stabilized it) → scale written (the target's replicas equal
 * the desired count, the last SuccessfulRescale).
 */
import type { Event } from '../types.js';
import type * as autoscaling from 'kubernetes-types/autoscaling/v2.js';
import type { Link } from './link.js';

/** The scale target as read (spec/status replicas), or undefined when it could not be read. */
export interface ScaleTargetView { kind: string; name: string; specReplicas?: number; statusReplicas?: number }

type Hpa = autoscaling.HorizontalPodAutoscaler;
const OWNER = 'controller-manager (horizontalpodautoscaling)';
const cond = (h: Hpa, type: string) => (h.status?.conditions ?? []).find((c) => c.type === type);
const pct = (n: number | undefined) => (typeof n === 'number' ? `${n}%` : '<unknown>');

/** One metric's "current vs target" line; undefined current reads <unknown>, as kubectl prints it. */
export function metricVersus(spec: autoscaling.MetricSpec, status: autoscaling.MetricStatus | undefined): string {
  switch (spec.type) {
    case 'Resource':
    case 'ContainerResource': {
      const src = (spec.type === 'Resource' ? spec.resource : spec.containerResource)!;
      const cur = (spec.type === 'Resource' ? status?.resource : status?.containerResource)?.current;
      const what = spec.type === 'Resource' ? src.name : `${src.name} of container ${spec.containerResource!.container}`;
      if (src.target.averageValue != null) return `${what}: ${cur?.averageValue ?? '<unknown>'} average vs target ${src.target.averageValue}`;
      return `${what}: ${pct(cur?.averageUtilization)} of request${cur?.averageValue ? ` (${cur.averageValue})` : ''} vs target ${pct(src.target.averageUtilization)}`;
    }
    case 'Pods': return `pods metric ${spec.pods!.metric.name}: ${status?.pods?.current.averageValue ?? '<unknown>'} vs target ${spec.pods!.target.averageValue}`;
    case 'Object': return `${spec.object!.describedObject.kind}/${spec.object!.describedObject.name} metric ${spec.object!.metric.name}: ${status?.object?.current.value ?? status?.object?.current.averageValue ?? '<unknown>'} vs target ${spec.object!.target.value ?? spec.object!.target.averageValue}`;
    case 'External': return `external metric ${spec.external!.metric.name}: ${status?.external?.current.value ?? status?.external?.current.averageValue ?? '<unknown>'} vs target ${spec.external!.target.value ?? spec.external!.target.averageValue}`;
    default: return `<unknown type ${spec.type}>`;
  }
}

export function diagnoseHorizontalPodAutoscaler(hpa: Hpa, target: ScaleTargetView | undefined, events: Event[] = []): Link[] {
  const m = hpa.metadata ?? {};
  const spec: autoscaling.HorizontalPodAutoscalerSpec = hpa.spec ?? { scaleTargetRef: { kind: '', name: '' }, maxReplicas: 0 };
  const st = hpa.status ?? { desiredReplicas: 0 };
  const ref = `${spec.scaleTargetRef.kind}/${spec.scaleTargetRef.name}`;
  const links: Link[] = [{ step: 'stored', status: 'ok', evidence: `hpa ${m.name}: ${ref}, ${spec.minReplicas ?? 1}..${spec.maxReplicas} replicas, ${(spec.metrics ?? []).length} metric(s)${spec.behavior ? ', with behavior' : ''}` }];
  const warning = (reason: string) => events.filter((e) => e.type === 'Warning' && e.reason === reason).at(-1);

  const able = cond(hpa, 'AbleToScale');
  if (!target || (able?.status === 'False' && able.reason === 'FailedGetScale')) {
    links.push({ step: 'target', status: 'broken', evidence: able?.message ?? `${ref} not found`, owner: OWNER, hint: `mkctl get ${spec.scaleTargetRef.kind.toLowerCase()} ${spec.scaleTargetRef.name}` });
    return links;
  }
  links.push({ step: 'target', status: 'ok', evidence: `${ref}: ${target.specReplicas ?? 0} replicas wanted, ${target.statusReplicas ?? 0} running` });

  const active = cond(hpa, 'ScalingActive');
  if (!active) {
    links.push({ step: 'metrics', status: 'waiting', evidence: 'no ScalingActive condition yet: the controller has not synced this HPA', owner: OWNER });
    return links;
  }
  if (active.status === 'False') {
    if (active.reason === 'ScalingDisabled') {
      links.push({ step: 'metrics', status: 'info', evidence: `${active.reason}: ${active.message}`, ...(active.lastTransitionTime ? { time: active.lastTransitionTime } : {}) });
      return links;
    }
    const ev = warning(active.reason ?? '');
    const resource = active.reason === 'FailedGetResourceMetric' || active.reason === 'FailedGetContainerResourceMetric';
    links.push({
      step: 'metrics', status: 'broken', evidence: `${active.reason}: ${active.message}${ev?.count && ev.count > 1 ? ` (${ev.count} times)` : ''}`,
      ...(active.lastTransitionTime ? { time: active.lastTransitionTime } : {}),
      owner: resource ? 'metrics-server (metrics.k8s.io through the aggregation layer)' : 'a custom/external metrics adapter',
      hint: resource ? `kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/${m.namespace ?? 'default'}/pods` : `mkctl describe hpa ${m.name}`,
    });
    return links;
  }
  links.push({ step: 'metrics', status: 'ok', evidence: `${active.reason}: ${active.message}` });

  const versus = (spec.metrics ?? []).map((s, i) => metricVersus(s, (st.currentMetrics ?? [])[i]));
  links.push({ step: 'current vs target', status: 'ok', evidence: versus.join('; ') || '<no metrics>' });

  const limited = cond(hpa, 'ScalingLimited');
  const stabilized = able?.reason === 'ScaleDownStabilized' || able?.reason === 'ScaleUpStabilized';
  const desired = st.desiredReplicas;
  const note = [stabilized ? `${able!.reason}: ${able!.message}` : '', limited?.status === 'True' ? `${limited.reason}: ${limited.message}` : ''].filter(Boolean).join('; ');
  links.push({ step: 'desired', status: stabilized ? 'waiting' : 'ok', evidence: `${desired} replicas (current ${st.currentReplicas ?? 0})${note ? `: ${note}` : ''}`, ...(stabilized ? { owner: OWNER } : {}) });

  if (able?.status === 'False') {
    const ev = warning('FailedRescale');
    links.push({ step: 'scale written', status: 'broken', evidence: `${able.reason}: ${able.message}${ev ? ` (${ev.message})` : ''}`, owner: OWNER, hint: `mkctl describe hpa ${m.name}` });
    return links;
  }
  const rescale = events.filter((e) => e.reason === 'SuccessfulRescale').at(-1);
  const last = rescale ? `; last ${rescale.message}` : '';
  if ((target.specReplicas ?? 0) === desired) {
    links.push({ step: 'scale written', status: 'ok', evidence: `${ref} has ${desired} replicas${st.lastScaleTime ? ` since ${st.lastScaleTime}` : ''}${last}`, ...(st.lastScaleTime ? { time: st.lastScaleTime } : {}) });
  } else {
    links.push({ step: 'scale written', status: 'waiting', evidence: `${ref} has ${target.specReplicas ?? 0} replicas, the HPA wants ${desired}${last}`, owner: OWNER });
  }
  return links;
}
