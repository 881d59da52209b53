/**
 * The proxy's model of what to program: Service ports and their endpoints, built from API
 * objects by pure functions (upstream ServiceChangeTracker / EndpointsChangeTracker, level-driven).
 */
import type { EndpointSlice, Service } from '@mk8s/api';
import { servicePortName } from './chain-names.js';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/** One port of one Service, as the rules need it. */
export interface ServicePortInfo {
  /** "ns/name:port" (upstream ServicePortName). */
  name: string;
  namespace: string;
  serviceName: string;
  portName: string;
  protocol: Protocol;
  clusterIP: string;
  port: number;
  /** Set for NodePort and LoadBalancer Services. */
  nodePort?: number;
  /** sessionAffinity ClientIP: the affinity timeout (upstream default 10800). */
  affinityTimeoutSeconds?: number;
}

/** One endpoint of a service port. */
export interface EndpointInfo {
  ip: string;
  port: number;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  nodeName?: string;
}

/** servicePorts flattens the Services kube-proxy programs (ClusterIP/NodePort/LoadBalancer with a cluster IP). */
export function servicePorts(services: readonly Service[]): ServicePortInfo[] {
  const out: ServicePortInfo[] = [];
  for (const s of services) {
    const spec = s.spec;
    const ns = s.metadata?.namespace ?? 'default';
    const name = s.metadata?.name ?? '';
    if (!spec || spec.type === 'ExternalName') continue;
    const ip = spec.clusterIP;
    if (!ip || ip === 'None' || ip.includes(':')) continue;         // headless or IPv6: nothing to program
    for (const p of spec.ports ?? []) {
      const protocol = (p.protocol ?? 'TCP') as Protocol;
      const info: ServicePortInfo = { name: servicePortName(ns, name, p.name ?? ''), namespace: ns, serviceName: name, portName: p.name ?? '', protocol, clusterIP: ip, port: p.port };
      if ((spec.type === 'NodePort' || spec.type === 'LoadBalancer') && p.nodePort) info.nodePort = p.nodePort;
      if (spec.sessionAffinity === 'ClientIP') info.affinityTimeoutSeconds = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800;
      out.push(info);
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.protocol.localeCompare(b.protocol)));
}

/**
 * endpointsByServicePort groups the IPv4 endpoints of EndpointSlices by "ns/name:port" + protocol
 * (slices name the Service in the kubernetes.io/service-name label). Duplicates across slices
 * (an endpoint moving between slices) are merged.
 */
export function endpointsByServicePort(slices: readonly EndpointSlice[]): Map<string, EndpointInfo[]> {
  const out = new Map<string, Map<string, EndpointInfo>>();
  for (const sl of slices) {
    if (sl.addressType !== 'IPv4') continue;
    const svc = sl.metadata?.labels?.['kubernetes.io/service-name'];
    if (!svc) continue;
    const ns = sl.metadata?.namespace ?? 'default';
    for (const p of sl.ports ?? []) {
      if (p.port === undefined || p.port === null) continue;
      const key = `${servicePortName(ns, svc, p.name ?? '')}/${p.protocol ?? 'TCP'}`;
      const m = out.get(key) ?? new Map<string, EndpointInfo>();
      for (const e of sl.endpoints ?? []) {
        const c = e.conditions ?? {};
        // Upstream: nil ready means ready; nil serving follows ready; nil terminating means not terminating.
        const ready = c.ready !== false;
        const info: EndpointInfo = { ip: '', port: p.port, ready, serving: c.serving ?? ready, terminating: c.terminating ?? false, ...(e.nodeName ? { nodeName: e.nodeName } : {}) };
        for (const ip of e.addresses ?? []) m.set(`${ip}:${p.port}`, { ...info, ip });
      }
      out.set(key, m);
    }
  }
  const sorted = new Map<string, EndpointInfo[]>();
  for (const [k, m] of out) sorted.set(k, [...m.values()].sort((a, b) => (a.ip === b.ip ? a.port - b.port : compareIp(a.ip, b.ip))));
  return sorted;
}

function compareIp(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) { const d = (pa[i] ?? 0) - (pb[i] ?? 0); if (d) return d; }
  return 0;
}

/**
 * usableEndpoints picks the endpoints traffic goes to: the ready ones; when none is ready, the
 * serving-and-terminating ones (upstream's terminating-endpoint fallback).
 */
export function usableEndpoints(eps: readonly EndpointInfo[]): EndpointInfo[] {
  const ready = eps.filter((e) => e.ready);
  if (ready.length > 0) return ready;
  return eps.filter((e) => e.serving && e.terminating);
}
