/**
 * Test helpers for controller integration tests without a kubelet: `PodSim` plays the kubelet's
 * part through the API (binds pods when asked, reports them Running and Ready with an IP);
 * `startNode` registers a Ready node and renews its Lease until stopped. Real timers; for
 * integration tests only (`@mk8s/controller-manager/testing`).
 */
import { Leases, Namespaces, Nodes, Pods, type KubeObject, type Lease, type Node, type Pod } from '@mk8s/api';
import { newInformerFactory, type Clientset } from '@mk8s/client';
import type { Obj } from '../util/meta.js';

export type PodObj = Obj<Pod>;

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false | null> | T | undefined | false | null, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false && v !== null) return v as T;
    } catch (err) { last = err; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function createNamespace(client: Clientset, name: string): Promise<void> {
  await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

const iso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export function nodeObject(name: string, labels: Record<string, string> = {}): Obj<Node> {
  const now = iso();
  return {
    apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } }, spec: {},
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }] },
  } as Obj<Node>;
}

/** Registers a Ready node and keeps its Lease renewed until stop() (what a kubelet does). */
export async function startNode(client: Clientset, name: string, o: { labels?: Record<string, string>; renewMs?: number } = {}): Promise<{ stop(): void }> {
  const nodes = client.resource<Obj<Node>>(Nodes);
  let node: Obj<Node>;
  try { node = await nodes.create(nodeObject(name, o.labels)); } catch { node = await nodes.get(name); }
  await nodes.updateStatus({ ...node, status: nodeObject(name).status! }).catch(() => undefined);
  const leases = client.resource<Obj<Lease>>(Leases, 'kube-node-lease');
  const renew = async () => {
    const spec = { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date().toISOString().replace('Z', '000Z') };
    try {
      const cur = await leases.get(name);
      await leases.update({ ...cur, spec });
    } catch {
      await leases.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'kube-node-lease' }, spec } as Obj<Lease>).catch(() => undefined);
    }
  };
  await renew();
  const t = setInterval(() => void renew(), o.renewMs ?? 300);
  return { stop: () => clearInterval(t) };
}

/**
 * PodSim: for pods in namespace, optionally binds unbound pods to a node (round robin over
 * bindTo()), then reports them Running and Ready with a unique IP. `hold(name)` keeps a pod
 * from becoming ready; `setReady(name, false)` flips readiness.
 */
export class PodSim {
  private readonly ac = new AbortController();
  private readonly held = new Set<string>();
  private seq = 0;
  private rr = 0;
  private readonly busy = new Set<string>();
  constructor(private readonly client: Clientset, private readonly namespace: string, private readonly o: { bindTo?: () => string[]; ignoreNodes?: () => string[] } = {}) {}

  async start(): Promise<void> {
    const factory = newInformerFactory({ client: this.client });
    const inf = factory.informerFor<PodObj>(Pods, { namespace: this.namespace });
    const handle = (p: PodObj) => { void this.handle(p); };
    inf.addEventHandler({ onAdd: handle, onUpdate: (_, p) => handle(p) });
    factory.start(this.ac.signal);
    await factory.waitForCacheSync(this.ac.signal);
  }

  stop(): void { this.ac.abort(); }
  hold(name: string): void { this.held.add(name); }

  private async handle(pod: PodObj): Promise<void> {
    let p = pod;
    const name = p.metadata.name;
    if (p.metadata.deletionTimestamp || this.held.has(name) || this.busy.has(name)) return;
    const pods = this.client.resource<PodObj>(Pods, this.namespace);
    this.busy.add(name);
    try {
      const nodes = this.o.bindTo?.() ?? [];
      if (!p.spec?.nodeName && nodes.length) {
        const node = nodes[this.rr++ % nodes.length]!;
        await pods.createSubresource(name, 'binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace: this.namespace }, target: { apiVersion: 'v1', kind: 'Node', name: node } });
        p = await pods.get(name);
      }
      if (p.spec?.nodeName && this.o.ignoreNodes?.().includes(p.spec.nodeName)) return;
      if (p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready')) return;
      const n = ++this.seq;
      await this.setStatus(p, true, `10.244.${200 + Math.floor(n / 250)}.${(n % 250) + 2}`);
    } catch { /* pod gone or conflict: the next event retries */ } finally {
      this.busy.delete(name);
    }
  }

  private async setStatus(p: PodObj, ready: boolean, ip?: string): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const podIP = ip ?? p.status?.podIP;
    await this.client.resource<PodObj>(Pods, this.namespace).updateStatus({
      ...p,
      status: {
        phase: 'Running', ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}), startTime: p.status?.startTime ?? now,
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now }, { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: now }],
      },
    } as PodObj);
  }

  /** Sets a pod's Ready condition (and holds it there). */
  async setReady(name: string, ready: boolean): Promise<void> {
    this.held.add(name);
    const p = await this.client.resource<PodObj>(Pods, this.namespace).get(name);
    await this.setStatus(p, ready);
  }

  /** Lets a held pod become ready. */
  async release(name: string): Promise<void> {
    this.held.delete(name);
    const p = await this.client.resource<PodObj>(Pods, this.namespace).get(name).catch(() => undefined);
    if (p) await this.handle(p);
  }
}

export const byPrefix = (items: readonly KubeObject[], prefix: string) => items.filter((o) => o.metadata.name.startsWith(prefix));
