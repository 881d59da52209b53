/**
 * Service + pods → Endpoints subsets (upstream pkg/controller/endpoint and
 * pkg/api/v1/endpoints RepackSubsets). Pure.
 */
import type { EndpointAddress, EndpointSubset, Pod, Service, ServicePort } from '@mk8s/api';

/** core/v1 EndpointPort (the api package's EndpointPort is discovery/v1's). */
type EndpointPort = NonNullable<EndpointSubset['ports']>[number];
import { isPodReady } from '../../util/pods.js';

type P = Pod & { metadata: { name: string } };

/** ShouldPodBeInEndpoints: has an IP, not terminal for its restart policy, not terminating unless asked. */
export function shouldPodBeInEndpoints(p: Pod, includeTerminating: boolean): boolean {
  if (!p.status?.podIP && !(p.status?.podIPs?.length)) return false;
  if (!includeTerminating && p.metadata?.deletionTimestamp) return false;
  const phase = p.status?.phase;
  const policy = p.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') return phase !== 'Failed' && phase !== 'Succeeded';
  if (policy === 'OnFailure') return phase !== 'Succeeded';
  return true;
}

/** podutil.FindPort: the container port a Service port targets on this pod (named ports resolve per pod). */
export function findPort(p: Pod, sp: ServicePort): number | undefined {
  const target = sp.targetPort ?? sp.port;
  const protocol = sp.protocol ?? 'TCP';
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? []).filter((i) => i.restartPolicy === 'Always')]) {
    for (const port of c.ports ?? []) {
      if (port.name === target && (port.protocol ?? 'TCP') === protocol) return port.containerPort;
    }
  }
  return undefined;
}

export function podIP(p: Pod): string | undefined {
  return p.status?.podIP ?? p.status?.podIPs?.[0]?.ip;
}

function addressFor(svc: Service, p: P): EndpointAddress {
  const a: EndpointAddress = { ip: podIP(p) ?? '', targetRef: { kind: 'Pod', namespace: p.metadata.namespace ?? '', name: p.metadata.name, uid: p.metadata.uid ?? '' } };
  if (p.spec?.nodeName) a.nodeName = p.spec.nodeName;
  if (p.spec?.hostname && p.spec.subdomain === svc.metadata?.name) a.hostname = p.spec.hostname;
  return a;
}

const portKey = (p: EndpointPort) => `${p.name ?? ''}/${p.port}/${p.protocol ?? 'TCP'}/${p.appProtocol ?? ''}`;

/** The Endpoints subsets for svc from pods (already filtered by the Service's selector). */
export function computeSubsets(svc: Service, pods: readonly P[]): EndpointSubset[] {
  const publishNotReady = !!svc.spec?.publishNotReadyAddresses;
  // port key → (ip → {address, ready}); port -1 is the sentinel for headless services without ports.
  const byPort = new Map<string, { port: EndpointPort | undefined; addrs: Map<string, { a: EndpointAddress; ready: boolean }> }>();
  const add = (port: EndpointPort | undefined, a: EndpointAddress, ready: boolean) => {
    const k = port ? portKey(port) : '-1';
    let e = byPort.get(k);
    if (!e) byPort.set(k, (e = { port, addrs: new Map() }));
    const prev = e.addrs.get(a.ip);
    if (!prev || (!prev.ready && ready)) e.addrs.set(a.ip, { a, ready });
  };
  const ports = svc.spec?.ports ?? [];
  const headless = svc.spec?.clusterIP === 'None';
  for (const p of pods) {
    if (!shouldPodBeInEndpoints(p, publishNotReady)) continue;
    const a = addressFor(svc, p);
    const ready = publishNotReady || isPodReady(p);
    if (ports.length === 0) {
      if (headless) add(undefined, a, ready);
      continue;
    }
    for (const sp of ports) {
      const num = findPort(p, sp);
      if (num === undefined) continue;
      const ep: EndpointPort = { port: num, protocol: sp.protocol ?? 'TCP' };
      if (sp.name) ep.name = sp.name;
      if (sp.appProtocol) ep.appProtocol = sp.appProtocol;
      add(ep, a, ready);
    }
  }
  // Group ports that are offered by exactly the same addresses (RepackSubsets).
  const groups = new Map<string, { ports: EndpointPort[]; addrs: { a: EndpointAddress; ready: boolean }[] }>();
  for (const { port, addrs } of byPort.values()) {
    const list = [...addrs.values()].sort((x, y) => cmp(x.a.ip, y.a.ip));
    const key = list.map((x) => `${x.a.ip}:${x.ready}`).join(',');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports: [], addrs: list }));
    if (port) g.ports.push(port);
  }
  const subsets: EndpointSubset[] = [];
  for (const g of groups.values()) {
    const s: EndpointSubset = {};
    const ready = g.addrs.filter((x) => x.ready).map((x) => x.a);
    const notReady = g.addrs.filter((x) => !x.ready).map((x) => x.a);
    if (ready.length) s.addresses = ready;
    if (notReady.length) s.notReadyAddresses = notReady;
    if (g.ports.length) s.ports = g.ports.sort((x, y) => cmp(x.name ?? '', y.name ?? '') || x.port - y.port);
    subsets.push(s);
  }
  return subsets.sort((x, y) => cmp(firstIP(x), firstIP(y)) || cmp(JSON.stringify(x.ports ?? []), JSON.stringify(y.ports ?? [])));
}

const firstIP = (s: EndpointSubset) => s.addresses?.[0]?.ip ?? s.notReadyAddresses?.[0]?.ip ?? '';
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
