/**
 * HorizontalController (upstream pkg/controller/podautoscaler/horizontal.go): every sync period
 * (15 s) each HorizontalPodAutoscaler reads its target's scale subresource (any kind discovery
 * says serves /scale: Deployments, ReplicaSets, StatefulSets, ReplicationControllers, custom
 * resources), the metrics of the target's pods, computes a replica count per metric (the largest
 * wins), stabilizes and rate-limits it (normalize.ts), writes the scale when it changes, and
 * reports conditions AbleToScale / ScalingActive / ScalingLimited, currentMetrics and Events.
 * Watches HPAs (and pods through the lister); writes targets' /scale, HPA /status and Events.
 */
import {
  HorizontalPodAutoscalers, Pods, formatCpuMillis, isNotFound, parseLabelSelector, selectorToString,
  type HorizontalPodAutoscaler, type ParsedLabelSelector, type HorizontalPodAutoscalerCondition, type HorizontalPodAutoscalerStatus, type MetricSpec, type MetricStatus, type Pod, type ResourceDescriptor,
} from '@mk8s/api';
import { objectKey, partialResources, splitKey, type DeepReadonly, type DiscoveryClient, type SharedInformer } from '@mk8s/client';
import { BaseController, discoveryOf, type ControllerContext } from '../../controller.js';
import { clone, rfc3339, type Obj } from '../../util/meta.js';
import { milliValue, RestMetricsClient, type MetricsClient } from './metrics-client.js';
import {
  defaultCalculatorOptions, objectMetricReplicas, perPodMetricReplicas, plainMetricReplicas, readyPodsCount, resourceReplicas, type CalculatorOptions,
} from './replica-calculator.js';
import { DEFAULT_DOWNSCALE_STABILIZATION_MS, emptyHistory, normalizeDesiredReplicas, normalizeDesiredReplicasWithBehaviors, storeScaleEvent, type ConditionUpdate, type KeyHistory } from './normalize.js';

export type HPAObj = Obj<HorizontalPodAutoscaler>;
type PodObj = Obj<Pod>;
type Status = HorizontalPodAutoscalerStatus;
type ConditionType = 'AbleToScale' | 'ScalingActive' | 'ScalingLimited';

/** How long a resolved scale target mapping is trusted before discovery is read again. */
const MAPPING_TTL_MS = 60_000;
/** --horizontal-pod-autoscaler-sync-period. */
export const DEFAULT_SYNC_PERIOD_MS = 15_000;

export interface HorizontalControllerOptions {
  /** @default RestMetricsClient over ctx.client */
  metrics?: MetricsClient;
  /** @default 15 s */
  syncPeriodMs?: number;
  /** @default 5 min */
  downscaleStabilizationMs?: number;
  tolerance?: number;
  cpuInitializationPeriodMs?: number;
  initialReadinessDelayMs?: number;
  /** @default discoveryOf(ctx) */
  discovery?: DiscoveryClient;
}

/** autoscaling/v1 Scale as the target's /scale serves it; written back whole (with its resourceVersion) on a rescale. */
interface Scale { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string; resourceVersion?: string }; spec?: { replicas?: number }; status?: { replicas?: number; selector?: string } }

/**
 * hpasControllingPods (upstream hpasControllingPodsUnderSelector): the keys ("namespace/name") of
 * the HPAs whose last known selector (from their target's scale) selects any of pods, only HPAs
 * of a pod's own namespace, sorted. More than one means the HPAs would fight over the same pods:
 * AmbiguousSelector. Pure.
 */
export function hpasControllingPods(pods: readonly { metadata: { namespace?: string; labels?: Readonly<Record<string, string>> } }[], selectors: ReadonlyMap<string, ParsedLabelSelector | undefined>): string[] {
  const out = new Set<string>();
  for (const [key, sel] of selectors) {
    if (!sel) continue;                                            // registered, its target's selector not known yet: selects nothing
    const ns = splitKey(key).namespace;
    if (pods.some((p) => (p.metadata.namespace ?? '') === ns && sel.matches(p.metadata.labels ?? {}))) out.add(key);
  }
  return [...out].sort();
}

