/**
 * Pod garbage collector (upstream pkg/controller/podgc). Every gcCheckPeriod it looks at all pods
 * and nodes in the informer caches and force-deletes (grace period 0) pods nobody else will ever
 * clean up:
 * - terminated pods (Succeeded/Failed) beyond --terminated-pod-gc-threshold, oldest first;
 * - orphaned pods bound to a node that no longer exists: the node's name waits out a quarantine
 *   (40 s, as upstream, so a node that is being re-registered is not mistaken for a deleted one),
 *   then is confirmed absent by a live GET; its pods are marked Failed with the DisruptionTarget
 *   condition (reason DeletionByPodGC) first, as upstream;
 * - unscheduled pods that are being deleted (no kubelet will ever finish them);
 * - pods being deleted on a NotReady node tainted node.kubernetes.io/out-of-service.
 * Watches Pods and Nodes; writes pods/status patches and Pod deletions; counts each forced
 * deletion in upstream's pod_gc_collector_* metrics. The decisions are pure (planPodGC); the queue
 * holds node names in quarantine.
 */
import { isNotFound, Nodes, Pods, type Node, type Pod, type PodCondition } from '@mk8s/api';
import { splitKey, type DeepReadonly, type SharedInformer } from '@mk8s/client';
import { runEvery } from '@mk8s/component-base';
import { BaseController, type ControllerContext } from '../../controller.js';
import type { Obj } from '../../util/meta.js';
import { newPodGCMetrics, type PodGCMetrics, type PodGCReason } from './metrics.js';

type PodObj = Obj<Pod>;
type NodeObj = Obj<Node>;
type RPod = DeepReadonly<PodObj>;
type RNode = DeepReadonly<NodeObj>;

/** Upstream's gcCheckPeriod. */
export const GC_CHECK_PERIOD_MS = 20_000;
/** Upstream's quarantineTime: how long a node must stay absent before its pods are collected. */
export const QUARANTINE_MS = 40_000;
/** --terminated-pod-gc-threshold's default (kube-controller-manager). */
export const DEFAULT_TERMINATED_POD_GC_THRESHOLD = 12_500;
export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';

export interface PodGCOptions {
  /** Terminated pods kept before the oldest are deleted; ≤ 0 disables that part. @default 12500 */
  terminatedPodThreshold?: number;
  /** @default GC_CHECK_PERIOD_MS */
  gcCheckPeriodMs?: number;
  /** @default QUARANTINE_MS */
  quarantineMs?: number;
}

export type { PodGCReason } from './metrics.js';

export interface PodGCPlan {
  /** namespace/name and why, in the order to delete. */
  delete: { key: string; reason: PodGCReason }[];
  /** Node names pods are bound to that the cache does not know: quarantine, then confirm. */
  missingNodes: string[];
}

