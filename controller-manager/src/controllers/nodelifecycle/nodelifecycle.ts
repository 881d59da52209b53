/**
 * Node lifecycle controller (upstream pkg/controller/nodelifecycle + taint-eviction): a monitor
 * loop notices nodes whose Lease (kube-node-lease/<node>) and Ready heartbeat stopped for the
 * grace period and marks their conditions Unknown and their pods not ready; a per-node reconcile
 * keeps the condition taints (NoSchedule at once, NoExecute rate-limited per zone and suspended
 * when every zone is down) and deletes pods that do not tolerate the NoExecute taints for long.
 * Watches Nodes, Leases and Pods; writes Node status and taints, Pod status, Pod deletions, Events.
 */
import { isConflict, isNotFound, Leases, Nodes, Pods, type Lease, type Node, type NodeCondition, type Pod, type Taint } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { canonicalJson } from '../../util/hash.js';
import { clone, rfc3339, type Obj } from '../../util/meta.js';
import { isPodReady } from '../../util/pods.js';
import * as dec from './decisions.js';

type NodeObj = Obj<Node>;
type LeaseObj = Obj<Lease>;
type PodObj = Obj<Pod>;

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const NODE_INDEX = 'spec.nodeName';

export interface NodeLifecycleOptions {
  /** @default 50_000 */
  nodeMonitorGracePeriodMs?: number;
  /** @default 60_000 */
  nodeStartupGracePeriodMs?: number;
  /** How often the monitor runs. @default 5_000 */
  nodeMonitorPeriodMs?: number;
  /** tolerationSeconds given to pods without a not-ready/unreachable toleration. @default 300 */
  defaultTolerationSeconds?: number;
  /** @default 0.1 */
  evictionQPS?: number;
  /** @default 0.01 */
  secondaryEvictionQPS?: number;
  /** @default 50 */
  largeClusterThreshold?: number;
  /** @default 0.55 */
  unhealthyZoneThreshold?: number;
}

interface Health { probeTimestamp: number; readyHeartbeat: string | undefined; leaseRenew: string | undefined }

export class NodeLifecycleController extends BaseController {
  static readonly NAME = 'nodelifecycle';
  readonly name = NodeLifecycleController.NAME;
  readonly nodes: SharedInformer<NodeObj>;
  readonly leases: SharedInformer<LeaseObj>;
  readonly pods: SharedInformer<PodObj>;
  private readonly o: Required<NodeLifecycleOptions>;
  private readonly health = new Map<string, Health>();
  private readonly zoneStates = new Map<string, { state: dec.ZoneState; size: number }>();
  private allZonesDisrupted = false;
  /** Per zone: when the next NoExecute taint may be added (token bucket with burst 1). */
  private readonly zoneNextTaint = new Map<string, number>();

  constructor(ctx: ControllerContext, o: NodeLifecycleOptions = {}) {
    super(ctx, 'node_lifecycle');
    this.o = {
      nodeMonitorGracePeriodMs: 50_000, nodeStartupGracePeriodMs: 60_000, nodeMonitorPeriodMs: 5_000, defaultTolerationSeconds: 300,
      evictionQPS: 0.1, secondaryEvictionQPS: 0.01, largeClusterThreshold: 50, unhealthyZoneThreshold: 0.55, ...o,
    };
    this.nodes = ctx.informers.informerFor<NodeObj>(Nodes);
    this.leases = ctx.informers.informerFor<LeaseObj>(Leases, { namespace: NODE_LEASE_NAMESPACE });
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.pods.addIndexer(NODE_INDEX, (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
    this.nodes.addEventHandler({
      onAdd: (n) => this.enqueue(n.metadata.name),
      onUpdate: (_, n) => this.enqueue(n.metadata.name),
      onDelete: (n) => { this.health.delete(n.metadata.name); },
    });
    const podChanged = (p: PodObj) => { if (p.spec?.nodeName && !p.metadata.deletionTimestamp) this.enqueue(p.spec.nodeName); };
    this.pods.addEventHandler({ onAdd: podChanged, onUpdate: (_, p) => podChanged(p) });
  }

  protected override async background(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try { await this.monitorNodeHealth(signal); } catch (err) { if (!signal.aborted) this.log.warn({ err }, 'Node health monitor pass failed'); }
      try { await this.ctx.clock.sleep(this.o.nodeMonitorPeriodMs, signal); } catch { return; }
    }
  }

  /** One monitor pass (monitorNodeHealth): update node health, zone states, then enqueue every node. */
  async monitorNodeHealth(signal: AbortSignal): Promise<void> {
    const now = this.ctx.clock.now();
    const zones = new Map<string, (string | undefined)[]>();
    for (const cached of this.nodes.lister.list()) {
      let node = cached;
      try {
        node = await this.tryUpdateNodeHealth(cached, now, signal);
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) this.log.warn({ err, node: cached.metadata.name }, 'Updating node health failed');
      }
      const z = dec.zoneOf(node);
      zones.set(z, [...(zones.get(z) ?? []), dec.readyCondition(node)?.status]);
    }
    this.zoneStates.clear();
    for (const [z, statuses] of zones) {
      const { state } = dec.computeZoneState(statuses, this.o.unhealthyZoneThreshold);
      this.zoneStates.set(z, { state, size: statuses.length });
    }
    const all = zones.size > 0 && [...this.zoneStates.values()].every((z) => z.state === 'FullDisruption');
    if (all !== this.allZonesDisrupted) {
      if (all) this.log.warn('Controller detected that all Nodes are not-Ready. Entering master disruption mode');
      else {
        this.log.info('Controller detected that some Nodes are Ready. Exiting master disruption mode');
        // As upstream's handleDisruption: every node gets a fresh grace period (the outage may have been
        // the control plane's), and each zone's eviction pacing starts over.
        for (const h of this.health.values()) h.probeTimestamp = now;
        this.zoneNextTaint.clear();
      }
    }
    this.allZonesDisrupted = all;
    for (const n of this.nodes.lister.list()) this.enqueue(n.metadata.name);
  }