/** setConditionInList: lastTransitionTime moves only when the status does. Returns a new list. */
export function setCondition(list: readonly HorizontalPodAutoscalerCondition[] | undefined, c: { type: ConditionType; status: 'True' | 'False'; reason: string; message: string }, now: number): HorizontalPodAutoscalerCondition[] {
  const out = (list ?? []).map((x) => ({ ...x }));
  let existing = out.find((x) => x.type === c.type);
  if (!existing) { existing = { type: c.type, status: '' }; out.push(existing); }
  if (existing.status !== c.status) existing.lastTransitionTime = rfc3339(now);
  existing.status = c.status;
  existing.reason = c.reason;
  existing.message = c.message;
  return out;
}

/** A metric's failure: the ScalingActive condition upstream sets for it and the error carried up. */
class MetricError extends Error {
  constructor(message: string, readonly reason: string, readonly detail: string) { super(message); }
}

interface MetricProposal { replicas: number; name: string; status: MetricStatus }

export class HorizontalController extends BaseController {
  static readonly NAME = 'horizontalpodautoscaling';
  readonly name = HorizontalController.NAME;
  private readonly hpas: SharedInformer<HPAObj>;
  private readonly pods: SharedInformer<PodObj>;
  private readonly metrics: MetricsClient;
  private readonly discovery: DiscoveryClient;
  private readonly syncPeriodMs: number;
  private readonly downscaleStabilizationMs: number;
  private readonly calc: Omit<CalculatorOptions, 'now'>;
  /** Per-HPA recommendations and scale events (upstream's maps); dropped when the HPA goes. */
  private readonly history = new Map<string, KeyHistory>();
  /**
   * Each HPA's last known target selector (upstream's hpaSelectors): an HPA is registered (as
   * selecting nothing) when a sync starts, its selector set when the scale is read, dropped when
   * the HPA is deleted, so a sync still running for a deleted HPA cannot leave it behind.
   */
  private readonly hpaSelectors = new Map<string, ParsedLabelSelector | undefined>();
  /** group/kind → the resource serving it (a small RESTMapper cache). */
  private readonly mappings = new Map<string, { r: ResourceDescriptor; atMs: number }>();

  constructor(ctx: ControllerContext, o: HorizontalControllerOptions = {}) {
    super(ctx, 'horizontalpodautoscaler');
    this.metrics = o.metrics ?? new RestMetricsClient(ctx.client as never);
    this.discovery = o.discovery ?? discoveryOf(ctx);
    this.syncPeriodMs = o.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
    this.downscaleStabilizationMs = o.downscaleStabilizationMs ?? DEFAULT_DOWNSCALE_STABILIZATION_MS;
    const d = defaultCalculatorOptions(0);
    this.calc = {
      tolerance: o.tolerance ?? d.tolerance,
      cpuInitializationPeriodMs: o.cpuInitializationPeriodMs ?? d.cpuInitializationPeriodMs,
      delayOfInitialReadinessStatusMs: o.initialReadinessDelayMs ?? d.delayOfInitialReadinessStatusMs,
    };
    this.hpas = ctx.informers.informerFor<HPAObj>(HorizontalPodAutoscalers);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    // Status writes (ours) do not re-run a sync: the next one comes from the sync period.
    this.hpas.addEventHandler({
      onAdd: (h) => this.enqueue(objectKey(h)),
      onUpdate: (a, b) => { if (a.metadata.generation !== b.metadata.generation) this.enqueue(objectKey(b)); },
      onDelete: (h) => { this.history.delete(objectKey(h)); this.hpaSelectors.delete(objectKey(h)); },
    });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number }> {
    if (!this.hpas.lister.get(key)) { this.history.delete(key); this.hpaSelectors.delete(key); return {}; }
    try {
      await this.sync(key, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      // Upstream's queue retries every HPA at the fixed sync period, failed or not (its rate
      // limiter is a FixedItemIntervalRateLimiter): no exponential back-off that would leave an HPA
      // unsynced for minutes after metrics come back. The failure is in its events and conditions.
      this.log.warn({ err, hpa: key }, 'Sync of HorizontalPodAutoscaler failed');
    }
    return { requeueAfterMs: this.syncPeriodMs };
  }

  /**
   * One sync of the HPA at key (upstream reconcileAutoscaler): rejects with upstream's error text
   * when it could not read the scale or the metrics or write the scale (after recording the Event
   * and the condition). reconcile() calls it; tests call it to see the error.
   */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const shared = this.hpas.lister.get(key);
    if (!shared) return;
    if (!this.hpaSelectors.has(key)) this.hpaSelectors.set(key, undefined);
    await this.reconcileAutoscaler(shared, key, signal);
  }