const isTerminated = (p: RPod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const keyOf = (p: RPod) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;
const created = (p: RPod) => Date.parse(p.metadata.creationTimestamp ?? '') || 0;

function nodeReady(n: RNode): boolean {
  return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

/**
 * One GC pass over the caches (pure). Orphaned pods are not in `delete`: their nodes are in
 * `missingNodes`, which the controller confirms after the quarantine (planOrphans).
 */
export function planPodGC(pods: readonly RPod[], nodes: readonly RNode[], terminatedPodThreshold: number): PodGCPlan {
  const out: PodGCPlan = { delete: [], missingNodes: [] };
  const known = new Map(nodes.map((n) => [n.metadata.name, n]));
  const taken = new Set<string>();
  const add = (p: RPod, reason: PodGCReason) => { const k = keyOf(p); if (!taken.has(k)) { taken.add(k); out.delete.push({ key: k, reason }); } };
  // gcTerminating: out-of-service nodes that are NotReady let their terminating pods go.
  for (const p of pods) {
    const n = p.spec?.nodeName ? known.get(p.spec.nodeName) : undefined;
    if (!p.metadata.deletionTimestamp || !n || nodeReady(n)) continue;
    if ((n.spec?.taints ?? []).some((t) => t.key === OUT_OF_SERVICE_TAINT && t.effect === 'NoExecute')) add(p, 'out-of-service');
  }
  // gcTerminated: the oldest beyond the threshold.
  if (terminatedPodThreshold > 0) {
    const terminated = pods.filter(isTerminated);
    const excess = terminated.length - terminatedPodThreshold;
    if (excess > 0) for (const p of [...terminated].sort((a, b) => created(a) - created(b)).slice(0, excess)) add(p, 'terminated');
  }
  // gcOrphaned: nodes the cache does not have (confirmed later).
  const missing = new Set<string>();
  for (const p of pods) if (p.spec?.nodeName && !known.has(p.spec.nodeName)) missing.add(p.spec.nodeName);
  out.missingNodes = [...missing].sort();
  // gcUnscheduledTerminating: deleted before any node took them.
  for (const p of pods) if (p.metadata.deletionTimestamp && !p.spec?.nodeName) add(p, 'unscheduled');
  return out;
}

/** The pods of a node confirmed gone (pure). */
export function planOrphans(pods: readonly RPod[], node: string): string[] {
  return pods.filter((p) => p.spec?.nodeName === node).map(keyOf).sort();
}

/** The status patch that marks a pod Failed before it is force-deleted (markFailedAndDeletePodWithCondition); undefined: already terminal. */
export function failedStatusPatch(p: RPod, condition: PodCondition | undefined, nowIso: string): { status: { phase: 'Failed'; conditions?: PodCondition[] } } | undefined {
  if (isTerminated(p)) return undefined;
  return { status: { phase: 'Failed', ...(condition ? { conditions: [{ ...condition, lastTransitionTime: nowIso }] } : {}) } };
}

export class PodGCController extends BaseController {
  static readonly NAME = 'pod-garbage-collector';
  readonly name = PodGCController.NAME;
  readonly pods: SharedInformer<PodObj>;
  readonly nodes: SharedInformer<NodeObj>;
  private readonly o: Required<PodGCOptions>;
  /** Node names in quarantine (the queue's keys are node names). */
  private readonly quarantined = new Set<string>();
  private readonly metrics: PodGCMetrics;

  constructor(ctx: ControllerContext, o: PodGCOptions = {}) {
    super(ctx, 'orphaned_pods_nodes');
    this.o = {
      terminatedPodThreshold: o.terminatedPodThreshold ?? DEFAULT_TERMINATED_POD_GC_THRESHOLD,
      gcCheckPeriodMs: o.gcCheckPeriodMs ?? GC_CHECK_PERIOD_MS,
      quarantineMs: o.quarantineMs ?? QUARANTINE_MS,
    };
    this.defaultWorkers = 1;
    this.metrics = newPodGCMetrics(ctx.registry);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.nodes = ctx.informers.informerFor<NodeObj>(Nodes);
  }

  protected override async background(signal: AbortSignal): Promise<void> {
    await runEvery(this.o.gcCheckPeriodMs, () => this.gc(signal), { clock: this.ctx.clock, signal, logger: this.log, what: 'Pod GC pass' });
  }

  /** One pass: deletes what planPodGC names and puts newly missing nodes in quarantine. */
  async gc(signal: AbortSignal): Promise<void> {
    const plan = planPodGC(this.pods.lister.list(), this.nodes.lister.list(), this.o.terminatedPodThreshold);
    for (const node of plan.missingNodes) {
      if (this.quarantined.has(node)) continue;
      this.quarantined.add(node);
      this.queue.addAfter(node, this.o.quarantineMs);
    }
    for (const { key, reason } of plan.delete) {
      if (signal.aborted) return;
      await this.markFailedAndDelete(key, reason, undefined, signal);
    }
  }

  /** A node name out of quarantine: if it is still absent (cache, then a live GET), its pods go. */
  async reconcile(node: string, signal: AbortSignal): Promise<void> {
    this.quarantined.delete(node);
    if (this.nodes.lister.get(node)) return;
    try {
      await this.ctx.client.resource<NodeObj>(Nodes).get(node, { signal });
      return;                                                     // it exists after all (the cache lags)
    } catch (err) { if (!isNotFound(err)) throw err; }
    const condition: PodCondition = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' };
    for (const key of planOrphans(this.pods.lister.list(), node)) {
      if (signal.aborted) return;
      await this.markFailedAndDelete(key, 'orphaned', condition, signal);
    }
  }

  private async markFailedAndDelete(key: string, reason: PodGCReason, condition: PodCondition | undefined, signal: AbortSignal): Promise<void> {
    const p = this.pods.lister.get(key);
    if (!p) return;
    const { namespace, name } = splitKey(key);
    const client = this.ctx.client.resource<PodObj>(Pods, namespace);
    try {
      const patch = failedStatusPatch(p, condition, new Date(this.ctx.clock.now()).toISOString());
      if (patch) await client.patch(name, 'strategic', patch, { subresource: 'status', signal });
      await client.delete(name, { signal, gracePeriodSeconds: 0, ...(p.metadata.uid ? { preconditions: { uid: p.metadata.uid } } : {}) });
      this.metrics.forcedDeletion(namespace, reason, true);
      this.log.info({ pod: key, reason }, 'Forced deletion of pod');
    } catch (err) {
      // As upstream, any failed call is an error of the metric, NotFound included (the pod went
      // another way meanwhile); only the log stays quiet about that one.
      this.metrics.forcedDeletion(namespace, reason, false);
      if (isNotFound(err)) return;
      this.log.warn({ pod: key, reason, err }, 'Could not delete pod');
    }
  }
}
