/**
 * RecordStore: the names cluster DNS is authoritative for, indexed in memory, and the answer to a
 * question from that index alone (never a call to the apiserver). Fed by the informers (see
 * dns-cache.ts) one owner at a time: a Service with its EndpointSlices, a Namespace, a Pod.
 */
import type { EndpointSlice, Pod, Service } from '@mk8s/api';
import type { Answer } from 'dns-packet';
import { isIP } from 'node:net';
import { REVERSE_ZONES, ancestors, dashedIp, inZone, normalizeName, parsePodName } from './names.js';
import { serviceRecords } from './records.js';

/** The schema version of the spec implemented (spec 2.2: TXT dns-version.<zone>). */
export const DNS_SCHEMA_VERSION = '1.1.0';

export type Rcode = 'NOERROR' | 'NXDOMAIN' | 'REFUSED' | 'SERVFAIL';

/** What the store says about one question. */
export interface LookupResult {
  rcode: Rcode;
  /** False for names outside every zone served (the server may forward those). */
  authoritative: boolean;
  answers: Answer[];
  /** The zone's SOA on NXDOMAIN and NODATA (RFC 2308 negative caching). */
  authority: Answer[];
  /** A/AAAA of SRV targets in the zone. */
  additionals: Answer[];
  /** Set when the answer ends in a CNAME to a name outside the zone (a forwarder may resolve it). */
  externalTarget?: string;
}

/** How pod names `a-b-c-d.<ns>.pod.<zone>` are answered (CoreDNS' `pods` option). */
export type PodsMode = 'insecure' | 'verified' | 'disabled';

export interface RecordStoreOptions {
  /** The cluster domain. @default 'cluster.local' */
  zone?: string;
  /** @default 5 (CoreDNS' kubernetes plugin) */
  ttl?: number;
  /** @default 'insecure' (the spec's "for any values"; kubeadm's Corefile) */
  pods?: PodsMode;
  /** The DNS Service's IP, for the apex NS record's address. */
  nameserverIp?: string;
}

/**
 * The store's contract, read by the server and run by one conformance suite
 * (testing/conformance.ts) against the directly fed store and the informer-fed one.
 * lookup is synchronous, pure over the current index, and safe to call at any time.
 */
export interface RecordStore {
  readonly zone: string;
  lookup(name: string, type: string): LookupResult;
  /** Records held (the cache-size gauge). */
  size(): number;
}

/** The index of the records of each owner ("svc:ns/name", "ns:name", "pod:ns/name"). */
export class MemoryRecordStore implements RecordStore {
  readonly zone: string;
  private readonly ttl: number;
  private readonly pods: PodsMode;
  /** name → owner → records at that name. */
  private readonly byName = new Map<string, Map<string, Answer[]>>();
  /** name → all its records (byName flattened, kept in step: lookups do not allocate). */
  private readonly flat = new Map<string, Answer[]>();
  /** Empty non-terminals: name → how many owned names lie below it. */
  private readonly ents = new Map<string, number>();
  /** owner → the names it put records or ENTs at. */
  private readonly owned = new Map<string, { names: string[]; ents: string[] }>();
  /** ns/ip of running pods (verified mode). */
  private readonly podIps = new Map<string, number>();
  private count = 0;
  private serial: number;
  private readonly soa: Map<string, Answer>;

  constructor(o: RecordStoreOptions = {}) {
    this.zone = normalizeName(o.zone ?? 'cluster.local');
    this.ttl = o.ttl ?? 5;
    this.pods = o.pods ?? 'insecure';
    this.serial = Math.floor(Date.now() / 1000);
    this.soa = new Map([this.zone, ...REVERSE_ZONES].map((z) => [z, this.soaRecord(z)]));
    const apex: Answer[] = [
      { name: `dns-version.${this.zone}`, type: 'TXT', class: 'IN', ttl: this.ttl, data: [DNS_SCHEMA_VERSION] },
      { name: this.zone, type: 'NS', class: 'IN', ttl: this.ttl, data: `ns.dns.${this.zone}` },
      ...(o.nameserverIp ? [{ name: `ns.dns.${this.zone}`, type: isIP(o.nameserverIp) === 6 ? 'AAAA' : 'A', class: 'IN', ttl: this.ttl, data: o.nameserverIp } as Answer] : []),
    ];
    this.setOwner('zone:apex', apex, [`svc.${this.zone}`, `pod.${this.zone}`]);
  }

