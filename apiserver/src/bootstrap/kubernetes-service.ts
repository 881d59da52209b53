/**
 * The `default/kubernetes` Service and its Endpoints/EndpointSlice, pointing pods at the live
 * apiservers: upstream's lease endpoint reconciler (pkg/controlplane/reconcilers/lease.go), with
 * the leases kept as the apiserver identity Leases (kube-system `apiserver-<id>`, label
 * apiserver.kubernetes.io/identity=kube-apiserver) rather than TTL keys under /masterleases.
 *
 * Every apiserver, every ENDPOINT_RENEW_INTERVAL_MS: renews its own Lease (it carries the advertise
 * address in an annotation), lists the identity Leases, and writes the Endpoints and EndpointSlice
 * to exactly the addresses of the unexpired ones (no write when they already match). On a graceful
 * shutdown it deletes its Lease and writes the set without itself. An apiserver killed with
 * SIGKILL drops out once its Lease expires (ENDPOINT_LEASE_DURATION_SECONDS).
 */
import { createHash, randomUUID } from 'node:crypto';
import { EndpointSlices, EndpointsResource, Leases, Services, type KubeObject } from '@mk8s/api';
import type { Registry, RequestContext } from '../registry/index.js';
import { toApiError } from '../endpoints/status.js';

export interface KubernetesServiceOptions {
  /** The address pods use to reach this apiserver (never loopback). */
  advertiseAddress: string;
  port: number;
  /** The Service's ClusterIP (first address of the service range). */
  clusterIP: string;
}

/** Upstream's identity label and value on every kube-apiserver's Lease. */
export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
export const IDENTITY_VALUE = 'kube-apiserver';
/** The endpoint an identity Lease stands for (upstream keys its master leases by this IP). */
export const ADVERTISE_ADDRESS_ANNOTATION = 'mk8s.io/advertise-address';
export const LEASE_NAMESPACE = 'kube-system';
/** Upstream's master lease TTL (--endpoint-reconciler-type=lease: 15 s). */
export const ENDPOINT_LEASE_DURATION_SECONDS = 15;
/** Renewal period: a third of the lease, so two missed renewals on a loaded machine keep the endpoint. */
export const ENDPOINT_RENEW_INTERVAL_MS = 5_000;

const NAME = 'kubernetes';
const SYSTEM: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, warnings: [] };

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The Lease name of the apiserver advertising address:port on hostname (pure). Upstream hashes the
 * hostname alone (one apiserver per host); here several share a host, so the address joins it.
 */
export function apiserverIdentity(hostname: string, advertiseAddress: string, port: number): string {
  return `apiserver-${createHash('sha256').update(`${hostname}/${advertiseAddress}:${port}`).digest('hex').slice(0, 26)}`;
}

/** This apiserver's identity Lease, renewed at now (pure). */
export function identityLease(o: { name: string; holderIdentity: string; hostname: string; advertiseAddress: string; now: Date; acquireTime?: string }): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: {
      name: o.name, namespace: LEASE_NAMESPACE,
      labels: { [IDENTITY_LABEL]: IDENTITY_VALUE, 'kubernetes.io/hostname': o.hostname },
      annotations: { [ADVERTISE_ADDRESS_ANNOTATION]: o.advertiseAddress },
    },
    spec: {
      holderIdentity: o.holderIdentity, leaseDurationSeconds: ENDPOINT_LEASE_DURATION_SECONDS,
      acquireTime: o.acquireTime ?? microTime(o.now), renewTime: microTime(o.now),
    },
  } as unknown as KubeObject;
}

const microTime = (d: Date) => d.toISOString().replace('Z', '000Z');

/**
 * The addresses the `kubernetes` endpoints should list (pure): those of identity Leases whose
 * renewTime + leaseDurationSeconds is after nowMs, sorted and unique. `exclude` drops one Lease by
 * name (an apiserver shutting down removes itself).
 */
export function liveApiserverAddresses(leases: readonly KubeObject[], nowMs: number, exclude?: string): string[] {
  const out = new Set<string>();
  for (const l of leases as readonly Obj[]) {
    if (l['metadata']?.['labels']?.[IDENTITY_LABEL] !== IDENTITY_VALUE || l['metadata']?.['name'] === exclude) continue;
    const ip = l['metadata']?.['annotations']?.[ADVERTISE_ADDRESS_ANNOTATION];
    const renew = Date.parse(l['spec']?.['renewTime'] ?? '');
    const duration = Number(l['spec']?.['leaseDurationSeconds'] ?? 0);
    if (typeof ip === 'string' && ip && Number.isFinite(renew) && renew + duration * 1000 > nowMs) out.add(ip);
  }
  return [...out].sort(compareIPs);
}

function compareIPs(a: string, b: string): number {
  const pa = a.split('.').map(Number); const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The Endpoints listing exactly addresses on port, or undefined when current already does (pure). */
export function desiredEndpoints(current: KubeObject | undefined, addresses: readonly string[], port: number): KubeObject | undefined {
  const ports = [{ name: 'https', port, protocol: 'TCP' }];
  const subsets = addresses.length ? [{ addresses: addresses.map((ip) => ({ ip })), ports }] : [];
  const cur = current as Obj | undefined;
  if (cur && JSON.stringify(cur['subsets'] ?? []) === JSON.stringify(subsets)) return undefined;
  const next: Obj = cur ? structuredClone(cur) : { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: NAME, namespace: 'default' } };
  next['subsets'] = subsets;
  return next as KubeObject;
}

