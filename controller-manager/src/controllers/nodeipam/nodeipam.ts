/**
 * Node IPAM controller, range allocator (upstream pkg/controller/nodeipam): gives every Node a
 * spec.podCIDR (and podCIDRs) from the cluster CIDR, never the same range to two nodes, and
 * frees a node's range when it is deleted. Watches Nodes; writes Node spec.podCIDR and Events.
 */
import { isNotFound, Nodes, type Node } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import type { Obj } from '../../util/meta.js';
import { CidrSet } from './cidrset.js';

type NodeObj = Obj<Node>;

export interface NodeIpamOptions {
  /** @default '10.244.0.0/16' */
  clusterCIDR?: string;
  /** @default 24 */
  nodeCIDRMaskSize?: number;
}

export class NodeIpamController extends BaseController {
  static readonly NAME = 'nodeipam';
  readonly name = NodeIpamController.NAME;
  readonly nodes: SharedInformer<NodeObj>;
  readonly cidrs: CidrSet;
  /** Allocations written but not yet seen in the cache, by node name. */
  private readonly pending = new Map<string, string>();
  private initialized = false;

  constructor(ctx: ControllerContext, o: NodeIpamOptions = {}) {
    super(ctx, 'nodeipam');
    this.defaultWorkers = 1; // allocation order is irrelevant; one worker keeps the set simple
    this.cidrs = new CidrSet(o.clusterCIDR ?? '10.244.0.0/16', o.nodeCIDRMaskSize ?? 24);
    this.nodes = ctx.informers.informerFor<NodeObj>(Nodes);
    this.nodes.addEventHandler({
      onAdd: (n) => this.enqueue(n.metadata.name),
      onUpdate: (_, n) => { if (!n.spec?.podCIDR) this.enqueue(n.metadata.name); else this.observe(n); },
      onDelete: (n) => {
        const cidr = n.spec?.podCIDR ?? this.pending.get(n.metadata.name);
        this.pending.delete(n.metadata.name);
        if (cidr && !this.nodes.lister.list().some((x) => x.spec?.podCIDR === cidr)) this.cidrs.release(cidr);
      },
    });
  }

  private observe(n: NodeObj): void {
    if (n.spec?.podCIDR) {
      this.cidrs.occupy(n.spec.podCIDR);
      if (this.pending.get(n.metadata.name) === n.spec.podCIDR) this.pending.delete(n.metadata.name);
    }
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    if (!this.initialized) {
      // Every range already handed out must be known before the first new allocation.
      for (const n of this.nodes.lister.list()) this.observe(n);
      this.initialized = true;
    }
    const node = this.nodes.lister.get(name);
    if (!node) return;
    if (node.spec?.podCIDR) { this.observe(node); return; }
    const client = this.ctx.client.resource<NodeObj>(Nodes);
    let cidr = this.pending.get(name);
    if (cidr) {
      // We wrote (or tried to write) a range already: the server, not the lagging cache, says if it landed.
      let fresh: NodeObj;
      try { fresh = await client.get(name, { signal }); } catch (err) {
        if (isNotFound(err)) { this.pending.delete(name); this.cidrs.release(cidr); return; }
        throw err;
      }
      if (fresh.spec?.podCIDR) {
        if (fresh.spec.podCIDR !== cidr) this.cidrs.release(cidr);
        this.pending.delete(name);
        this.observe(fresh);
        return;
      }
    } else {
      cidr = this.cidrs.allocateNext();
      if (!cidr) {
        this.ctx.recorder.event(node, 'Warning', 'CIDRNotAvailable', 'Node %s status is now: CIDRNotAvailable', name);
        throw new Error(`no remaining CIDRs for node ${name}`);
      }
      this.pending.set(name, cidr);
    }
    try {
      await client.patch(name, 'merge', {
        metadata: { resourceVersion: node.metadata.resourceVersion },
        spec: { podCIDR: cidr, podCIDRs: [cidr] },
      }, { signal });
      this.log.info({ node: name, podCIDR: cidr }, 'Assigned pod CIDR to node');
    } catch (err) {
      // Keep the range reserved for this node (the write may have landed); the retry checks the server.
      if (isNotFound(err)) { this.pending.delete(name); this.cidrs.release(cidr); return; }
      this.ctx.recorder.event(node, 'Warning', 'CIDRAssignmentFailed', 'Node %s status is now: CIDRAssignmentFailed', name);
      throw err;
    }
  }
}