  private historyOf(key: string): KeyHistory {
    let h = this.history.get(key);
    if (!h) { h = emptyHistory(); this.history.set(key, h); }
    return h;
  }

  /**
   * The served resource of a scale target (upstream RESTMapper.RESTMappings(groupKind) + the scale
   * subresource). Found mappings are kept for a while: discovery that partly fails (an aggregated
   * API down) is not cached by CachedDiscovery, and every sync of every HPA must not redo it.
   */
  private async targetResource(apiVersion: string, kind: string, signal: AbortSignal): Promise<ResourceDescriptor> {
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const gk = `${group}/${kind}`;
    const hit = this.mappings.get(gk);
    if (hit && this.ctx.clock.now() - hit.atMs < MAPPING_TTL_MS) return hit.r;
    let all: ResourceDescriptor[];
    try { all = await this.discovery.serverPreferredResources(signal); } catch (err) { all = partialResources(err); }
    const r = all.find((d) => d.group === group && d.kind === kind);
    if (r?.subresources.includes('scale')) this.mappings.set(gk, { r, atMs: this.ctx.clock.now() });
    if (!r) throw new Error(`no matches for kind "${kind}" in group "${group}"`);
    if (!r.subresources.includes('scale')) throw new Error(`${r.resource}.${group || 'core'} does not serve the scale subresource`);
    return r;
  }

