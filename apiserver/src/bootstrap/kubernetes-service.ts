/**
 * The `default/kubernetes` Service and its Endpoints/EndpointSlice, pointing pods at the
 * apiservers (upstream's master endpoint reconciler). Each apiserver adds its own advertise
 * address; addresses of apiservers that are gone are left for an operator (no lease reconciler yet).
 */
import { EndpointSlices, EndpointsResource, Services, type KubeObject } from '@mk8s/api';
import type { Registry, RequestContext } from '../registry/index.js';
import { toApiError } from '../endpoints/status.js';

export interface KubernetesServiceOptions {
  /** The address pods use to reach this apiserver (never loopback). */
  advertiseAddress: string;
  port: number;
  /** The Service's ClusterIP (first address of the service range). */
  clusterIP: string;
}

const NAME = 'kubernetes';
const SYSTEM: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, warnings: [] };

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Ensures the Service exists and lists this apiserver in its Endpoints and EndpointSlice. Idempotent. */
export async function reconcileKubernetesService(registry: Registry, o: KubernetesServiceOptions): Promise<void> {
  const port = { name: 'https', port: o.port, protocol: 'TCP' };
  const services = registry.get(Services)!;
  try {
    await services.create(SYSTEM, 'default', {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: NAME, labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { type: 'ClusterIP', clusterIP: o.clusterIP, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: o.port }], sessionAffinity: 'None' },
    } as KubeObject);
  } catch (err) {
    if (toApiError(err).reason !== 'AlreadyExists') throw err;
  }
  const endpoints = registry.get(EndpointsResource)!;
  await endpoints.updateWith(SYSTEM, 'default', NAME, (cur) => {
    const next: Obj = cur ? structuredClone(cur) : { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: NAME, namespace: 'default' } };
    const subset: Obj = next['subsets']?.[0] ?? { addresses: [], ports: [port] };
    const addrs = (subset['addresses'] ?? []) as Obj[];
    if (!addrs.some((a) => a['ip'] === o.advertiseAddress)) addrs.push({ ip: o.advertiseAddress });
    next['subsets'] = [{ addresses: addrs, ports: [port] }];
    delete next['metadata']['resourceVersion'];
    return next as KubeObject;
  }, 'main', false);
  const slices = registry.get(EndpointSlices)!;
  await slices.updateWith(SYSTEM, 'default', NAME, (cur) => {
    const next: Obj = cur ? structuredClone(cur) : {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name: NAME, namespace: 'default', labels: { 'kubernetes.io/service-name': NAME } }, addressType: 'IPv4',
    };
    const eps = (next['endpoints'] ?? []) as Obj[];
    if (!eps.some((e) => (e['addresses'] ?? []).includes(o.advertiseAddress))) eps.push({ addresses: [o.advertiseAddress], conditions: { ready: true } });
    next['endpoints'] = eps;
    next['ports'] = [port];
    delete next['metadata']['resourceVersion'];
    return next as KubeObject;
  }, 'main', false);
}
