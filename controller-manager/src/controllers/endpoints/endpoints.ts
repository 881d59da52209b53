/**
 * Endpoints controller (upstream pkg/controller/endpoint): for every Service with a selector,
 * an Endpoints object of the same name listing the selected pods' IPs (ready ones under
 * addresses, others under notReadyAddresses) and each Service port resolved per pod.
 * Watches Services, Pods and Endpoints; writes Endpoints.
 */
import { EndpointsResource, isAlreadyExists, isNotFound, labelSelectorFromSet, Pods, Services, type Endpoints, type Pod, type Service } from '@mk8s/api';
import { objectKey, splitKey, type Lister, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { canonicalJson } from '../../util/hash.js';
import { clone, type Obj } from '../../util/meta.js';
import { computeSubsets } from './compute.js';

type SvcObj = Obj<Service>;
type PodObj = Obj<Pod>;
type EpObj = Obj<Endpoints>;

export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

/** Keys of the Services in pod's namespace whose selector matches its labels. */
export function servicesSelecting(services: Lister<SvcObj>, pod: PodObj): string[] {
  return services.list(pod.metadata.namespace).filter((s) => hasSelector(s) && labelSelectorFromSet(s.spec?.selector).matches(pod.metadata.labels)).map(objectKey);
}

export const hasSelector = (s: Service): boolean => !!s.spec?.selector && Object.keys(s.spec.selector).length > 0;

/** Registers pod handlers that enqueue the Services selecting the pod before and after a change. */
export function watchPodsForServices(pods: SharedInformer<PodObj>, services: Lister<SvcObj>, enqueue: (key: string) => void): void {
  const each = (p: PodObj) => { for (const k of servicesSelecting(services, p)) enqueue(k); };
  pods.addEventHandler({
    onAdd: each,
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion && old.metadata.resourceVersion !== undefined) return;
      each(cur);
      if (canonicalJson(old.metadata.labels ?? {}) !== canonicalJson(cur.metadata.labels ?? {})) each(old);
    },
    onDelete: each,
  });
}

export class EndpointsController extends BaseController {
  static readonly NAME = 'endpoints';
  readonly name = EndpointsController.NAME;
  readonly services: SharedInformer<SvcObj>;
  readonly pods: SharedInformer<PodObj>;
  readonly endpoints: SharedInformer<EpObj>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'endpoint');
    this.services = ctx.informers.informerFor<SvcObj>(Services);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.endpoints = ctx.informers.informerFor<EpObj>(EndpointsResource);
    this.services.addEventHandler({ onAdd: (s) => this.enqueue(objectKey(s)), onUpdate: (_, s) => this.enqueue(objectKey(s)), onDelete: (s) => this.enqueue(objectKey(s)) });
    watchPodsForServices(this.pods, this.services.lister, this.enqueue);
    // Someone else changed or removed our Endpoints: put them back.
    this.endpoints.addEventHandler({ onUpdate: (_, e) => this.enqueueIfService(e), onDelete: (e) => this.enqueueIfService(e) });
  }

  private enqueueIfService(e: EpObj): void {
    const key = objectKey(e);
    if (this.services.lister.get(key)) this.enqueue(key);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(key);
    const client = this.ctx.client.resource<EpObj>(EndpointsResource, namespace);
    const svc = this.services.lister.get(key);
    if (!svc) {
      // The Service is gone: so are its Endpoints (only if we would have managed them).
      if (this.endpoints.lister.get(key)) {
        try { await client.delete(name, { signal }); } catch (err) { if (!isNotFound(err)) throw err; }
      }
      return;
    }
    if (!hasSelector(svc)) return;
    const selector = labelSelectorFromSet(svc.spec?.selector);
    const pods = this.pods.lister.list(namespace).filter((p) => selector.matches(p.metadata.labels));
    const subsets = computeSubsets(svc, pods);
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    if (svc.spec?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
    else delete labels[HEADLESS_LABEL];

    const cur = this.endpoints.lister.get(key);
    if (cur && canonicalJson(cur.subsets ?? []) === canonicalJson(subsets) && canonicalJson(cur.metadata.labels ?? {}) === canonicalJson(labels)) return;
    if (!cur) {
      try {
        await client.create({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace, labels }, subsets }, { signal });
      } catch (err) {
        // Created by an earlier pass the cache has not shown yet: the update event will requeue us.
        if (!isAlreadyExists(err)) throw err;
      }
      return;
    }
    const next = clone(cur);
    next.metadata.labels = labels;
    next.subsets = subsets;
    await client.update(next, { signal });
  }
}
