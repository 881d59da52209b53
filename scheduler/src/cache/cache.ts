/**
 * The scheduler cache (internal/cache): nodes and the pods on them, bound and assumed. A pod is
 * assumed on its node the moment the scheduler picks it, so the next cycle counts it, before the
 * async bind lands; the informer's add confirms it, a failed bind forgets it.
 * Single-threaded (event loop); snapshots are copy-on-write per node generation.
 */
import type { Clock } from '@mk8s/component-base';
import { NodeInfo, PodInfo, Snapshot, podKey, type Node, type Pod } from '../framework/types.js';

interface PodState {
  pod: Pod;
  nodeName: string;
  assumed: boolean;
  /** Set by finishBinding: an assumed pod whose bind returned is dropped after this if never confirmed. */
  deadline: number | undefined;
}

export interface SchedulerCacheOptions {
  clock: Clock;
  /** How long an assumed, bound pod may go unconfirmed by the informer. 0 = forever (upstream default). */
  assumedPodTtlMs?: number;
}

export class SchedulerCache {
  private readonly nodes = new Map<string, NodeInfo>();
  private readonly pods = new Map<string, PodState>();
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly snapshot = new Snapshot([]);
  /** Nodes whose NodeInfo changed since the last updateSnapshot. */
  private readonly dirty = new Set<string>();

  constructor(o: SchedulerCacheOptions) {
    this.clock = o.clock;
    this.ttlMs = o.assumedPodTtlMs ?? 0;
  }

  private nodeInfo(name: string): NodeInfo {
    let ni = this.nodes.get(name);
    if (!ni) { ni = new NodeInfo(); this.nodes.set(name, ni); }
    this.dirty.add(name);
    return ni;
  }

  addNode(node: Node): void {
    this.nodeInfo(node.metadata.name).setNode(node);
  }
  updateNode(node: Node): void { this.addNode(node); }
  removeNode(node: Node): void {
    const ni = this.nodes.get(node.metadata.name);
    if (!ni) return;
    // Pods still bound there keep a placeholder until they are deleted too.
    if (ni.pods.length) { ni.node = undefined; ni.generation++; } else this.nodes.delete(node.metadata.name);
    this.dirty.add(node.metadata.name);
  }

  private place(pod: Pod, nodeName: string): void {
    this.nodeInfo(nodeName).addPod(PodInfo.of(pod));
  }
  private unplace(pod: Pod, nodeName: string): void {
    const ni = this.nodes.get(nodeName);
    if (!ni) return;
    ni.removePod(podKey(pod));
    this.dirty.add(nodeName);
    if (!ni.node && ni.pods.length === 0) this.nodes.delete(nodeName);
  }

  /** Counts pod (with spec.nodeName set) on its node before the bind is written. */
  assumePod(pod: Pod): void {
    const key = podKey(pod);
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) throw new Error(`pod ${key} has no nodeName to assume`);
    if (this.pods.has(key)) throw new Error(`pod ${key} is in the cache, so can't be assumed`);
    this.place(pod, nodeName);
    this.pods.set(key, { pod, nodeName, assumed: true, deadline: undefined });
  }

  /** The bind returned; starts the expiry clock of the assumption (if a TTL is configured). */
  finishBinding(pod: Pod): void {
    const s = this.pods.get(podKey(pod));
    if (s?.assumed && this.ttlMs > 0) s.deadline = this.clock.now() + this.ttlMs;
  }

  /** Drops an assumption (bind failed). A confirmed pod is left alone. */
  forgetPod(pod: Pod): void {
    const key = podKey(pod);
    const s = this.pods.get(key);
    if (!s?.assumed) return;
    this.unplace(s.pod, s.nodeName);
    this.pods.delete(key);
  }

  isAssumedPod(pod: Pod): boolean { return this.pods.get(podKey(pod))?.assumed ?? false; }

  /** An assigned pod from the informer: confirms an assumption or adds it. */
  addPod(pod: Pod): void {
    const key = podKey(pod);
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return;
    const s = this.pods.get(key);
    if (s) {
      // Confirmed (maybe on another node, if someone else bound it): replace the assumed copy.
      this.unplace(s.pod, s.nodeName);
    }
    this.place(pod, nodeName);
    this.pods.set(key, { pod, nodeName, assumed: false, deadline: undefined });
  }

  updatePod(pod: Pod): void { this.addPod(pod); }

  removePod(pod: Pod): void {
    const key = podKey(pod);
    const s = this.pods.get(key);
    if (!s) return;
    this.unplace(s.pod, s.nodeName);
    this.pods.delete(key);
  }

  /** Drops assumptions whose bind finished more than the TTL ago without an informer add. */
  cleanupExpiredAssumedPods(): void {
    const now = this.clock.now();
    for (const s of [...this.pods.values()]) if (s.assumed && s.deadline !== undefined && s.deadline < now) this.forgetPod(s.pod);
  }

  /**
   * The snapshot for the next scheduling cycle: nodes changed since the last call are cloned into
   * it, the rest stay shared. Only nodes with a Node object appear. The same Snapshot object is
   * updated in place, so call this only between cycles.
   */
  updateSnapshot(): Snapshot {
    for (const name of this.dirty) {
      const ni = this.nodes.get(name);
      if (ni?.node) this.snapshot.set(ni.clone()); else this.snapshot.remove(name);
    }
    this.dirty.clear();
    this.snapshot.endUpdate();
    return this.snapshot;
  }

  nodeCount(): number { return [...this.nodes.values()].filter((n) => n.node).length; }
  podCount(): number { return this.pods.size; }
  /** The cached NodeInfo (for tests and debugging; do not mutate). */
  getNodeInfo(name: string): NodeInfo | undefined { return this.nodes.get(name); }
}
