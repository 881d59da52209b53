/**
 * The records one Service implies, per the Kubernetes DNS specification (kubernetes/dns
 * docs/specification.md, schema 1.1.0): a pure function of the Service, its EndpointSlices and the
 * zone. No I/O; the record store indexes what this returns.
 */
import { isIP } from 'node:net';
import type { EndpointSlice, Service } from '@mk8s/api';
import type { Answer } from 'dns-packet';
import { dashedIp, normalizeName, reverseName } from './names.js';

/** The record types cluster DNS serves. */
export type ServedType = 'A' | 'AAAA' | 'CNAME' | 'SRV' | 'PTR' | 'TXT' | 'SOA' | 'NS';

/** The annotation older than publishNotReadyAddresses that means the same (spec 2.1 "ready"). */
export const TOLERATE_UNREADY_ANNOTATION = 'service.alpha.kubernetes.io/tolerate-unready-endpoints';
/** The label an EndpointSlice names its Service with. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface RecordOptions {
  /** The cluster domain, normalized (e.g. "cluster.local"). */
  zone: string;
  /** TTL of every record. CoreDNS' kubernetes plugin default: 5 s. */
  ttl: number;
}

/** `<svc>.<ns>.svc.<zone>` */
export const serviceFqdn = (name: string, ns: string, zone: string): string => normalizeName(`${name}.${ns}.svc.${zone}`);

const addrRecord = (name: string, ip: string, ttl: number): Answer =>
  ({ name, type: isIP(ip) === 6 ? 'AAAA' : 'A', class: 'IN', ttl, data: ip });

/** True when the Service publishes endpoints whether ready or not. */
export function publishesNotReady(svc: Service): boolean {
  return svc.spec?.publishNotReadyAddresses === true || svc.metadata?.annotations?.[TOLERATE_UNREADY_ANNOTATION] === 'true';
}

/** True for a headless Service (clusterIP None): its name resolves to endpoints, not a virtual IP. */
export function isHeadless(svc: Service): boolean {
  return svc.spec?.type !== 'ExternalName' && svc.spec?.clusterIP === 'None';
}

/** One endpoint address a headless Service publishes, with the label it is known by. */
export interface PublishedEndpoint { ip: string; hostname: string }

/**
 * The endpoints a headless Service publishes: ready ones (conditions.ready unset counts as ready,
 * as the EndpointSlice API says), or all with publishNotReadyAddresses; deduplicated by IP across
 * slices. hostname is the endpoint's own, else its dashed IP (the spec's "unique, system-assigned
 * identifier"; CoreDNS uses the same).
 */
export function publishedEndpoints(svc: Service, slices: readonly EndpointSlice[]): { endpoints: PublishedEndpoint[]; bySlice: Map<EndpointSlice, PublishedEndpoint[]> } {
  const all = publishesNotReady(svc);
  const seen = new Map<string, PublishedEndpoint>();
  const bySlice = new Map<EndpointSlice, PublishedEndpoint[]>();
  for (const s of slices) {
    if (s.addressType === 'FQDN') continue;
    const mine: PublishedEndpoint[] = [];
    for (const e of s.endpoints ?? []) {
      if (!all && e.conditions?.ready === false) continue;
      for (const raw of e.addresses ?? []) {
        const ip = raw.toLowerCase();
        if (!isIP(ip)) continue;
        const ep = seen.get(ip) ?? { ip, hostname: normalizeName(e.hostname || dashedIp(ip)) };
        seen.set(ip, ep);
        mine.push(ep);
      }
    }
    bySlice.set(s, mine);
  }
  return { endpoints: [...seen.values()].sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0)), bySlice };
}

/** SRV weight when n records share a priority: an even split (CoreDNS' arithmetic), at least 1. */
const srvWeight = (n: number) => Math.max(1, Math.floor(100 / Math.max(1, n)));

/**
 * serviceRecords returns every record svc implies (names normalized, no trailing dot):
 * - ClusterIP: A/AAAA for each cluster IP, SRV `_<port>._<proto>` per named port → the Service name,
 *   PTR for each cluster IP;
 * - headless: A/AAAA per published endpoint at the Service name and at `<hostname>.<svc>`, SRV per
 *   named port × endpoint → `<hostname>.<svc>`, PTR per endpoint IP → `<hostname>.<svc>`;
 *   none at all when no endpoint is published (the spec's NXDOMAIN);
 * - ExternalName: a CNAME to spec.externalName.
 * slices are those labelled with the Service's name; others are ignored by the caller.
 */
export function serviceRecords(svc: Service, slices: readonly EndpointSlice[], o: RecordOptions): Answer[] {
  const name = svc.metadata?.name;
  const ns = svc.metadata?.namespace ?? 'default';
  if (!name || !svc.spec) return [];
  const fqdn = serviceFqdn(name, ns, o.zone);
  const ttl = o.ttl;
  const out: Answer[] = [];
  if (svc.spec.type === 'ExternalName') {
    if (svc.spec.externalName) out.push({ name: fqdn, type: 'CNAME', class: 'IN', ttl, data: normalizeName(svc.spec.externalName) });
    return out;
  }
  if (!isHeadless(svc)) {
    const ips = (svc.spec.clusterIPs?.length ? svc.spec.clusterIPs : svc.spec.clusterIP ? [svc.spec.clusterIP] : []).filter((ip) => isIP(ip));
    if (ips.length === 0) return out;                                   // not allocated yet: nothing to say
    for (const ip of ips) out.push(addrRecord(fqdn, ip, ttl));
    const named = (svc.spec.ports ?? []).filter((p) => p.name);
    for (const p of named) {
      out.push({ name: `_${p.name!.toLowerCase()}._${(p.protocol ?? 'TCP').toLowerCase()}.${fqdn}`, type: 'SRV', class: 'IN', ttl, data: { priority: 0, weight: 100, port: p.port, target: fqdn } });
    }
    for (const ip of ips) out.push({ name: reverseName(ip)!, type: 'PTR', class: 'IN', ttl, data: fqdn });
    return out;
  }
  const { endpoints, bySlice } = publishedEndpoints(svc, slices);
  for (const e of endpoints) out.push(addrRecord(fqdn, e.ip, ttl));
  const byHost = new Map<string, PublishedEndpoint[]>();
  for (const e of endpoints) byHost.set(e.hostname, [...(byHost.get(e.hostname) ?? []), e]);
  for (const [host, eps] of byHost) for (const e of eps) out.push(addrRecord(`${host}.${fqdn}`, e.ip, ttl));
  // SRV: per slice, its named ports × its published endpoints (a slice's port numbers are its own).
  const srv = new Map<string, { port: number; target: string }[]>();
  for (const [slice, eps] of bySlice) {
    for (const p of slice.ports ?? []) {
      if (!p.name || p.port === undefined || p.port === null) continue;
      const owner = `_${p.name.toLowerCase()}._${(p.protocol ?? 'TCP').toLowerCase()}.${fqdn}`;
      const list = srv.get(owner) ?? [];
      for (const e of eps) if (!list.some((x) => x.target === `${e.hostname}.${fqdn}` && x.port === p.port)) list.push({ port: p.port, target: `${e.hostname}.${fqdn}` });
      srv.set(owner, list);
    }
  }
  for (const [owner, list] of srv) {
    for (const x of list) out.push({ name: owner, type: 'SRV', class: 'IN', ttl, data: { priority: 0, weight: srvWeight(list.length), port: x.port, target: x.target } });
  }
  for (const e of endpoints) out.push({ name: reverseName(e.ip)!, type: 'PTR', class: 'IN', ttl, data: `${e.hostname}.${fqdn}` });
  return out;
}
