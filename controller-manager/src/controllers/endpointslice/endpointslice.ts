/**
 * EndpointSlice controller (upstream pkg/controller/endpointslice): keeps the slices labelled
 * kubernetes.io/service-name=<svc> and managed-by endpointslice-controller.k8s.io in line with
 * the Service's selected pods (see compute.ts). Watches Services, Pods and EndpointSlices; writes
 * EndpointSlices. A per-Service tracker of the writes not yet seen in the cache (upstream's
 * endpointSliceTracker) stops a slow watch from causing duplicate slices.
 */
import { EndpointSlices, isNotFound, labelSelectorFromSet, Nodes, Pods, Services, type EndpointSlice, type Node, type Pod, type Service } from '@mk8s/api';
import { newControllerRef, objectKey, splitKey, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { type Obj } from '../../util/meta.js';
import { hasSelector, watchPodsForServices } from '../endpoints/endpoints.js';
import { CONTROLLER_NAME, desiredEndpoints, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, planSlices } from './compute.js';

type SvcObj = Obj<Service>;
type PodObj = Obj<Pod>;
type SliceObj = Obj<EndpointSlice>;

const SERVICE_INDEX = 'service';
const STALE_TIMEOUT_MS = 60_000;

export class EndpointSliceController extends BaseController {
  static readonly NAME = 'endpointslice';
  readonly name = EndpointSliceController.NAME;
  readonly services: SharedInformer<SvcObj>;
  readonly pods: SharedInformer<PodObj>;
  readonly slices: SharedInformer<SliceObj>;
  readonly nodes: SharedInformer<Obj<Node>>;
  /** service key → slice name → resourceVersion we wrote ('' = deleted by us) and when. */
  private readonly written = new Map<string, Map<string, { rv: string; at: number }>>();

  constructor(ctx: ControllerContext) {
    super(ctx, 'endpoint_slice');
    this.services = ctx.informers.informerFor<SvcObj>(Services);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.slices = ctx.informers.informerFor<SliceObj>(EndpointSlices);
    this.nodes = ctx.informers.informerFor<Obj<Node>>(Nodes);
    this.slices.addIndexer(SERVICE_INDEX, (s) => {
      const svc = s.metadata.labels?.[LABEL_SERVICE_NAME];
      return svc && s.metadata.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME ? [`${s.metadata.namespace}/${svc}`] : [];
    });
    this.services.addEventHandler({ onAdd: (s) => this.enqueue(objectKey(s)), onUpdate: (_, s) => this.enqueue(objectKey(s)), onDelete: (s) => this.enqueue(objectKey(s)) });
    watchPodsForServices(this.pods, this.services.lister, this.enqueue);
    const bySlice = (s: SliceObj) => {
      const svc = s.metadata.labels?.[LABEL_SERVICE_NAME];
      if (svc && s.metadata.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME) this.enqueue(`${s.metadata.namespace}/${svc}`);
    };
    this.slices.addEventHandler({
      onAdd: bySlice, onUpdate: (_, s) => bySlice(s),
      onDelete: (s) => {
        // A deletion ends what we waited for on that slice, whoever deleted it.
        const svc = s.metadata.labels?.[LABEL_SERVICE_NAME];
        if (svc) this.written.get(`${s.metadata.namespace}/${svc}`)?.delete(s.metadata.name);
        bySlice(s);
      },
    });
  }

  /** True while a slice we wrote for key is not yet in the cache as written. */
  private stale(key: string): boolean {
    const w = this.written.get(key);
    if (!w) return false;
    const now = this.ctx.clock.now();
    for (const [name, { rv, at }] of w) {
      const cached = this.slices.lister.get(`${splitKey(key).namespace}/${name}`);
      const seen = rv === '' ? !cached : !!cached && rvAtLeast(cached.metadata.resourceVersion, rv);
      // Give up waiting after a while (as expectations do) so a lost event cannot wedge the Service.
      if (seen || now - at > STALE_TIMEOUT_MS) w.delete(name);
    }
    if (w.size === 0) this.written.delete(key);
    return w.size > 0;
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const { namespace } = splitKey(key);
    const client = this.ctx.client.resource<SliceObj>(EndpointSlices, namespace);
    const svc = this.services.lister.get(key);
    if (this.stale(key)) return { requeueAfterMs: 1000 };
    const existing = this.slices.lister.byIndex(SERVICE_INDEX, key);
    const track = (sliceName: string, rv: string) => {
      let w = this.written.get(key);
      if (!w) this.written.set(key, (w = new Map()));
      w.set(sliceName, { rv, at: this.ctx.clock.now() });
    };
    if (!svc || !hasSelector(svc)) {
      // Slices are owned by the Service, so the garbage collector would remove them too; do it now.
      if (!svc) {
        for (const s of existing) {
          try { await client.delete(s.metadata.name, { signal }); } catch (err) { if (!isNotFound(err)) throw err; }
        }
        this.written.delete(key);
      }
      return;
    }
    const selector = labelSelectorFromSet(svc.spec?.selector);
    const pods = this.pods.lister.list(namespace).filter((p) => selector.matches(p.metadata.labels));
    const plan = planSlices(svc, newControllerRef(svc, Services), desiredEndpoints(svc, pods, (n) => this.nodes.lister.get(n)?.metadata.labels?.['topology.kubernetes.io/zone']), existing);
    for (const s of plan.create) {
      const created = await client.create(s as SliceObj, { signal });
      track(created.metadata.name, created.metadata.resourceVersion ?? '0');
    }
    for (const s of plan.update) {
      const updated = await client.update(s as SliceObj, { signal });
      track(updated.metadata.name, updated.metadata.resourceVersion ?? '0');
    }
    for (const s of plan.delete) {
      try { await client.delete(s.metadata.name, { signal }); } catch (err) { if (!isNotFound(err)) throw err; }
      track(s.metadata.name, '');
    }
  }
}

function rvAtLeast(have: string | undefined, want: string): boolean {
  if (have === undefined) return false;
  if (/^\d+$/.test(have) && /^\d+$/.test(want)) return BigInt(have) >= BigInt(want);
  return have === want;
}
