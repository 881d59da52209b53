/**
 * The scheduling queue (internal/queue.PriorityQueue): three sets of pending pods.
 *  - activeQ: ready to schedule, ordered by the QueueSort plugin (priority, then time);
 *  - backoffQ: failed recently, waiting out a per-pod exponential backoff (1s → 10s);
 *  - unschedulable: failed and waiting for a cluster event that might help (or a 5 min timeout).
 * Also the nominator: pods that preempted others, by the node room is being made on.
 * Single-threaded: all methods run on the event loop; only pop() waits.
 */
import type { Clock } from '@mk8s/component-base';
import type { PodNominator, QueuedPodInfo } from '../framework/interfaces.js';
import { podKey, type Pod } from '../framework/types.js';
import { eventMayHelp, type ClusterEvent } from './events.js';
import { Heap } from './heap.js';

export interface SchedulingQueueOptions {
  /** The QueueSort plugin's order. */
  less: (a: QueuedPodInfo, b: QueuedPodInfo) => boolean;
  clock: Clock;
  /** @default 1000 */
  initialBackoffMs?: number;
  /** @default 10000 */
  maxBackoffMs?: number;
  /** Unschedulable pods are retried at least this often. @default 300000 */
  maxInUnschedulableMs?: number;
}

export interface PendingPods { active: number; backoff: number; unschedulable: number; gated: number }

const keyOf = (q: QueuedPodInfo): string => podKey(q.pod);
const isGated = (pod: Pod): boolean => (pod.spec?.schedulingGates?.length ?? 0) > 0;

export class SchedulingQueue implements PodNominator {
  private readonly clock: Clock;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxInUnschedulableMs: number;
  private readonly activeQ: Heap<QueuedPodInfo>;
  private readonly backoffQ: Heap<QueuedPodInfo>;
  private readonly unschedulable = new Map<string, QueuedPodInfo>();
  private readonly gated = new Map<string, QueuedPodInfo>();
  /** Pods handed out by pop() and not yet done(): updates to them are kept for the requeue. */
  private readonly inFlight = new Map<string, Pod>();
  private readonly nominatedByNode = new Map<string, Map<string, Pod>>();
  private readonly nominatedNodeOf = new Map<string, string>();
  private cycle = 0;
  private moveRequestCycle = -1;
  private closed = false;
  private waiters: ((q: QueuedPodInfo | undefined) => void)[] = [];

  constructor(o: SchedulingQueueOptions) {
    this.clock = o.clock;
    this.initialBackoffMs = o.initialBackoffMs ?? 1000;
    this.maxBackoffMs = o.maxBackoffMs ?? 10_000;
    this.maxInUnschedulableMs = o.maxInUnschedulableMs ?? 300_000;
    this.activeQ = new Heap(keyOf, o.less);
    this.backoffQ = new Heap(keyOf, (a, b) => this.backoffExpiry(a) < this.backoffExpiry(b));
  }

  /** The number of scheduling cycles started (pops). */
  schedulingCycle(): number { return this.cycle; }

  private newInfo(pod: Pod): QueuedPodInfo {
    return { pod, timestamp: this.clock.now(), attempts: 0, initialAttemptTimestamp: undefined, unschedulablePlugins: new Set() };
  }

  private has(key: string): boolean {
    return this.activeQ.has(key) || this.backoffQ.has(key) || this.unschedulable.has(key) || this.gated.has(key);
  }

  /** A new pending pod (informer add). Idempotent. */
  add(pod: Pod): void {
    const key = podKey(pod);
    if (this.has(key) || this.inFlight.has(key)) { this.update(pod); return; }
    const qpi = this.newInfo(pod);
    if (isGated(pod)) { this.gated.set(key, qpi); return; }
    this.toActive(qpi);
  }

  private toActive(qpi: QueuedPodInfo): void {
    const key = keyOf(qpi);
    this.backoffQ.delete(key); this.unschedulable.delete(key); this.gated.delete(key);
    const w = this.waiters.shift();
    if (w) { this.startCycle(qpi); w(qpi); return; }
    this.activeQ.addOrUpdate(qpi);
  }

