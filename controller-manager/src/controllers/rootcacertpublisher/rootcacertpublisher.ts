/**
 * Root CA certificate publisher (upstream pkg/controller/certificates/rootcacertpublisher): every
 * active namespace has the ConfigMap `kube-root-ca.crt` with key `ca.crt` holding the cluster CA,
 * so pods can verify the apiserver (the ServiceAccount admission's projected volume reads it).
 * Watches Namespaces (add/update) and ConfigMaps named kube-root-ca.crt (update/delete); key: the
 * namespace name; writes that ConfigMap (create/update).
 */
import { ConfigMaps, isAlreadyExists, isNotFound, Namespaces, type ConfigMap, type Namespace } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { clone, type Obj } from '../../util/meta.js';

export const ROOT_CA_CONFIGMAP_NAME = 'kube-root-ca.crt';
export const ROOT_CA_KEY = 'ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
/** Upstream's description, word for word. */
export const DESCRIPTION = 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. '
  + 'No other usage is guaranteed across distributions of Kubernetes clusters.';

export interface RootCACertPublisherOptions {
  /** The PEM bundle published (contents of --root-ca-file). */
  rootCA: string;
}

export class RootCACertPublisher extends BaseController {
  static readonly NAME = 'root-ca-cert-publisher';
  readonly name = RootCACertPublisher.NAME;
  readonly namespaces: SharedInformer<Obj<Namespace>>;
  readonly configMaps: SharedInformer<Obj<ConfigMap>>;

  constructor(ctx: ControllerContext, private readonly o: RootCACertPublisherOptions) {
    super(ctx, 'root_ca_cert_publisher');
    this.namespaces = ctx.informers.informerFor<Obj<Namespace>>(Namespaces);
    this.configMaps = ctx.informers.informerFor<Obj<ConfigMap>>(ConfigMaps);
    this.namespaces.addEventHandler({
      onAdd: (n) => this.enqueue(n.metadata.name),
      onUpdate: (_, n) => this.enqueue(n.metadata.name),
    });
    const ours = (cm: Obj<ConfigMap>) => cm.metadata.name === ROOT_CA_CONFIGMAP_NAME && !!cm.metadata.namespace;
    this.configMaps.addEventHandler({
      onUpdate: (_, cm) => { if (ours(cm)) this.enqueue(cm.metadata.namespace!); },
      onDelete: (cm) => { if (ours(cm)) this.enqueue(cm.metadata.namespace!); },
    });
  }

  async reconcile(namespace: string, signal: AbortSignal): Promise<void> {
    const ns = this.namespaces.lister.get(namespace);
    if (!ns || ns.metadata.deletionTimestamp || (ns.status?.phase && ns.status.phase !== 'Active')) return;
    const client = this.ctx.client.resource<Obj<ConfigMap>>(ConfigMaps, namespace);
    const cached = this.configMaps.lister.get(`${namespace}/${ROOT_CA_CONFIGMAP_NAME}`);
    if (!cached) {
      try {
        await client.create({
          apiVersion: 'v1', kind: 'ConfigMap',
          metadata: { name: ROOT_CA_CONFIGMAP_NAME, namespace, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
          data: { [ROOT_CA_KEY]: this.o.rootCA },
        }, { signal });
        this.log.info({ namespace }, 'Published root CA ConfigMap');
      } catch (err) {
        if (isAlreadyExists(err) || isNotFound(err)) return;
        if ((err as { reason?: string }).reason === 'Forbidden' && /being terminated/.test(String((err as Error).message))) return;
        throw err;
      }
      return;
    }
    const data = cached.data ?? {};
    const upToDate = Object.keys(data).length === 1 && data[ROOT_CA_KEY] === this.o.rootCA && cached.metadata.annotations?.[DESCRIPTION_ANNOTATION] === DESCRIPTION;
    if (upToDate) return;
    const next = clone(cached);
    next.data = { [ROOT_CA_KEY]: this.o.rootCA };
    next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [DESCRIPTION_ANNOTATION]: DESCRIPTION };
    try {
      await client.update(next, { signal });
      this.log.info({ namespace }, 'Updated root CA ConfigMap');
    } catch (err) {
      if (isNotFound(err)) { this.enqueue(namespace); return; }
      throw err;
    }
  }
}