  private async reconcileAutoscaler(shared: DeepReadonly<HPAObj>, key: string, signal: AbortSignal): Promise<void> {
    const hpa = clone(shared) as HPAObj;
    hpa.apiVersion ??= 'autoscaling/v2';
    hpa.kind ??= 'HorizontalPodAutoscaler';
    const original = clone(hpa.status ?? { desiredReplicas: 0 }) as Status;
    const now = () => this.ctx.clock.now();
    let status: Status = { ...(hpa.status ?? { desiredReplicas: 0 }) };
    const cond = (c: { type: ConditionType; status: 'True' | 'False'; reason: string; message: string }) => { status.conditions = setCondition(status.conditions, c, now()); };
    const ns = hpa.metadata.namespace ?? '';
    const ref = hpa.spec?.scaleTargetRef ?? { kind: '', name: '' };
    const reference = `${ref.kind}/${ns}/${ref.name}`;
    const event = (type: 'Normal' | 'Warning', reason: string, fmt: string, ...args: unknown[]) => this.ctx.recorder.event(hpa, type, reason, fmt, ...args);

    let target: ResourceDescriptor;
    let scale: Scale;
    try {
      target = await this.targetResource(ref.apiVersion ?? '', ref.kind, signal);
      scale = await this.ctx.client.resource(target, ns).getSubresource(ref.name, 'scale', { signal }) as Scale;
    } catch (err) {
      const msg = (err as Error).message;
      event('Warning', 'FailedGetScale', '%s', msg);
      cond({ type: 'AbleToScale', status: 'False', reason: 'FailedGetScale', message: `the HPA controller was unable to get the target's current scale: ${msg}` });
      await this.updateStatusIfNeeded(hpa, original, status, signal);
      throw new Error(`failed to query scale subresource for ${reference}: ${msg}`);
    }
    cond({ type: 'AbleToScale', status: 'True', reason: 'SucceededGetScale', message: "the HPA controller was able to get the target's current scale" });
    const currentReplicas = scale.spec?.replicas ?? 0;
    const history = this.historyOf(key);
    if (history.recommendations.length === 0) history.recommendations.push({ replicas: currentReplicas, atMs: now() });

    const minReplicas = hpa.spec?.minReplicas ?? 1;
    const maxReplicas = hpa.spec?.maxReplicas ?? 0;
    let desiredReplicas = 0;
    let rescaleReason = '';
    let rescale = true;
    let metricStatuses: MetricStatus[] | undefined;
    let retErr: Error | undefined;

    if (currentReplicas === 0 && minReplicas !== 0) {
      desiredReplicas = 0;
      rescale = false;
      cond({ type: 'ScalingActive', status: 'False', reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' });
    } else if (currentReplicas > maxReplicas) {
      rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
      desiredReplicas = maxReplicas;
    } else if (currentReplicas < minReplicas) {
      rescaleReason = 'Current number of replicas below Spec.MinReplicas';
      desiredReplicas = minReplicas;
    } else {
      const r = await this.computeReplicasForMetrics(hpa, key, scale, cond, event, signal);
      metricStatuses = r.statuses;
      if (r.error && r.replicas === -1) {
        status = this.statusWith(status, currentReplicas, status.desiredReplicas, metricStatuses, false);
        await this.updateStatusIfNeeded(hpa, original, status, signal);
        event('Warning', 'FailedComputeMetricsReplicas', '%s', r.error.message);
        throw new Error(`failed to compute desired number of replicas based on listed metrics for ${reference}: ${r.error.message}`);
      }
      retErr = r.error;
      let rescaleMetric = '';
      if (r.replicas > desiredReplicas) { desiredReplicas = r.replicas; rescaleMetric = r.metric; }
      if (desiredReplicas > currentReplicas) rescaleReason = `${rescaleMetric} above target`;
      if (desiredReplicas < currentReplicas) rescaleReason = 'All metrics below target';
      const n = this.normalize(hpa, history, currentReplicas, desiredReplicas, minReplicas, now());
      for (const c of n.conditions) cond(c);
      desiredReplicas = n.desiredReplicas;
      rescale = desiredReplicas !== currentReplicas;
    }

    if (rescale) {
      try {
        // As upstream's scale client: an Update of the scale read at the start of this sync, with
        // its resourceVersion. A target changed meanwhile (a rollout, `kubectl scale`) is a
        // Conflict, not overwritten: FailedRescale, and the next sync decides from the new scale.
        const next: Scale = { ...scale, spec: { ...scale.spec, replicas: desiredReplicas } };
        await this.ctx.client.resource(target, ns).updateSubresource(ref.name, 'scale', next, { signal });
      } catch (err) {
        const msg = (err as Error).message;
        event('Warning', 'FailedRescale', 'New size: %d; reason: %s; error: %s', desiredReplicas, rescaleReason, msg);
        cond({ type: 'AbleToScale', status: 'False', reason: 'FailedUpdateScale', message: `the HPA controller was unable to update the target scale: ${msg}` });
        status = this.statusWith(status, currentReplicas, status.desiredReplicas, metricStatuses, false);
        await this.updateStatusIfNeeded(hpa, original, status, signal);
        throw new Error(`failed to rescale ${reference}: ${msg}`);
      }
      cond({ type: 'AbleToScale', status: 'True', reason: 'SucceededRescale', message: `the HPA controller was able to update the target scale to ${desiredReplicas}` });
      event('Normal', 'SuccessfulRescale', 'New size: %d; reason: %s', desiredReplicas, rescaleReason);
      storeScaleEvent(history, hpa.spec?.behavior as never, currentReplicas, desiredReplicas, now());
      this.log.info({ hpa: key, currentReplicas, desiredReplicas, reason: rescaleReason }, 'Rescaled target');
    } else {
      desiredReplicas = currentReplicas;
    }
    status = this.statusWith(status, currentReplicas, desiredReplicas, metricStatuses, rescale);
    await this.updateStatusIfNeeded(hpa, original, status, signal);
    if (retErr) throw retErr;
  }

  /** setStatus: replicas, metrics, conditions kept; lastScaleTime moves on a rescale. */
  private statusWith(prev: Status, current: number, desired: number, metrics: MetricStatus[] | undefined, rescaled: boolean): Status {
    const s: Status = { desiredReplicas: desired };
    if (current) s.currentReplicas = current;
    const last = rescaled ? rfc3339(this.ctx.clock.now()) : prev.lastScaleTime;
    if (last) s.lastScaleTime = last;
    if (metrics?.length) s.currentMetrics = metrics;
    if (prev.conditions?.length) s.conditions = prev.conditions;
    return s;
  }

  private normalize(hpa: HPAObj, h: KeyHistory, current: number, desired: number, min: number, now: number): { desiredReplicas: number; conditions: ConditionUpdate[] } {
    const b = hpa.spec?.behavior;
    const max = hpa.spec?.maxReplicas ?? 0;
    if (!b) return normalizeDesiredReplicas(h, { current, desired, min, max, downscaleStabilizationMs: this.downscaleStabilizationMs, now });
    return normalizeDesiredReplicasWithBehaviors(h, {
      current, desired, min, max, now, downscaleStabilizationMs: this.downscaleStabilizationMs,
      scaleUp: b.scaleUp ?? { selectPolicy: 'Max', stabilizationWindowSeconds: 0, policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
      scaleDown: b.scaleDown ?? { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
  }

  private async updateStatusIfNeeded(hpa: HPAObj, original: Status, next: Status, signal: AbortSignal): Promise<void> {
    if (JSON.stringify(canonical(original)) === JSON.stringify(canonical(next))) return;
    try {
      await this.ctx.client.resource<HPAObj>(HorizontalPodAutoscalers, hpa.metadata.namespace).updateStatus({ ...hpa, status: next }, { signal });
    } catch (err) {
      if (isNotFound(err)) return;
      this.ctx.recorder.event(hpa, 'Warning', 'FailedUpdateStatus', '%s', (err as Error).message);
      throw new Error(`failed to update status for ${hpa.metadata.name}: ${(err as Error).message}`);
    }
  }

  /** computeReplicasForMetrics: the largest proposal of the metrics that work; -1 when they all fail (or some fail on a scale-down). */
  private async computeReplicasForMetrics(hpa: HPAObj, key: string, scale: Scale, cond: (c: { type: ConditionType; status: 'True' | 'False'; reason: string; message: string }) => void,
    event: (type: 'Normal' | 'Warning', reason: string, fmt: string, ...args: unknown[]) => void, signal: AbortSignal): Promise<{ replicas: number; metric: string; statuses?: MetricStatus[]; error?: Error }> {
    const selector = scale.status?.selector ?? '';
    if (!selector) {
      event('Warning', 'SelectorRequired', 'selector is required');
      cond({ type: 'ScalingActive', status: 'False', reason: 'InvalidSelector', message: "the HPA target's scale is missing a selector" });
      return { replicas: -1, metric: '', error: new Error('selector is required') };
    }
    let parsed;
    try { parsed = parseLabelSelector(selector); } catch (err) {
      const msg = `couldn't convert selector into a corresponding internal selector object: ${(err as Error).message}`;
      event('Warning', 'InvalidSelector', '%s', msg);
      cond({ type: 'ScalingActive', status: 'False', reason: 'InvalidSelector', message: msg });
      return { replicas: -1, metric: '', error: new Error(msg) };
    }
    const ns = hpa.metadata.namespace ?? '';
    // Only a registered HPA's selector is kept (see hpaSelectors): a deleted one's is not re-added.
    if (this.hpaSelectors.has(key)) this.hpaSelectors.set(key, parsed);
    const pods = this.pods.lister.list(ns).filter((p) => parsed.matches(p.metadata.labels ?? {}));
    const selecting = hpasControllingPods(pods, this.hpaSelectors);
    if (selecting.length > 1) {
      const msg = `pods by selector ${selector} are controlled by multiple HPAs: [${selecting.join(' ')}]`;
      event('Warning', 'AmbiguousSelector', '%s', msg);
      cond({ type: 'ScalingActive', status: 'False', reason: 'AmbiguousSelector', message: msg });
      return { replicas: -1, metric: '', error: new Error(msg) };
    }
    const specs = hpa.spec?.metrics ?? [];
    const specReplicas = scale.spec?.replicas ?? 0;
    const statuses: MetricStatus[] = specs.map(() => ({ type: '' }) as MetricStatus);
    let replicas = 0, metric = '', invalid = 0;
    let first: MetricError | undefined;
    for (const [i, spec] of specs.entries()) {
      try {
        const p = await this.computeReplicasForMetric(spec, specReplicas, ns, selector, pods, signal);
        statuses[i] = p.status;
        if (replicas === 0 || p.replicas > replicas) { replicas = p.replicas; metric = p.name; }
      } catch (err) {
        const e = err instanceof MetricError ? err : new MetricError((err as Error).message, 'FailedGetResourceMetric', (err as Error).message);
        event('Warning', e.reason, '%s', e.detail);
        first ??= e;
        invalid++;
      }
    }
    const error = first ? new Error(`invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${first.message}`) : undefined;
    if (first && (invalid >= specs.length || replicas < specReplicas)) {
      cond({ type: 'ScalingActive', status: 'False', reason: first.reason, message: `the HPA was unable to compute the replica count: ${first.detail}` });
      return { replicas: -1, metric: '', statuses, ...(error ? { error } : {}) };
    }
    cond({ type: 'ScalingActive', status: 'True', reason: 'ValidMetricFound', message: `the HPA was able to successfully calculate a replica count from ${metric}` });
    return { replicas, metric, statuses, ...(error ? { error } : {}) };
  }

  private async computeReplicasForMetric(spec: MetricSpec, current: number, ns: string, selector: string, pods: readonly DeepReadonly<PodObj>[], signal: AbortSignal): Promise<MetricProposal> {
    const o: CalculatorOptions = { ...this.calc, now: this.ctx.clock.now() };
    const fail = (reason: string, prefix: string) => (err: unknown): never => {
      const detail = (err as Error).message;
      throw new MetricError(`${prefix}: ${detail}`, reason, detail);
    };
    switch (spec.type) {
      case 'Resource':
      case 'ContainerResource': {
        const src = (spec.type === 'Resource' ? spec.resource : spec.containerResource)!;
        const container = spec.type === 'ContainerResource' ? spec.containerResource!.container : '';
        const reason = spec.type === 'Resource' ? 'FailedGetResourceMetric' : 'FailedGetContainerResourceMetric';
        const prefix = spec.type === 'Resource' ? `failed to get ${src.name} resource metric value` : `failed to get ${container} container metric value`;
        try {
          const t = src.target;
          let fetched;
          try { fetched = await this.metrics.getResourceMetric(src.name, ns, selector, container, signal); } catch (err) { throw new Error(`unable to get metrics for resource ${src.name}: ${(err as Error).message}`); }
          if (t.averageValue != null) {
            const p = plainMetricReplicas(current, milliValue(t.averageValue), src.name, pods, fetched.metrics, o);
            const status = { name: src.name, current: { averageValue: milliQuantity(p.usage) } };
            return { replicas: p.replicas, name: spec.type === 'Resource' ? `${src.name} resource` : `${src.name} container resource`,
              status: (spec.type === 'Resource' ? { type: 'Resource', resource: status } : { type: 'ContainerResource', containerResource: { ...status, container } }) as MetricStatus };
          }
          if (t.averageUtilization == null) throw new Error('invalid resource metric source: neither an average utilization target nor an average value (usage) target was set');
          const p = resourceReplicas(current, t.averageUtilization, src.name, container, pods, fetched.metrics, o);
          const status = { name: src.name, current: { averageUtilization: p.utilization, averageValue: milliQuantity(p.rawAverage) } };
          return {
            replicas: p.replicas,
            name: spec.type === 'Resource' ? `${src.name} resource utilization (percentage of request)` : `${src.name} container resource utilization (percentage of request)`,
            status: (spec.type === 'Resource' ? { type: 'Resource', resource: status } : { type: 'ContainerResource', containerResource: { ...status, container } }) as MetricStatus,
          };
        } catch (err) {
          return fail(reason, prefix)(new Error(`failed to get ${src.name} utilization: ${(err as Error).message}`));
        }
      }
      case 'Pods': {
        const src = spec.pods!;
        try {
          const fetched = await this.metrics.getRawMetric(src.metric.name, ns, selector, selectorToString(src.metric.selector as never), signal)
            .catch((err: Error) => { throw new Error(`unable to get metric ${src.metric.name}: ${err.message}`); });
          const p = plainMetricReplicas(current, milliValue(src.target.averageValue ?? '0'), '', pods, fetched.metrics, o);
          return { replicas: p.replicas, name: src.metric.name, status: { type: 'Pods', pods: { metric: src.metric, current: { averageValue: milliQuantity(p.usage) } } } as MetricStatus };
        } catch (err) { return fail('FailedGetPodsMetric', 'failed to get pods metric value')(err); }
      }
      case 'Object': {
        const src = spec.object!;
        try {
          const { value } = await this.metrics.getObjectMetric(src.metric.name, ns, src.describedObject, selectorToString(src.metric.selector as never), signal)
            .catch((err: Error) => { throw new Error(`unable to get metric ${src.metric.name}: ${src.describedObject.kind} on ${ns} ${src.describedObject.name}/${err.message}`); });
          const name = `${src.describedObject.kind} metric ${src.metric.name}`;
          if (src.target.type === 'Value' && src.target.value != null) {
            const replicas = objectMetricReplicas(current, value, milliValue(src.target.value), pods, this.calc.tolerance);
            return { replicas, name, status: { type: 'Object', object: { describedObject: src.describedObject, metric: src.metric, current: { value: milliQuantity(value) } } } as MetricStatus };
          }
          if (src.target.averageValue == null) throw new Error('invalid object metric source: neither a value target nor an average value target was set');
          const p = perPodMetricReplicas(current, value, milliValue(src.target.averageValue), this.calc.tolerance);
          readyPodsCount(pods);
          return { replicas: p.replicas, name, status: { type: 'Object', object: { describedObject: src.describedObject, metric: src.metric, current: { averageValue: milliQuantity(p.average) } } } as MetricStatus };
        } catch (err) { return fail('FailedGetObjectMetric', 'failed to get object metric value')(err); }
      }
      case 'External': {
        const src = spec.external!;
        try {
          const { values } = await this.metrics.getExternalMetric(src.metric.name, ns, selectorToString(src.metric.selector as never), signal)
            .catch((err: Error) => { throw new Error(`unable to get external metric ${ns}/${src.metric.name}/${JSON.stringify(src.metric.selector ?? null)}: ${err.message}`); });
          const total = values.reduce((a, b) => a + b, 0);
          const name = `external metric ${src.metric.name}(${JSON.stringify(src.metric.selector ?? null)})`;
          if (src.target.averageValue != null) {
            const p = perPodMetricReplicas(current, total, milliValue(src.target.averageValue), this.calc.tolerance);
            return { replicas: p.replicas, name, status: { type: 'External', external: { metric: src.metric, current: { averageValue: milliQuantity(p.average) } } } as MetricStatus };
          }
          if (src.target.value == null) throw new Error('invalid external metric source: neither a value target nor an average value target was set');
          const replicas = objectMetricReplicas(current, total, milliValue(src.target.value), pods, this.calc.tolerance);
          return { replicas, name, status: { type: 'External', external: { metric: src.metric, current: { value: milliQuantity(total) } } } as MetricStatus };
        } catch (err) { return fail('FailedGetExternalMetric', 'failed to get external metric value')(err); }
      }
      default:
        throw new MetricError(`unknown metric source type "${String(spec.type)}"`, 'InvalidMetricSourceType', `unknown metric source type "${String(spec.type)}"`);
    }
  }
}

/** resource.NewMilliQuantity(v, DecimalSI).String(): '73m', '2', '125829120', '200k'. */
export const milliQuantity = (milli: number): string => formatCpuMillis(milli);

/** Status compared as upstream's Semantic.DeepEqual would (key order does not matter). */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}