  /** A pending pod changed (informer update). A change may make it schedulable, so it is retried. */
  update(pod: Pod): void {
    const key = podKey(pod);
    if (this.inFlight.has(key)) { this.inFlight.set(key, pod); return; }
    for (const h of [this.activeQ, this.backoffQ]) {
      const q = h.get(key);
      if (q) { h.addOrUpdate({ ...q, pod }); return; }
    }
    const g = this.gated.get(key);
    if (g) {
      if (isGated(pod)) { g.pod = pod; return; }
      this.toActive({ ...g, pod, timestamp: this.clock.now() });
      return;
    }
    const u = this.unschedulable.get(key);
    if (u) {
      const next = { ...u, pod };
      if (specChanged(u.pod, pod)) this.requeue(next); else this.unschedulable.set(key, next);
      return;
    }
    this.add(pod);
  }

  /** The pod is gone or no longer pending (deleted, bound elsewhere, not ours any more). */
  delete(pod: Pod): void {
    const key = podKey(pod);
    this.activeQ.delete(key); this.backoffQ.delete(key); this.unschedulable.delete(key); this.gated.delete(key);
    this.inFlight.delete(key);
    this.deleteNominatedPodIfExists(pod);
  }

  /**
   * Resolves with the next pod to schedule, waiting if none is active; undefined once closed.
   * The pod stays in flight until done().
   */
  pop(): Promise<QueuedPodInfo | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const q = this.activeQ.pop();
    if (q) { this.startCycle(q); return Promise.resolve(q); }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private startCycle(q: QueuedPodInfo): void {
    this.cycle++;
    q.attempts++;
    q.initialAttemptTimestamp ??= this.clock.now();
    this.inFlight.set(keyOf(q), q.pod);
  }

  /** The scheduling attempt of pod ended (bound, requeued, or dropped). */
  done(pod: Pod): void { this.inFlight.delete(podKey(pod)); }

  /** The latest version of an in-flight pod the informer delivered, if any. */
  latest(pod: Pod): Pod { return this.inFlight.get(podKey(pod)) ?? pod; }

  /**
   * Requeues a pod whose attempt failed. If a move request happened while it was being scheduled,
   * or it failed with an error rather than a rejection, it goes to backoffQ; otherwise it waits in
   * unschedulable for a helpful event.
   */
  addUnschedulableIfNotPresent(qpi: QueuedPodInfo, podSchedulingCycle: number): void {
    const key = keyOf(qpi);
    const pod = this.inFlight.get(key);
    // Deleted or bound elsewhere while it was being scheduled: nothing to retry.
    if (!pod) return;
    this.inFlight.delete(key);
    if (this.has(key)) return;
    const next: QueuedPodInfo = { ...qpi, pod, timestamp: this.clock.now() };
    if (this.moveRequestCycle >= podSchedulingCycle || qpi.unschedulablePlugins.size === 0) {
      this.backoffQ.addOrUpdate(next);
      return;
    }
    this.unschedulable.set(key, next);
  }

  /** Moves every unschedulable pod that event might help to backoffQ or activeQ. */
  moveAllToActiveOrBackoffQueue(event: ClusterEvent, filter: (pod: Pod) => boolean = () => true): void {
    const moving: QueuedPodInfo[] = [];
    for (const q of this.unschedulable.values()) {
      if (eventMayHelp(event, q.unschedulablePlugins) && filter(q.pod)) moving.push(q);
    }
    for (const q of moving) this.requeue(q);
    this.moveRequestCycle = this.cycle;
  }

  private requeue(q: QueuedPodInfo): void {
    this.unschedulable.delete(keyOf(q));
    if (this.backoffExpiry(q) > this.clock.now()) this.backoffQ.addOrUpdate(q);
    else this.toActive(q);
  }

