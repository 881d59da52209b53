/**
 * ServiceAccount controller (upstream pkg/controller/serviceaccount ServiceAccountsController):
 * every active namespace has the `default` ServiceAccount; deleting it brings it back.
 * Watches Namespaces (add/update) and ServiceAccounts (delete); key: the namespace name;
 * writes ServiceAccounts (create only).
 */
import { isAlreadyExists, isNotFound, Namespaces, ServiceAccounts, type Namespace, type ServiceAccount } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import type { Obj } from '../../util/meta.js';

export interface ServiceAccountControllerOptions {
  /** The accounts every namespace gets. @default ['default'] */
  serviceAccounts?: readonly string[];
}

export class ServiceAccountController extends BaseController {
  static readonly NAME = 'serviceaccount';
  readonly name = ServiceAccountController.NAME;
  readonly namespaces: SharedInformer<Obj<Namespace>>;
  readonly serviceAccounts: SharedInformer<Obj<ServiceAccount>>;
  private readonly required: readonly string[];

  constructor(ctx: ControllerContext, o: ServiceAccountControllerOptions = {}) {
    super(ctx, 'serviceaccount');
    this.required = o.serviceAccounts ?? ['default'];
    this.namespaces = ctx.informers.informerFor<Obj<Namespace>>(Namespaces);
    this.serviceAccounts = ctx.informers.informerFor<Obj<ServiceAccount>>(ServiceAccounts);
    this.namespaces.addEventHandler({
      onAdd: (n) => this.enqueue(n.metadata.name),
      onUpdate: (_, n) => this.enqueue(n.metadata.name),
    });
    this.serviceAccounts.addEventHandler({
      onDelete: (sa) => { if (this.required.includes(sa.metadata.name) && sa.metadata.namespace) this.enqueue(sa.metadata.namespace); },
    });
  }

  async reconcile(namespace: string, signal: AbortSignal): Promise<void> {
    const ns = this.namespaces.lister.get(namespace);
    // Nothing new in a namespace that is gone or going (NamespaceLifecycle would refuse it anyway).
    if (!ns || ns.metadata.deletionTimestamp || (ns.status?.phase && ns.status.phase !== 'Active')) return;
    const client = this.ctx.client.resource<Obj<ServiceAccount>>(ServiceAccounts, namespace);
    for (const name of this.required) {
      if (this.serviceAccounts.lister.get(`${namespace}/${name}`)) continue;
      try {
        await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } }, { signal });
        this.log.info({ namespace, serviceAccount: name }, 'Created service account');
      } catch (err) {
        // Already there (the cache lags) or the namespace went away meanwhile: nothing to do.
        if (isAlreadyExists(err) || isNotFound(err)) continue;
        if ((err as { reason?: string }).reason === 'Forbidden' && /being terminated/.test(String((err as Error).message))) continue;
        throw err;
      }
    }
  }
}