/** The EndpointSlice listing exactly addresses (each ready) on port, or undefined when current already does (pure). */
export function desiredEndpointSlice(current: KubeObject | undefined, addresses: readonly string[], port: number): KubeObject | undefined {
  const ports = [{ name: 'https', port, protocol: 'TCP' }];
  const endpoints = addresses.map((ip) => ({ addresses: [ip], conditions: { ready: true } }));
  const cur = current as Obj | undefined;
  if (cur && JSON.stringify(cur['endpoints'] ?? []) === JSON.stringify(endpoints) && JSON.stringify(cur['ports'] ?? []) === JSON.stringify(ports)) return undefined;
  const next: Obj = cur ? structuredClone(cur) : {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: NAME, namespace: 'default', labels: { 'kubernetes.io/service-name': NAME } }, addressType: 'IPv4',
  };
  next['endpoints'] = endpoints;
  next['ports'] = ports;
  return next as KubeObject;
}

/** Ensures the `kubernetes` Service exists. Idempotent. */
export async function ensureKubernetesService(registry: Registry, o: KubernetesServiceOptions): Promise<void> {
  const services = registry.get(Services)!;
  try {
    await services.get('default', NAME);
    return;
  } catch (err) {
    if (toApiError(err).reason !== 'NotFound') throw err;
  }
  try {
    await services.create(SYSTEM, 'default', {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: NAME, labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { type: 'ClusterIP', clusterIP: o.clusterIP, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: o.port }], sessionAffinity: 'None' },
    } as KubeObject);
  } catch (err) {
    if (toApiError(err).reason !== 'AlreadyExists') throw err;
  }
}

/** Writes the Endpoints and EndpointSlice to exactly addresses (compare-and-swap; no write when they match). */
export async function writeKubernetesEndpoints(registry: Registry, addresses: readonly string[], port: number): Promise<void> {
  const unchanged = new Error('unchanged');
  for (const [resource, desired] of [[EndpointsResource, desiredEndpoints], [EndpointSlices, desiredEndpointSlice]] as const) {
    try {
      await registry.get(resource)!.updateWith(SYSTEM, 'default', NAME, (cur) => {
        const next = desired(cur, addresses, port) as Obj | undefined;
        if (!next) throw unchanged;
        delete next['metadata']['resourceVersion'];
        return next as KubeObject;
      }, 'main', false);
    } catch (err) {
      if (err !== unchanged) throw err;
    }
  }
}

/** One apiserver's side of the lease endpoint reconciler (see the file comment). */
export class ApiserverEndpointReconciler {
  readonly leaseName: string;
  private readonly holderIdentity: string;
  private acquireTime: string | undefined;

  constructor(private readonly registry: Registry, private readonly o: KubernetesServiceOptions & { hostname: string; now: () => number }) {
    this.leaseName = apiserverIdentity(o.hostname, o.advertiseAddress, o.port);
    this.holderIdentity = `${this.leaseName}_${randomUUID()}`;
  }

  /** Renews this apiserver's Lease and writes the endpoints of the live ones. Idempotent; called from one loop only. */
  async reconcile(): Promise<void> {
    await ensureKubernetesService(this.registry, this.o);
    const now = new Date(this.o.now());
    const lease = identityLease({ name: this.leaseName, holderIdentity: this.holderIdentity, hostname: this.o.hostname, advertiseAddress: this.o.advertiseAddress, now, ...(this.acquireTime ? { acquireTime: this.acquireTime } : {}) });
    await this.registry.get(Leases)!.updateWith(SYSTEM, LEASE_NAMESPACE, this.leaseName, (cur) => {
      const next = structuredClone(lease) as Obj;
      if (cur) next['metadata'] = { ...structuredClone((cur as Obj)['metadata']), labels: next['metadata']['labels'], annotations: next['metadata']['annotations'] };
      delete next['metadata']['resourceVersion'];
      return next as KubeObject;
    }, 'main', false);
    this.acquireTime ??= (lease as Obj)['spec']['acquireTime'];
    await this.writeLive(now.getTime());
  }

  /** Graceful shutdown: deletes this apiserver's Lease and removes its address. Best effort (errors thrown). */
  async remove(): Promise<void> {
    try { await this.registry.get(Leases)!.delete(SYSTEM, LEASE_NAMESPACE, this.leaseName); } catch (err) {
      if (toApiError(err).reason !== 'NotFound') throw err;
    }
    await this.writeLive(this.o.now(), this.leaseName);
  }

  private async writeLive(nowMs: number, exclude?: string): Promise<void> {
    const leases = (await this.registry.get(Leases)!.list(LEASE_NAMESPACE)).items;
    await writeKubernetesEndpoints(this.registry, liveApiserverAddresses(leases, nowMs, exclude), this.o.port);
  }
}
