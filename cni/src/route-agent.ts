/**
 * The node network agent (flannel's host-gw backend, in small): watches Nodes and keeps, in this
 * node's netns, one route per other node's spec.podCIDR via that node's InternalIP; and once this
 * node has a podCIDR, writes the mk8s-bridge conflist so the runtime can network pods.
 * Level-driven: every event enqueues one key and the reconcile reads the whole Node list.
 */
import { Nodes, type KubeObject, type Named, type Node } from '@mk8s/api';
import { createRateLimitingQueue, runWorkers, type Reconciler, type SharedInformer, type SharedInformerFactory, type WorkqueueMetricsProvider } from '@mk8s/client';
import type { Logger } from '@mk8s/component-base';
import { IprouteRouteOps, type HostGwRoute, type RouteOps } from './route-ops.js';
import { writeConflist } from './conflist.js';
import { parseCidr, formatCidr } from './cidr.js';

const KEY = 'routes';
type NodeObj = Named<Node> & KubeObject;

/** Options of {@link NodeRouteAgent}. */
export interface NodeRouteAgentOptions {
  nodeName: string;
  informers: SharedInformerFactory;
  logger: Logger;
  /** @default IprouteRouteOps in this process' netns */
  routes?: RouteOps;
  /** When set, the mk8s-bridge conflist for this node's podCIDR is written here. */
  cniConfDir?: string;
  /** Allocation dir written into the conflist. @default /var/lib/cni/mk8s-bridge/<nodeName> */
  cniDataDir?: string;
  /** workqueue_* metrics of the agent's queue (kube-proxy passes its registry's provider). @default none */
  queueMetrics?: WorkqueueMetricsProvider;
}

/** desiredRoutes is the pure heart of the agent: other nodes' podCIDRs via their InternalIPs. */
export function desiredRoutes(nodes: readonly Node[], self: string): HostGwRoute[] {
  const out: HostGwRoute[] = [];
  for (const n of nodes) {
    if (n.metadata?.name === self || n.metadata?.deletionTimestamp) continue;
    const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
    const cidrs = n.spec?.podCIDRs?.length ? n.spec.podCIDRs : n.spec?.podCIDR ? [n.spec.podCIDR] : [];
    if (!ip) continue;
    for (const c of cidrs) {
      if (c.includes(':')) continue;
      try { out.push({ dst: formatCidr(parseCidr(c)), via: ip }); } catch { /* invalid CIDR: nothing to route */ }
    }
  }
  return out.sort((a, b) => a.dst.localeCompare(b.dst));
}

/** NodeRouteAgent reconciles host-gw routes and the CNI config. Construct before informers.start(). */
export class NodeRouteAgent implements Reconciler {
  private readonly nodes: SharedInformer<NodeObj>;
  private readonly routes: RouteOps;
  private readonly queue: ReturnType<typeof createRateLimitingQueue<string>>;
  private lastPodCidr = '';

  constructor(private readonly o: NodeRouteAgentOptions) {
    this.queue = createRateLimitingQueue<string>({ name: 'node-routes', ...(o.queueMetrics ? { metricsProvider: o.queueMetrics } : {}) });
    this.nodes = o.informers.informerFor<NodeObj>(Nodes);
    this.routes = o.routes ?? new IprouteRouteOps();
    const enqueue = () => this.queue.add(KEY);
    this.nodes.addEventHandler({ onAdd: enqueue, onUpdate: enqueue, onDelete: enqueue });
  }

  /** Runs the reconcile worker until signal aborts (informers are started by the caller). */
  async run(signal: AbortSignal): Promise<void> {
    // A periodic pass repairs routes someone deleted by hand (we watch Nodes, not the kernel).
    const timer = setInterval(() => this.queue.add(KEY), 30_000);
    try {
      await runWorkers({ name: 'node-routes', queue: this.queue, reconciler: this, workers: 1, logger: this.o.logger, signal });
    } finally { clearInterval(timer); }
  }

  async reconcile(): Promise<void> {
    if (!this.nodes.hasSynced()) { this.queue.addAfter(KEY, 100); return; }
    const all = this.nodes.lister.list();
    const want = desiredRoutes(all, this.o.nodeName);
    const have = await this.routes.list();
    const wantBy = new Map(want.map((r) => [r.dst, r]));
    for (const r of have) {
      const w = wantBy.get(r.dst);
      if (!w) { await this.routes.delete(r.dst); this.o.logger.info({ dst: r.dst, via: r.via }, 'Deleted route to a node that is gone'); }
    }
    for (const r of want) {
      const h = have.find((x) => x.dst === r.dst);
      if (h?.via === r.via) continue;
      await this.routes.replace(r);
      this.o.logger.info({ dst: r.dst, via: r.via }, 'Added route to node pod CIDR');
    }
    const self = all.find((n) => n.metadata.name === this.o.nodeName);
    const podCidr = self?.spec?.podCIDR ?? '';
    if (podCidr && this.o.cniConfDir && podCidr !== this.lastPodCidr) {
      const wrote = await writeConflist(this.o.cniConfDir, { podCidr, dataDir: this.o.cniDataDir ?? `/var/lib/cni/mk8s-bridge/${this.o.nodeName}` });
      this.lastPodCidr = podCidr;
      if (wrote) this.o.logger.info({ podCidr, confDir: this.o.cniConfDir }, 'Wrote CNI config for pod CIDR');
    }
  }
}