  /** tryUpdateNodeHealth: after the grace period without a heartbeat or lease renewal, conditions go Unknown. */
  private async tryUpdateNodeHealth(node: NodeObj, now: number, signal: AbortSignal): Promise<NodeObj> {
    const name = node.metadata.name;
    const ready = dec.readyCondition(node);
    const lease = this.leases.lister.get(`${NODE_LEASE_NAMESPACE}/${name}`);
    const renew = lease?.spec?.renewTime;
    let h = this.health.get(name);
    if (!h) {
      h = { probeTimestamp: now, readyHeartbeat: ready?.lastHeartbeatTime, leaseRenew: renew };
      this.health.set(name, h);
      this.ctx.recorder.event(node, 'Normal', 'RegisteredNode', 'Node %s event: Registered Node %s in Controller', name, name);
    } else {
      if (ready?.lastHeartbeatTime !== h.readyHeartbeat) { h.readyHeartbeat = ready?.lastHeartbeatTime; h.probeTimestamp = now; }
      if (renew && renew !== h.leaseRenew) { h.leaseRenew = renew; h.probeTimestamp = now; }
    }
    const grace = ready ? this.o.nodeMonitorGracePeriodMs : this.o.nodeStartupGracePeriodMs;
    if (now <= h.probeTimestamp + grace) return node;

    const conditions: NodeCondition[] = clone(node.status?.conditions ?? []);
    const nowStr = rfc3339(now);
    let changed = false;
    if (!ready) {
      conditions.push({ type: 'Ready', status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: node.metadata.creationTimestamp ?? nowStr, lastTransitionTime: nowStr });
      changed = true;
    }
    for (const c of conditions) {
      if (!['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].includes(c.type) || c.status === 'Unknown') continue;
      c.status = 'Unknown';
      c.reason = 'NodeStatusUnknown';
      c.message = 'Kubelet stopped posting node status.';
      c.lastTransitionTime = nowStr;
      changed = true;
    }
    if (!changed) return node;
    const next: NodeObj = { ...clone(node), status: { ...clone(node.status ?? {}), conditions } };
    const updated = await this.ctx.client.resource<NodeObj>(Nodes).updateStatus(next, { signal });
    this.log.info({ node: name }, 'Node stopped posting status; marked its conditions Unknown');
    this.ctx.recorder.event(updated, 'Normal', 'NodeNotReady', 'Node %s status is now: NodeNotReady', name);
    await this.markPodsNotReady(name, signal);
    return updated;
  }

  /** MarkPodsNotReady: pods on a node that stopped reporting are no longer Ready (so endpoints drop them). */
  private async markPodsNotReady(nodeName: string, signal: AbortSignal): Promise<void> {
    const now = rfc3339(this.ctx.clock.now());
    for (const p of this.pods.lister.byIndex(NODE_INDEX, nodeName)) {
      if (!isPodReady(p) || p.metadata.deletionTimestamp) continue;
      const next = clone(p);
      for (const c of next.status?.conditions ?? []) if (c.type === 'Ready') { c.status = 'False'; c.lastTransitionTime = now; }
      try {
        await this.ctx.client.resource<PodObj>(Pods, p.metadata.namespace).updateStatus(next, { signal });
        this.ctx.recorder.event(p, 'Warning', 'NodeNotReady', 'Node is not ready');
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
    }
  }

  /** Per node: keep the condition taints, then evict pods that must go. Requeues for the next eviction. */
  async reconcile(name: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    let node = this.nodes.lister.get(name);
    if (!node) return;
    const now = this.ctx.clock.now();
    let requeue: number | undefined;
    const want = this.desiredTaints(node, now);
    if (want.deferMs !== undefined) requeue = want.deferMs;
    if (canonicalJson(want.taints) !== canonicalJson(node.spec?.taints ?? [])) {
      const next = clone(node);
      next.spec = { ...(next.spec ?? {}), taints: want.taints };
      if (want.taints.length === 0) delete next.spec.taints;
      node = await this.ctx.client.resource<NodeObj>(Nodes).update(next, { signal });
      for (const k of want.added) this.log.info({ node: name, taint: k }, 'Added taint to node');
    }
    const taints = node.spec?.taints ?? [];
    for (const p of this.pods.lister.byIndex(NODE_INDEX, name)) {
      if (p.metadata.deletionTimestamp || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
      const at = dec.evictionTime(p, taints, this.o.defaultTolerationSeconds, now);
      if (at === 'never') continue;
      if (at === 'now' || at <= now) {
        try {
          this.ctx.recorder.event(p, 'Normal', 'TaintManagerEviction', 'Marking for deletion Pod %s', `${p.metadata.namespace}/${p.metadata.name}`);
          await this.ctx.client.resource<PodObj>(Pods, p.metadata.namespace).delete(p.metadata.name, { signal, ...(p.metadata.uid ? { preconditions: { uid: p.metadata.uid } } : {}) });
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
      } else {
        requeue = Math.min(requeue ?? Infinity, at - now);
      }
    }
    return requeue === undefined ? undefined : { requeueAfterMs: Math.max(100, requeue) };
  }

  /** The node's taints with the controller-managed ones brought in line with its conditions. */
  private desiredTaints(node: NodeObj, now: number): { taints: Taint[]; added: string[]; deferMs?: number } {
    const current = node.spec?.taints ?? [];
    const keepForeign = current.filter((t) => !((t.effect === 'NoSchedule' && dec.MANAGED_NO_SCHEDULE.has(t.key)) || (t.effect === 'NoExecute' && dec.MANAGED_NO_EXECUTE.has(t.key))));
    const out: Taint[] = [...keepForeign];
    const added: string[] = [];
    for (const key of dec.wantedNoScheduleKeys(node)) {
      out.push(current.find((t) => t.key === key && t.effect === 'NoSchedule') ?? { key, effect: 'NoSchedule' });
    }
    let deferMs: number | undefined;
    const key = this.allZonesDisrupted ? undefined : dec.wantedNoExecuteKey(node);
    if (key) {
      const have = current.find((t) => t.key === key && t.effect === 'NoExecute');
      if (have) {
        out.push(have);
      } else {
        const wait = this.takeZoneToken(dec.zoneOf(node), now);
        if (wait === 0) {
          out.push({ key, effect: 'NoExecute', timeAdded: rfc3339(now) });
          added.push(key);
        } else {
          // Swapping not-ready ↔ unreachable keeps the old taint meanwhile (as upstream's swapNodeControllerTaint).
          const other = current.find((t) => t.effect === 'NoExecute' && dec.MANAGED_NO_EXECUTE.has(t.key));
          if (other) out.push(other);
          deferMs = wait;
        }
      }
    }
    return { taints: out, added, ...(deferMs !== undefined && deferMs !== Infinity ? { deferMs } : {}) };
  }

  /** 0 when a NoExecute taint may be added in zone now (and spends the token), else ms to wait (Infinity: never). */
  private takeZoneToken(zone: string, now: number): number {
    const z = this.zoneStates.get(zone);
    const qps = dec.zoneEvictionQPS(z?.state ?? 'Normal', z?.size ?? 0, this.o);
    if (qps <= 0) return Infinity;
    const next = this.zoneNextTaint.get(zone) ?? 0;
    if (now < next) return next - now;
    this.zoneNextTaint.set(zone, now + 1000 / qps);
    return 0;
  }

  /** Zone states as last computed (for tests and metrics). */
  zones(): ReadonlyMap<string, { state: dec.ZoneState; size: number }> { return this.zoneStates; }
}