  private soaRecord(zone: string): Answer {
    // CoreDNS' SOA: ns.dns.<zone> hostmaster.<zone>, refresh 7200, retry 1800, expire 86400, minimum = ttl.
    return { name: zone, type: 'SOA', class: 'IN', ttl: this.ttl, data: { mname: `ns.dns.${this.zone}`, rname: `hostmaster.${this.zone}`, serial: this.serial, refresh: 7200, retry: 1800, expire: 86400, minimum: this.ttl } };
  }

  size(): number { return this.count; }

  /** Replaces the records of the Service key ("ns/name"): undefined deletes them. slices: those of this Service. */
  setService(key: string, svc: Service | undefined, slices: readonly EndpointSlice[]): void {
    this.setOwner(`svc:${key}`, svc ? serviceRecords(svc, slices, { zone: this.zone, ttl: this.ttl }) : []);
  }

  /** A namespace makes `<ns>.svc.<zone>` and `<ns>.pod.<zone>` exist (NODATA rather than NXDOMAIN). */
  setNamespace(name: string, exists: boolean): void {
    this.setOwner(`ns:${name}`, [], exists ? [`${name}.svc.${this.zone}`, `${name}.pod.${this.zone}`].map(normalizeName) : []);
  }

  /** Verified mode: a pod's IPs answer `a-b-c-d.<ns>.pod.<zone>`. key "ns/name"; undefined deletes. */
  setPod(key: string, pod: Pod | undefined): void {
    const owner = `pod:${key}`;
    const ns = key.split('/')[0] ?? '';
    const ips = pod && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed'
      ? (pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : [])).filter((ip): ip is string => !!ip && !!isIP(ip)) : [];
    const prev = this.owned.get(owner);
    for (const n of prev?.names ?? []) { const k = `${ns}/${n}`; const c = (this.podIps.get(k) ?? 1) - 1; if (c > 0) this.podIps.set(k, c); else this.podIps.delete(k); }
    for (const ip of ips) { const k = `${ns}/${ip}`; this.podIps.set(k, (this.podIps.get(k) ?? 0) + 1); }
    if (ips.length) this.owned.set(owner, { names: ips, ents: [] }); else this.owned.delete(owner);
  }

  /** Swaps owner's records and ENTs for new ones. */
  private setOwner(owner: string, records: Answer[], extraEnts: string[] = []): void {
    const prev = this.owned.get(owner);
    if (prev) {
      for (const n of prev.names) {
        const m = this.byName.get(n);
        const old = m?.get(owner);
        if (!m || !old) continue;
        this.count -= old.length;
        m.delete(owner);
        if (m.size === 0) { this.byName.delete(n); this.flat.delete(n); } else this.flat.set(n, [...m.values()].flat());
      }
      for (const e of prev.ents) { const c = (this.ents.get(e) ?? 1) - 1; if (c > 0) this.ents.set(e, c); else this.ents.delete(e); }
    }
    const grouped = new Map<string, Answer[]>();
    for (const r of records) grouped.set(r.name, [...(grouped.get(r.name) ?? []), r]);
    const ents = new Set<string>(extraEnts);
    for (const [n, rs] of grouped) {
      let m = this.byName.get(n);
      if (!m) { m = new Map(); this.byName.set(n, m); }
      m.set(owner, rs);
      this.flat.set(n, [...m.values()].flat());
      this.count += rs.length;
      const z = this.zoneOf(n);
      if (z) for (const a of ancestors(n, z)) ents.add(a);
    }
    for (const e of [...ents]) { const z = this.zoneOf(e); if (z) for (const a of ancestors(e, z)) ents.add(a); }
    for (const e of ents) this.ents.set(e, (this.ents.get(e) ?? 0) + 1);
    if (grouped.size || ents.size) this.owned.set(owner, { names: [...grouped.keys()], ents: [...ents] });
    else this.owned.delete(owner);
    if (owner !== 'zone:apex') this.bumpSerial();
  }

  private bumpSerial(): void {
    const now = Math.floor(Date.now() / 1000);
    this.serial = now > this.serial ? now : this.serial + 1;
    for (const z of this.soa.keys()) this.soa.set(z, this.soaRecord(z));
  }

  /** The served zone name falls in (the cluster domain or a reverse zone), or undefined. */
  zoneOf(name: string): string | undefined {
    if (inZone(name, this.zone)) return this.zone;
    for (const z of REVERSE_ZONES) if (inZone(name, z)) return z;
    return undefined;
  }

  private records(n: string): Answer[] | undefined {
    const r = this.flat.get(n);
    if (r) return r;
    if (this.pods === 'disabled') return undefined;
    const pod = parsePodName(n, this.zone);
    if (!pod) return undefined;
    if (this.pods === 'verified' && !this.podIps.has(`${pod.namespace}/${pod.ip}`)) return undefined;
    return [{ name: n, type: isIP(pod.ip) === 6 ? 'AAAA' : 'A', class: 'IN', ttl: this.ttl, data: pod.ip }];
  }

  private exists(n: string, zone: string): boolean {
    return n === zone || this.ents.has(n) || this.records(n) !== undefined;
  }

  lookup(name: string, type: string): LookupResult {
    const n = normalizeName(name);
    const zone = this.zoneOf(n);
    if (!zone) return { rcode: 'REFUSED', authoritative: false, answers: [], authority: [], additionals: [] };
    const negative = (rcode: Rcode, answers: Answer[] = []): LookupResult => ({ rcode, authoritative: true, answers, authority: [this.soa.get(zone)!], additionals: [] });
    const answers: Answer[] = [];
    let current = n;
    // Follow CNAMEs inside the zone (ExternalName to another Service); at most 8 hops.
    for (let hop = 0; hop < 8; hop++) {
      const recs = current === zone && type === 'SOA' ? [this.soa.get(zone)!] : this.records(current);
      if (!recs) {
        if (hop > 0) return negative(this.exists(current, zone) ? 'NOERROR' : 'NXDOMAIN', answers);
        return negative(this.exists(current, zone) ? 'NOERROR' : 'NXDOMAIN');
      }
      const cname = type !== 'CNAME' && type !== 'ANY' ? recs.find((r) => r.type === 'CNAME') : undefined;
      if (cname) {
        answers.push(cname);
        const target = (cname as { data: string }).data;
        if (this.zoneOf(target) !== this.zone) return { rcode: 'NOERROR', authoritative: true, answers, authority: [], additionals: [], externalTarget: target };
        current = target;
        continue;
      }
      const matching = type === 'ANY' ? recs : current === zone && type === 'SOA' ? recs : recs.filter((r) => r.type === type);
      if (matching.length === 0) return negative('NOERROR', answers);
      answers.push(...matching);
      const additionals: Answer[] = [];
      for (const r of matching) {
        if (r.type !== 'SRV') continue;
        for (const a of this.records((r.data as { target: string }).target) ?? []) if (a.type === 'A' || a.type === 'AAAA') additionals.push(a);
      }
      return { rcode: 'NOERROR', authoritative: true, answers, authority: [], additionals };
    }
    return { rcode: 'SERVFAIL', authoritative: true, answers, authority: [], additionals: [] };
  }
}

/** The key of a pod's dashed name, for tests and tools: `a-b-c-d.<ns>.pod.<zone>`. */
export const podFqdn = (ip: string, ns: string, zone: string): string => `${dashedIp(ip)}.${ns}.pod.${zone}`;
