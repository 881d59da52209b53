/**
 * Node registration, Lease heartbeat and NodeStatus (upstream kubelet `kubelet_node_status.go`,
 * `nodelease`). Registers the Node once (create, or adopt an existing one), renews the Lease in
 * kube-node-lease every 10 s, and posts status every 10 s when something changed (or every
 * minute regardless). Hands the node's podCIDR to the runtime when the IPAM controller sets it.
 */
import { readFileSync, statfsSync } from 'node:fs';
import { cpus, totalmem, hostname, release } from 'node:os';
import { runEvery, type Clock, type Logger } from '@mk8s/component-base';
import { Backoff, type Clientset, type EventRecorder } from '@mk8s/client';
import { Leases, Nodes, isAlreadyExists, isNotFound, isConflict, type Node, type NodeCondition } from '@mk8s/api';
import type { RuntimeService } from '@mk8s/proto';
import { isDeepStrictEqual } from 'node:util';
import { KUBELET_VERSION } from './labels.js';
import type { LeaseObj, NodeObj } from './objects.js';
import { rfc3339 } from './status.js';

export interface NodeStatusOptions {
  client: Clientset;
  runtime: RuntimeService;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  nodeIP: string;
  rootDir: string;
  /** @default 10250 */
  kubeletPort?: number;
  /** @default 110 */
  maxPods?: number;
  /** @default 10_000 */
  leaseRenewMs?: number;
  /** @default 10_000 */
  statusUpdateMs?: number;
  /** Status is posted at least this often even when unchanged. @default 60_000 */
  statusReportMs?: number;
  /** @default 40 */
  leaseDurationSeconds?: number;
  /** Overrides the machine's facts (tests). */
  machine?: Partial<MachineInfo>;
}

export interface MachineInfo { cpu: number; memoryKi: number; ephemeralKi: number; osImage: string; kernelVersion: string; arch: string; machineID: string; bootID: string; hostname: string }

const tryRead = (p: string) => { try { return readFileSync(p, 'utf8').trim(); } catch { return ''; } };

export function machineInfo(rootDir: string): MachineInfo {
  let ephemeralKi = 0;
  try { const s = statfsSync(rootDir); ephemeralKi = Math.floor((s.blocks * s.bsize) / 1024); } catch { /* not there yet */ }
  const osRelease = tryRead('/etc/os-release');
  return {
    cpu: cpus().length,
    memoryKi: Math.floor(totalmem() / 1024),
    ephemeralKi,
    osImage: /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] ?? 'Linux',
    kernelVersion: release(),
    arch: process.arch === 'x64' ? 'amd64' : process.arch,
    machineID: tryRead('/etc/machine-id'),
    bootID: tryRead('/proc/sys/kernel/random/boot_id'),
    hostname: hostname(),
  };
}