  /** Backoff: initial * 2^(attempts-1), capped at max. */
  backoffDurationMs(q: QueuedPodInfo): number {
    let d = this.initialBackoffMs;
    for (let i = 1; i < q.attempts; i++) {
      if (d > this.maxBackoffMs - d) return this.maxBackoffMs;
      d += d;
    }
    return d;
  }
  private backoffExpiry(q: QueuedPodInfo): number { return q.timestamp + this.backoffDurationMs(q); }

  /** Moves pods whose backoff expired to activeQ (every second from run()). */
  flushBackoffQCompleted(): void {
    const now = this.clock.now();
    for (let q = this.backoffQ.peek(); q && this.backoffExpiry(q) <= now; q = this.backoffQ.peek()) {
      this.backoffQ.pop();
      this.toActive(q);
    }
  }

  /** Retries pods that waited longer than maxInUnschedulableMs for an event (every 30s from run()). */
  flushUnschedulablePodsLeftover(): void {
    const now = this.clock.now();
    const old = [...this.unschedulable.values()].filter((q) => now - q.timestamp > this.maxInUnschedulableMs);
    for (const q of old) this.requeue(q);
  }

  /** Runs the periodic flushes until signal aborts, then closes the queue. */
  run(signal: AbortSignal): void {
    const cancels: (() => void)[] = [];
    const every = (ms: number, fn: () => void) => {
      const tick = () => { fn(); cancels[idx] = this.clock.setTimeout(tick, ms); };
      const idx = cancels.length;
      cancels.push(this.clock.setTimeout(tick, ms));
    };
    every(1000, () => this.flushBackoffQCompleted());
    every(30_000, () => this.flushUnschedulablePodsLeftover());
    signal.addEventListener('abort', () => { for (const c of cancels) c(); this.close(); }, { once: true });
  }

  /** Wakes every pop() with undefined. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  pendingPods(): PendingPods {
    return { active: this.activeQ.size, backoff: this.backoffQ.size, unschedulable: this.unschedulable.size, gated: this.gated.size };
  }

  /** Where a pod waits now: for tests and debugging. */
  whereIs(pod: Pod): 'active' | 'backoff' | 'unschedulable' | 'gated' | 'inFlight' | undefined {
    const k = podKey(pod);
    if (this.activeQ.has(k)) return 'active';
    if (this.backoffQ.has(k)) return 'backoff';
    if (this.unschedulable.has(k)) return 'unschedulable';
    if (this.gated.has(k)) return 'gated';
    if (this.inFlight.has(k)) return 'inFlight';
    return undefined;
  }

  // --- nominator ---

  /** Records that pod waits for room on nodeName ('' clears). */
  addNominatedPod(pod: Pod, nodeName: string): void {
    this.deleteNominatedPodIfExists(pod);
    if (!nodeName) return;
    const key = podKey(pod);
    let m = this.nominatedByNode.get(nodeName);
    if (!m) { m = new Map(); this.nominatedByNode.set(nodeName, m); }
    m.set(key, pod);
    this.nominatedNodeOf.set(key, nodeName);
  }

  deleteNominatedPodIfExists(pod: Pod): void {
    const key = podKey(pod);
    const node = this.nominatedNodeOf.get(key);
    if (node === undefined) return;
    this.nominatedNodeOf.delete(key);
    const m = this.nominatedByNode.get(node);
    m?.delete(key);
    if (m?.size === 0) this.nominatedByNode.delete(node);
  }

  nominatedPodsForNode(nodeName: string): Pod[] {
    const m = this.nominatedByNode.get(nodeName);
    // Asked for every node filtered in every cycle: no allocation in the usual case of none.
    return m ? [...m.values()] : NO_PODS;
  }
}

const NO_PODS: Pod[] = Object.freeze([]) as unknown as Pod[];

/** Whether an update to a pending pod could change the scheduling outcome (spec, labels). */
function specChanged(a: Pod, b: Pod): boolean {
  return JSON.stringify(a.spec) !== JSON.stringify(b.spec) || JSON.stringify(a.metadata.labels) !== JSON.stringify(b.metadata.labels);
}
