/**
 * The scheduler loop (pkg/scheduler/schedule_one.go): pop a pod, filter and score nodes on a
 * snapshot, assume the pod on the chosen node, bind asynchronously; on failure run PostFilter
 * (preemption), requeue, and tell the user why (PodScheduled=False + FailedScheduling Event).
 * Informer handlers feed the cache and the queue (eventhandlers.go).
 */
import { setMaxListeners } from 'node:events';
import { Pods, isConflict, isNotFound, type PodCondition } from '@mk8s/api';
import type { Clientset, EventRecorder } from '@mk8s/client';
import { realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';
import { SchedulerCache } from './cache/cache.js';
import { FitError, NO_NODES_AVAILABLE_MSG, newDiagnosis, type Diagnosis } from './framework/fit-error.js';
import { Framework, type ProfileConfig } from './framework/framework.js';
import type { Handle, PluginFactory, PostFilterResult, QueuedPodInfo, VolumeListers } from './framework/interfaces.js';
import { Status } from './framework/status.js';
import { CycleState, PodInfo, podKey, type Node, type NodeInfo, type Pod } from './framework/types.js';
import { noopMetrics, type SchedulerMetrics } from './metrics.js';
import { IN_TREE_REGISTRY } from './plugins/registry.js';
import { SchedulingQueue } from './queue/scheduling-queue.js';
import { Semaphore } from './util/semaphore.js';
import type { ReplicaSet, Service } from '@mk8s/api';

export interface SchedulerOptions {
  /** Needed to bind, preempt and report; unit tests may pass a FakeClientset. */
  client: Clientset | undefined;
  recorder?: EventRecorder;
  profile?: ProfileConfig;
  /** Extra out-of-tree plugins merged over the in-tree registry. */
  registry?: Record<string, PluginFactory>;
  clock?: Clock;
  logger?: Logger;
  metrics?: SchedulerMetrics;
  /** Tie-break among equal top scores; injected for deterministic tests. @default Math.random */
  rand?: () => number;
  /** Lookups the plugins need; empty by default. */
  namespaceLabels?: Handle['namespaceLabels'];
  services?: (namespace: string) => Service[];
  replicaSets?: (namespace: string) => ReplicaSet[];
  /** Claim/volume/class caches for VolumeBinding; absent: pods with claims are scheduled as if they had none. */
  volumes?: VolumeListers;
  /** PriorityClass value by name, for pods whose spec.priority admission did not set. */
  priorityClassValue?: (name: string) => number | undefined;
  /** The globalDefault PriorityClass value, if any. */
  defaultPriority?: () => number | undefined;
  /** Per-pod backoff bounds. @default 1000 / 10000 */
  podInitialBackoffMs?: number;
  podMaxBackoffMs?: number;
  /**
   * Binds in flight at once. Scheduling goes on meanwhile (pods are assumed); the bound keeps a
   * burst of thousands of binds from opening thousands of connections. @default 256
   */
  maxConcurrentBinds?: number;
}

/** The result of a successful scheduling algorithm run. */
export interface ScheduleResult { suggestedHost: string; evaluatedNodes: number; feasibleNodes: number }

const MIN_FEASIBLE_NODES_TO_FIND = 100;
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;
const isTerminal = (pod: Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

export class Scheduler {
  readonly cache: SchedulerCache;
  readonly queue: SchedulingQueue;
  readonly framework: Framework;
  private readonly client: Clientset | undefined;
  private readonly recorder: EventRecorder | undefined;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly metrics: SchedulerMetrics;
  private readonly rand: () => number;
  private readonly o: SchedulerOptions;
  private nextStartNodeIndex = 0;
  /** Attempt outcomes so far (cheap counters for benchmarks and tests; /metrics has the same). */
  readonly stats = { scheduled: 0, unschedulable: 0, errors: 0 };
  /** Background writes (binds, status patches) so tests and shutdown can wait for them. */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly binds: Semaphore;

  constructor(o: SchedulerOptions) {
    this.o = o;
    this.client = o.client;
    this.recorder = o.recorder;
    this.clock = o.clock ?? realClock;
    this.log = o.logger ?? silentLogger();
    this.metrics = o.metrics ?? noopMetrics;
    this.rand = o.rand ?? Math.random;
    this.binds = new Semaphore(o.maxConcurrentBinds ?? 256);
    this.cache = new SchedulerCache({ clock: this.clock });
    let queue: SchedulingQueue | undefined;
    this.framework = new Framework({
      registry: { ...IN_TREE_REGISTRY, ...o.registry },
      ...(o.profile ? { profile: o.profile } : {}),
      handle: {
        logger: this.log,
        clock: this.clock,
        client: o.client,
        namespaceLabels: o.namespaceLabels ?? (() => undefined),
        services: o.services ?? (() => []),
        replicaSets: o.replicaSets ?? (() => []),
        ...(o.volumes ? { volumes: o.volumes } : {}),
        nominator: { nominatedPodsForNode: (n) => queue?.nominatedPodsForNode(n) ?? [] },
        recordEvent: (obj, type, reason, _action, message) => this.recorder?.event(obj, type, reason, '%s', message),
      },
    });
    const sort = this.framework.queueSort;
    queue = new SchedulingQueue({
      clock: this.clock,
      less: sort ? (a, b) => sort.less(a, b) : (a, b) => a.timestamp < b.timestamp,
      ...(o.podInitialBackoffMs !== undefined ? { initialBackoffMs: o.podInitialBackoffMs } : {}),
      ...(o.podMaxBackoffMs !== undefined ? { maxBackoffMs: o.podMaxBackoffMs } : {}),
    });
    this.queue = queue;
  }

  get schedulerName(): string { return this.framework.schedulerName; }

  // ---------------------------------------------------------------- event handlers

  private responsibleFor(pod: Pod): boolean {
    return (pod.spec?.schedulerName ?? 'default-scheduler') === this.schedulerName;
  }

  /** Fills spec.priority from the PriorityClass when admission did not (a copy; never mutates). */
  private withPriority(pod: Pod): Pod {
    if (pod.spec?.priority !== undefined || !pod.spec) return pod;
    const name = pod.spec.priorityClassName;
    const v = name ? this.o.priorityClassValue?.(name) : this.o.defaultPriority?.();
    return v === undefined ? pod : { ...pod, spec: { ...pod.spec, priority: v } };
  }

  onPodAdd(raw: Pod): void {
    const pod = this.withPriority(raw);
    if (pod.spec?.nodeName) {
      if (isTerminal(pod)) return;
      this.cache.addPod(pod);
      this.queue.delete(pod);
      this.queue.moveAllToActiveOrBackoffQueue('AssignedPodAdd');
      return;
    }
    if (this.responsibleFor(pod) && !pod.metadata.deletionTimestamp) {
      this.queue.add(pod);
      if (pod.status?.nominatedNodeName) this.queue.addNominatedPod(pod, pod.status.nominatedNodeName);
    }
  }

  onPodUpdate(oldRaw: Pod, raw: Pod): void {
    const pod = this.withPriority(raw);
    const old = this.withPriority(oldRaw);
    if (pod.spec?.nodeName) {
      if (!old.spec?.nodeName) this.queue.delete(pod);
      if (isTerminal(pod)) {
        this.cache.removePod(pod);
        this.queue.moveAllToActiveOrBackoffQueue('AssignedPodDelete');
        return;
      }
      this.cache.updatePod(pod);
      if (JSON.stringify(old.metadata.labels) !== JSON.stringify(pod.metadata.labels) || !old.spec?.nodeName) {
        this.queue.moveAllToActiveOrBackoffQueue(old.spec?.nodeName ? 'AssignedPodUpdate' : 'AssignedPodAdd');
      }
      return;
    }
    if (!this.responsibleFor(pod) || pod.metadata.deletionTimestamp) { this.queue.delete(pod); return; }
    this.queue.update(pod);
    // Keep the nominator in step with what the API says (another scheduler cycle may have changed it).
    if (pod.status?.nominatedNodeName) this.queue.addNominatedPod(pod, pod.status.nominatedNodeName);
  }

  onPodDelete(pod: Pod): void {
    if (pod.spec?.nodeName) {
      this.cache.removePod(pod);
      this.queue.moveAllToActiveOrBackoffQueue('AssignedPodDelete');
      return;
    }
    this.queue.delete(pod);
  }

  onNodeAdd(node: Node): void {
    this.cache.addNode(node);
    this.queue.moveAllToActiveOrBackoffQueue('NodeAdd');
  }

  onNodeUpdate(old: Node, node: Node): void {
    this.cache.updateNode(node);
    if (nodeSchedulingPropertiesChanged(old, node)) this.queue.moveAllToActiveOrBackoffQueue('NodeUpdate');
  }

  onNodeDelete(node: Node): void { this.cache.removeNode(node); }

  // ---------------------------------------------------------------- the loop

  /** Schedules pods until signal aborts (or the queue closes). */
  async run(signal: AbortSignal): Promise<void> {
    // Every in-flight bind and status write listens on signal; thousands may be in flight at once.
    setMaxListeners(0, signal);
    this.queue.run(signal);
    while (!signal.aborted) {
      if (!(await this.scheduleOne(signal))) break;
      // pop() resolves at once while pods are active: without a macrotask turn, bind responses and
      // informer events would wait until the whole activeQ is drained.
      await new Promise((r) => setImmediate(r));
    }
    await this.waitForPendingWrites();
  }

  /** Resolves once every background bind, status patch and preemption write started so far is done. */
  async waitForPendingWrites(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  private track(p: Promise<unknown>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** One scheduling cycle; false once the queue is closed. */
  async scheduleOne(signal: AbortSignal): Promise<boolean> {
    const qpi = await this.queue.pop();
    if (!qpi) return false;
    const pod = qpi.pod;
    if (pod.metadata.deletionTimestamp || this.cache.isAssumedPod(pod)) { this.queue.done(pod); return true; }
    const start = this.clock.now();
    const podCycle = this.queue.schedulingCycle();
    const state = new CycleState(this.cache.updateSnapshot());
    let result: ScheduleResult;
    try {
      result = this.schedulePod(state, pod);
    } catch (err) {
      let nominating: PostFilterResult | undefined;
      if (err instanceof FitError) {
        if (this.framework.postFilter.length) {
          const pf = await this.framework.runPostFilterPlugins(state, pod, err.diagnosis.nodeStatuses, signal)
            .catch((e: unknown) => ({ result: undefined, status: Status.error(e) }));
          if (pf.status?.code === 'Error') this.log.warn({ pod: podKey(pod), err: pf.status.err }, 'Could not run PostFilter plugins');
          else if (pf.status) err.setPostFilterMsg(pf.status.message());
          nominating = pf.result;
          this.metrics.observePreemption(pf.result?.victims ?? 0);
        }
        this.metrics.observeAttempt('unschedulable', this.schedulerName, (this.clock.now() - start) / 1000);
      } else {
        this.metrics.observeAttempt(err instanceof NoNodesError ? 'unschedulable' : 'error', this.schedulerName, (this.clock.now() - start) / 1000);
      }
      this.handleSchedulingFailure(qpi, err, nominating, podCycle);
      return true;
    }

    // Assume: the next cycle sees the pod on its node before the bind lands.
    const assumed: Pod = { ...pod, spec: { ...pod.spec!, nodeName: result.suggestedHost } };
    PodInfo.alias(assumed, PodInfo.of(pod));
    try {
      this.cache.assumePod(assumed);
    } catch (err) {
      this.handleSchedulingFailure(qpi, err, undefined, podCycle);
      return true;
    }
    const reserve = this.framework.runReservePluginsReserve(state, assumed, result.suggestedHost);
    if (reserve) {
      this.framework.runReservePluginsUnreserve(state, assumed, result.suggestedHost);
      this.cache.forgetPod(assumed);
      this.handleSchedulingFailure(qpi, reserve, undefined, podCycle);
      return true;
    }
    this.queue.deleteNominatedPodIfExists(pod);
    this.track(this.bindingCycle(state, qpi, assumed, result.suggestedHost, start, podCycle, signal));
    return true;
  }

  private async bindingCycle(state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: string, start: number, podCycle: number, signal: AbortSignal): Promise<void> {
    let status: Status | undefined;
    let bindStart = 0;
    try {
      status = await this.binds.run(() => { bindStart = this.clock.now(); return this.framework.runPreBindPlugins(state, assumed, host, signal).then((s) => s ?? this.framework.runBindPlugins(state, assumed, host, signal)); });
    } catch (err) {
      status = Status.error(err);
    }
    this.metrics.observeBind((this.clock.now() - bindStart) / 1000, !status);
    if (status) {
      this.cache.forgetPod(assumed);
      this.framework.runReservePluginsUnreserve(state, assumed, host);
      this.metrics.observeAttempt('error', this.schedulerName, (this.clock.now() - start) / 1000);
      if (isConflict(status.err) || isNotFound(status.err)) {
        // Bound by someone else, or gone: the informer will tell the cache; nothing to retry.
        this.log.info({ pod: podKey(assumed), err: status.err }, 'Pod was bound or deleted elsewhere');
        this.queue.done(assumed);
        return;
      }
      this.handleSchedulingFailure(qpi, status, undefined, podCycle);
      return;
    }
    this.cache.finishBinding(assumed);
    this.stats.scheduled++;
    this.metrics.observeAttempt('scheduled', this.schedulerName, (this.clock.now() - start) / 1000);
    this.log.debug({ pod: podKey(assumed), node: host }, 'Bound pod to node');
    this.recorder?.event(assumed, 'Normal', 'Scheduled', 'Successfully assigned %s to %s', podKey(assumed), host);
    this.queue.done(assumed);
  }

  /**
   * Runs the scheduling algorithm on state's snapshot: PreFilter, Filter, then (with several
   * feasible nodes) PreScore and Score. Throws FitError when no node fits.
   */
  schedulePod(state: CycleState, pod: Pod): ScheduleResult {
    const snap = state.snapshot;
    if (snap.numNodes === 0) throw new NoNodesError();
    const { feasible, diagnosis } = this.findNodesThatFitPod(state, pod);
    if (feasible.length === 0) throw new FitError(snap.numNodes, diagnosis);
    const evaluatedNodes = feasible.length + diagnosis.nodeStatuses.size;
    if (feasible.length === 1) return { suggestedHost: feasible[0]!.name, evaluatedNodes, feasibleNodes: 1 };
    const pre = this.framework.runPreScorePlugins(state, pod, feasible);
    if (pre) throw pre.err instanceof Error ? pre.err : new Error(pre.message());
    const scores = this.framework.runScorePlugins(state, pod, feasible);
    return { suggestedHost: this.selectHost(scores), evaluatedNodes, feasibleNodes: feasible.length };
  }

  /** Reservoir-samples one of the top-scoring nodes so ties spread out. */
  private selectHost(scores: { name: string; score: number }[]): string {
    let best = scores[0]!; let ties = 1;
    for (let i = 1; i < scores.length; i++) {
      const s = scores[i]!;
      if (s.score > best.score) { best = s; ties = 1; } else if (s.score === best.score) {
        ties++;
        if (this.rand() * ties < 1) best = s;
      }
    }
    return best.name;
  }

  /** How many feasible nodes are enough (numFeasibleNodesToFind, adaptive percentage). */
  numFeasibleNodesToFind(numAllNodes: number): number {
    if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
    let pct = this.framework.percentageOfNodesToScore;
    if (pct <= 0) pct = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - Math.trunc(numAllNodes / 125));
    if (pct >= 100) return numAllNodes;
    return Math.max(MIN_FEASIBLE_NODES_TO_FIND, Math.trunc((numAllNodes * pct) / 100));
  }

  private findNodesThatFitPod(state: CycleState, pod: Pod): { feasible: NodeInfo[]; diagnosis: Diagnosis } {
    const diagnosis = newDiagnosis();
    const nodes = state.snapshot.nodeInfoList;
    const pre = this.framework.runPreFilterPlugins(state, pod);
    if (pre.status) {
      if (!pre.status.isRejected()) throw pre.status.err instanceof Error ? pre.status.err : new Error(pre.status.message());
      for (const n of nodes) diagnosis.nodeStatuses.set(n.name, pre.status);
      diagnosis.preFilterMsg = pre.status.message();
      if (pre.plugin) diagnosis.unschedulablePlugins.add(pre.plugin);
      return { feasible: [], diagnosis };
    }
    // A pod that preempted goes back to its nominated node first, where room is being made.
    const nominated = pod.status?.nominatedNodeName ? state.snapshot.get(pod.status.nominatedNodeName) : undefined;
    if (nominated && !this.framework.runFilterPluginsWithNominatedPods(state, pod, nominated).status) {
      return { feasible: [nominated], diagnosis };
    }
    const want = this.numFeasibleNodesToFind(nodes.length);
    const feasible: NodeInfo[] = [];
    let processed = 0;
    for (; processed < nodes.length && feasible.length < want; processed++) {
      const ni = nodes[(this.nextStartNodeIndex + processed) % nodes.length]!;
      const r = this.framework.runFilterPluginsWithNominatedPods(state, pod, ni);
      if (!r.status) { feasible.push(ni); continue; }
      if (r.status.code === 'Error') throw r.status.err instanceof Error ? r.status.err : new Error(r.status.message());
      diagnosis.nodeStatuses.set(ni.name, r.status);
      if (r.plugin) diagnosis.unschedulablePlugins.add(r.plugin);
    }
    this.nextStartNodeIndex = (this.nextStartNodeIndex + processed) % nodes.length;
    return { feasible, diagnosis };
  }

  // ---------------------------------------------------------------- failure

  private handleSchedulingFailure(qpi: QueuedPodInfo, err: unknown, nominating: PostFilterResult | undefined, podCycle: number): void {
    const rejected = err instanceof FitError || err instanceof NoNodesError || (err instanceof Status && err.isRejected());
    if (rejected) this.stats.unschedulable++; else this.stats.errors++;
    const reason = rejected ? 'Unschedulable' : 'SchedulerError';
    const message = err instanceof Status ? err.message() : err instanceof Error ? err.message : String(err);
    qpi.unschedulablePlugins = err instanceof FitError ? new Set(err.diagnosis.unschedulablePlugins) : new Set();
    const pod = this.queue.latest(qpi.pod);
    // Deleted, or bound by someone else, while we were scheduling it: nothing to report or retry.
    if (this.queue.whereIs(pod) !== 'inFlight') return;
    this.queue.addUnschedulableIfNotPresent(qpi, podCycle);
    if (nominating?.nominatedNodeName !== undefined) this.queue.addNominatedPod(pod, nominating.nominatedNodeName);
    if (rejected) this.log.info({ pod: podKey(pod), reason: message }, 'Unable to schedule pod; no fit; waiting');
    else this.log.warn({ pod: podKey(pod), err }, 'Error scheduling pod; retrying');
    this.recorder?.event(pod, 'Warning', 'FailedScheduling', '%s', message);
    this.track(this.updatePodStatus(pod, { type: 'PodScheduled', status: 'False', reason, message }, nominating?.nominatedNodeName));
  }

  /** Patches the PodScheduled condition (and nominatedNodeName) unless they already say so. */
  private async updatePodStatus(pod: Pod, cond: PodCondition, nominatedNodeName: string | undefined): Promise<void> {
    if (!this.client) return;
    const old = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    const nnnChanged = nominatedNodeName !== undefined && (pod.status?.nominatedNodeName ?? '') !== nominatedNodeName;
    if (old && old.status === cond.status && old.reason === cond.reason && old.message === cond.message && !nnnChanged) return;
    const now = new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const condition = { ...cond, lastProbeTime: null, lastTransitionTime: old?.status === cond.status && old.lastTransitionTime ? old.lastTransitionTime : now };
    const status: Record<string, unknown> = { conditions: [condition] };
    if (nnnChanged) status['nominatedNodeName'] = nominatedNodeName || null;
    try {
      await this.client.resource(Pods, pod.metadata.namespace ?? 'default').patch(pod.metadata.name, 'strategic', { status }, { subresource: 'status' });
    } catch (err) {
      if (!isNotFound(err)) this.log.warn({ err, pod: podKey(pod) }, 'Could not update pod status');
    }
  }
}

/** The cluster has no nodes at all (ErrNoNodesAvailable). */
export class NoNodesError extends Error {
  constructor() { super(NO_NODES_AVAILABLE_MSG); this.name = 'NoNodesError'; }
}

/** Whether a node update can change scheduling decisions (not just a heartbeat). */
function nodeSchedulingPropertiesChanged(a: Node, b: Node): boolean {
  const j = JSON.stringify;
  return a.spec?.unschedulable !== b.spec?.unschedulable
    || j(a.metadata.labels) !== j(b.metadata.labels)
    || j(a.spec?.taints) !== j(b.spec?.taints)
    || j(a.status?.allocatable) !== j(b.status?.allocatable);
}