/** microTime formats ms as a metav1.MicroTime. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

export class NodeStatusManager {
  private registered = false;
  private lastPosted: { status: unknown; atMs: number } | undefined;
  private node: Node | undefined;
  private podCidr = '';
  private runtimeVersion = '';
  private readonly m: MachineInfo;
  constructor(private readonly o: NodeStatusOptions) {
    this.m = { ...machineInfo(o.rootDir), ...o.machine };
  }

  isRegistered(): boolean { return this.registered; }

  private labels(): Record<string, string> {
    return { 'kubernetes.io/hostname': this.o.nodeName, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': this.m.arch, 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': this.m.arch };
  }

  /** The status the kubelet reports now (conditions keep their transition times). */
  async desiredStatus(): Promise<NonNullable<Node['status']>> {
    const now = this.o.clock.now();
    let runtimeReady = false; let networkReady = false; let notReadyMsg = '';
    try {
      if (!this.runtimeVersion) this.runtimeVersion = (await this.o.runtime.version()).runtimeVersion;
      const st = await this.o.runtime.status();
      const rc = st.conditions.find((c) => c.type === 'RuntimeReady');
      const nc = st.conditions.find((c) => c.type === 'NetworkReady');
      runtimeReady = !!rc?.status; networkReady = !!nc?.status;
      if (!runtimeReady) notReadyMsg = `container runtime not ready: RuntimeReady=false reason:${rc?.reason ?? ''} message:${rc?.message ?? ''}`;
      else if (!networkReady) notReadyMsg = `container runtime network not ready: NetworkReady=false reason:${nc?.reason ?? ''} message:${nc?.message ?? ''}`;
    } catch (err) {
      notReadyMsg = `container runtime is down: ${err instanceof Error ? err.message : String(err)}`;
    }
    const old = this.node?.status?.conditions ?? [];
    const cond = (type: string, ok: boolean, reason: string, message: string): NodeCondition => {
      const status = ok ? 'True' : 'False';
      const prev = old.find((c) => c.type === type);
      return { type, status, lastHeartbeatTime: rfc3339(now), lastTransitionTime: prev?.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(now), reason, message };
    };
    const ready = runtimeReady && networkReady;
    const resources = {
      cpu: String(this.m.cpu), memory: `${this.m.memoryKi}Ki`, pods: String(this.o.maxPods ?? 110),
      ...(this.m.ephemeralKi ? { 'ephemeral-storage': `${this.m.ephemeralKi}Ki` } : {}),
    };
    return {
      capacity: resources,
      allocatable: resources,
      conditions: [
        cond('MemoryPressure', false, 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', false, 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', false, 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        ready ? cond('Ready', true, 'KubeletReady', 'kubelet is posting ready status') : cond('Ready', false, 'KubeletNotReady', notReadyMsg),
      ],
      addresses: [{ type: 'InternalIP', address: this.o.nodeIP }, { type: 'Hostname', address: this.o.nodeName }],
      daemonEndpoints: { kubeletEndpoint: { Port: this.o.kubeletPort ?? 10250 } },
      nodeInfo: {
        machineID: this.m.machineID, systemUUID: this.m.machineID, bootID: this.m.bootID, kernelVersion: this.m.kernelVersion,
        osImage: this.m.osImage, containerRuntimeVersion: `docker://${this.runtimeVersion || 'unknown'}`, kubeletVersion: KUBELET_VERSION,
        kubeProxyVersion: KUBELET_VERSION, operatingSystem: 'linux', architecture: this.m.arch,
      },
    };
  }

  /** Registers the Node (idempotent). Rejects when the apiserver is unreachable. */
  async register(): Promise<void> {
    const nodes = this.o.client.resource<NodeObj>(Nodes);
    const status = await this.desiredStatus();
    try {
      this.node = await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: this.o.nodeName, labels: this.labels() }, spec: {}, status } as NodeObj);
      this.o.logger.info({ node: this.o.nodeName }, 'Registered node');
      this.o.recorder.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: this.o.nodeName, uid: this.o.nodeName } }, 'Normal', 'Starting', 'Starting kubelet.');
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const cur = await nodes.get(this.o.nodeName);
      const missing = Object.entries(this.labels()).some(([k, v]) => cur.metadata?.labels?.[k] !== v);
      this.node = missing ? await nodes.patch(this.o.nodeName, 'merge', { metadata: { labels: this.labels() } }) : cur;
      this.o.logger.info({ node: this.o.nodeName }, 'Adopted existing node');
    }
    this.registered = true;
    await this.postStatus(true);
  }

  /** Posts status when it changed (ignoring heartbeats) or the report interval passed. */
  async postStatus(force = false): Promise<void> {
    const status = await this.desiredStatus();
    const strip = (s: typeof status) => ({ ...s, conditions: s.conditions?.map(({ lastHeartbeatTime: _h, ...c }) => c) });
    const now = this.o.clock.now();
    const changed = !this.lastPosted || !isDeepStrictEqual(this.lastPosted.status, strip(status));
    if (!force && !changed && now - (this.lastPosted?.atMs ?? 0) < (this.o.statusReportMs ?? 60_000)) return;
    const wasReady = this.node?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    this.node = await this.o.client.resource<NodeObj>(Nodes).patch(this.o.nodeName, 'merge', { status }, { subresource: 'status' });
    const isReady = status.conditions?.find((c) => c.type === 'Ready')?.status;
    if (wasReady !== isReady) {
      this.o.recorder.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: this.o.nodeName, uid: this.o.nodeName } }, 'Normal', isReady === 'True' ? 'NodeReady' : 'NodeNotReady',
        `Node ${this.o.nodeName} status is now: ${isReady === 'True' ? 'NodeReady' : 'NodeNotReady'}`);
    }
    this.lastPosted = { status: strip(status), atMs: now };
  }

  /** Creates or renews the node's Lease. */
  async renewLease(): Promise<void> {
    const leases = this.o.client.resource<LeaseObj>(Leases, 'kube-node-lease');
    const now = microTime(this.o.clock.now());
    const spec = { holderIdentity: this.o.nodeName, leaseDurationSeconds: this.o.leaseDurationSeconds ?? 40, renewTime: now };
    try {
      const cur = await leases.get(this.o.nodeName);
      await leases.update({ ...cur, spec: { ...cur.spec, ...spec } });
    } catch (err) {
      if (isConflict(err)) return; // renewed by a concurrent attempt; next tick wins
      if (!isNotFound(err)) throw err;
      const owner = this.node?.metadata?.uid ? [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: this.node.metadata.uid }] : [];
      await leases.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.o.nodeName, namespace: 'kube-node-lease', ownerReferences: owner }, spec: { ...spec, acquireTime: now } });
    }
  }

  /** Called with every version of our Node the informer sees. */
  onNode(node: Node): void {
    this.node = node;
    const cidr = node.spec?.podCIDR ?? '';
    if (cidr && cidr !== this.podCidr) {
      this.podCidr = cidr;
      this.o.runtime.updateRuntimeConfig({ networkConfig: { podCidr: cidr } }).then(
        () => { this.o.logger.info({ podCidr: cidr }, 'Updated runtime pod CIDR'); void this.postStatus().catch(() => undefined); },
        (err: unknown) => { this.podCidr = ''; this.o.logger.warn({ err, podCidr: cidr }, 'Could not update runtime pod CIDR'); },
      );
    }
  }

  /**
   * Registers (retrying with back-off: upstream `registerWithAPIServer`, here 500 ms doubling to
   * 7 s), then renews the Lease (at once, then every leaseRenewMs: upstream's `nodelease`
   * controller) and posts status every statusUpdateMs (upstream `syncNodeStatus` on
   * `wait.Until`), both on component-base's runEvery, until signal aborts.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.o;
    const backoff = new Backoff({ clock, initialMs: 500, maxMs: 7_000 });
    while (!signal.aborted && !this.registered) {
      try { await this.register(); } catch (err) {
        backoff.next('register');
        logger.warn({ err, retryInMs: backoff.get('register') }, 'Could not register node, retrying');
        await clock.sleep(backoff.get('register'), signal).catch(() => undefined);
      }
    }
    if (signal.aborted) return;
    await Promise.all([
      runEvery(this.o.leaseRenewMs ?? 10_000, () => this.renewLease(), { clock, signal, logger, what: 'Node lease renewal' }),
      runEvery(this.o.statusUpdateMs ?? 10_000, () => this.postStatus(), { clock, signal, logger, what: 'Node status update', immediate: false }),
    ]);
  }
}
