/**
 * Service + pods → EndpointSlices (a simplified upstream endpointslice reconciler). Endpoints are
 * grouped by address type and resolved port set (named ports resolve per pod, so pods with
 * different container ports land in different slices); at most 100 endpoints a slice. Existing
 * slices keep the endpoints they already hold, so a pod change rewrites one slice, not all.
 * Pure: returns the creates, updates and deletes to apply.
 */
import type { EndpointPort, EndpointSlice, OwnerReference, Pod, Service, SliceEndpoint } from '@mk8s/api';
import { canonicalJson } from '../../util/hash.js';
import { isPodReady } from '../../util/pods.js';
import { findPort, podIP, shouldPodBeInEndpoints } from '../endpoints/compute.js';

export const MAX_ENDPOINTS_PER_SLICE = 100;
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

type P = Pod & { metadata: { name: string } };
type S = EndpointSlice & { metadata: { name: string } };

export interface DesiredEndpoint { group: string; addressType: 'IPv4' | 'IPv6'; ports: EndpointPort[]; endpoint: SliceEndpoint }

const ipOf = (e: SliceEndpoint): string => e.addresses[0] ?? '';
const groupKey = (addressType: string, ports: readonly EndpointPort[]) => `${addressType}|${canonicalJson(ports)}`;

/** One desired endpoint per pod that belongs in the Service's slices (terminating pods included, flagged). */
export function desiredEndpoints(svc: Service, pods: readonly P[], zoneOf: (nodeName: string) => string | undefined = () => undefined): DesiredEndpoint[] {
  const out: DesiredEndpoint[] = [];
  const publishNotReady = !!svc.spec?.publishNotReadyAddresses;
  for (const p of pods) {
    if (!shouldPodBeInEndpoints(p, true)) continue;
    const ip = podIP(p);
    if (!ip) continue;
    const ports: EndpointPort[] = [];
    for (const sp of svc.spec?.ports ?? []) {
      const port = findPort(p, sp);
      if (port === undefined) continue;
      const ep: EndpointPort = { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP' };
      if (sp.appProtocol) ep.appProtocol = sp.appProtocol;
      ports.push(ep);
    }
    const serving = publishNotReady || isPodReady(p);
    const terminating = !!p.metadata.deletionTimestamp;
    const endpoint: SliceEndpoint = {
      addresses: [ip],
      conditions: { ready: publishNotReady || (serving && !terminating), serving, terminating },
      targetRef: { kind: 'Pod', namespace: p.metadata.namespace ?? '', name: p.metadata.name, uid: p.metadata.uid ?? '' },
    };
    if (p.spec?.nodeName) {
      endpoint.nodeName = p.spec.nodeName;
      const zone = zoneOf(p.spec.nodeName);
      if (zone) endpoint.zone = zone;
    }
    if (p.spec?.hostname && p.spec.subdomain === svc.metadata?.name) endpoint.hostname = p.spec.hostname;
    const addressType = ip.includes(':') ? 'IPv6' : 'IPv4';
    out.push({ group: groupKey(addressType, ports), addressType, ports, endpoint });
  }
  return out;
}

/** The labels every slice of svc carries. */
export function sliceLabels(svc: Service): Record<string, string> {
  const l: Record<string, string> = { ...(svc.metadata?.labels ?? {}) };
  delete l[LABEL_MANAGED_BY];
  if (svc.spec?.clusterIP === 'None') l[HEADLESS_LABEL] = ''; else delete l[HEADLESS_LABEL];
  l[LABEL_SERVICE_NAME] = svc.metadata?.name ?? '';
  l[LABEL_MANAGED_BY] = CONTROLLER_NAME;
  return l;
}

export interface SlicePlan { create: EndpointSlice[]; update: S[]; delete: S[] }

/** Plans the writes that turn existing (this Service's managed slices) into desired. */
export function planSlices(svc: Service, owner: OwnerReference, desired: readonly DesiredEndpoint[], existing: readonly S[], max = MAX_ENDPOINTS_PER_SLICE): SlicePlan {
  const labels = sliceLabels(svc);
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const wantByGroup = new Map<string, { addressType: 'IPv4' | 'IPv6'; ports: EndpointPort[]; eps: Map<string, SliceEndpoint> }>();
  for (const d of desired) {
    let g = wantByGroup.get(d.group);
    if (!g) wantByGroup.set(d.group, (g = { addressType: d.addressType, ports: d.ports, eps: new Map() }));
    g.eps.set(ipOf(d.endpoint), d.endpoint);
  }
  const haveByGroup = new Map<string, S[]>();
  for (const s of [...existing].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const k = groupKey(s.addressType, s.ports ?? []);
    haveByGroup.set(k, [...(haveByGroup.get(k) ?? []), s]);
  }
  const newSlice = (addressType: string, ports: EndpointPort[], endpoints: SliceEndpoint[]): EndpointSlice => ({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { generateName: `${svc.metadata?.name}-`, namespace: svc.metadata?.namespace ?? 'default', labels: { ...labels }, ownerReferences: [owner] },
    addressType, ports, endpoints,
  });
  const kept: S[] = [];
  for (const key of new Set([...wantByGroup.keys(), ...haveByGroup.keys()])) {
    const want = wantByGroup.get(key);
    const slices = haveByGroup.get(key) ?? [];
    const placed = new Set<string>();
    const next: { s: S; eps: SliceEndpoint[] }[] = [];
    for (const s of slices) {
      const eps: SliceEndpoint[] = [];
      for (const e of s.endpoints ?? []) {
        const w = want?.eps.get(ipOf(e));
        if (w && !placed.has(ipOf(e)) && eps.length < max) { eps.push(w); placed.add(ipOf(e)); }
      }
      next.push({ s, eps });
    }
    const remaining = [...(want?.eps.values() ?? [])].filter((e) => !placed.has(ipOf(e))).sort((a, b) => ipOf(a).localeCompare(ipOf(b)));
    for (const n of next) while (remaining.length && n.eps.length > 0 && n.eps.length < max) n.eps.push(remaining.shift()!);
    for (const n of next) {
      if (n.eps.length === 0) { plan.delete.push(n.s); continue; }
      kept.push(n.s);
      if (canonicalJson(n.eps) !== canonicalJson(n.s.endpoints ?? []) || !labelsMatch(n.s, labels)) {
        plan.update.push({ ...structuredClone(n.s), metadata: { ...structuredClone(n.s.metadata), labels: { ...(n.s.metadata.labels ?? {}), ...labels } }, endpoints: n.eps });
      }
    }
    while (remaining.length && want) plan.create.push(newSlice(want.addressType, want.ports, remaining.splice(0, max)));
  }
  // A Service with no endpoints keeps one empty placeholder slice, as upstream.
  if (kept.length === 0 && plan.create.length === 0) {
    const placeholder = plan.delete.find((s) => (s.ports ?? []).length === 0);
    if (placeholder) plan.delete = plan.delete.filter((s) => s !== placeholder);
    else plan.create.push(newSlice('IPv4', [], []));
  }
  return plan;
}

function labelsMatch(s: S, labels: Record<string, string>): boolean {
  return Object.entries(labels).every(([k, v]) => s.metadata.labels?.[k] === v);
}
