/**
 * ClusterIP and NodePort allocation for Services (upstream registry/core/service/ipallocator and
 * portallocator). Every allocated IP or port is one etcd key created with create-if-absent, so
 * several apiservers on one etcd never hand out the same value (upstream's IPAddress objects use
 * the same idea). Dynamic IPs come from above the static band, which is left for explicit
 * requests such as the cluster DNS address.
 */
import { randomInt } from 'node:crypto';
import { ApiError, invalidError, Services, type FieldError, type KubeObject } from '@mk8s/api';
import type { Storage } from '../../../storage/interfaces.js';

export interface ServiceAllocatorOptions {
  storage: Storage;
  /** @default '10.96.0.0/12' */
  serviceCidr?: string;
  /** @default { base: 30000, size: 2768 } */
  nodePortRange?: { base: number; size: number };
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const IP_PREFIX = '/registry/ipaddresses/';
const NODE_PORT_PREFIX = '/registry/servicenodeports/';

/** Undo for allocations made for a write that did not happen. */
export type Release = () => Promise<void>;

export class ServiceAllocator {
  private readonly storage: Storage;
  private readonly base: number;
  private readonly size: number;
  readonly cidr: string;
  private readonly ports: { base: number; size: number };

  constructor(o: ServiceAllocatorOptions) {
    this.storage = o.storage;
    this.cidr = o.serviceCidr ?? '10.96.0.0/12';
    const [ip, bits] = this.cidr.split('/');
    const mask = Number(bits);
    const maskBits = mask === 0 ? 0 : (0xffffffff << (32 - mask)) >>> 0;
    this.base = (ipToInt(ip!) & maskBits) >>> 0;
    this.size = 2 ** (32 - mask);
    this.ports = o.nodePortRange ?? { base: 30000, size: 2768 };
  }

  /** The first address of the range: the `kubernetes` Service's ClusterIP. */
  get apiServerServiceIP(): string { return intToIp(this.base + 1); }

  /**
   * Fills spec.clusterIP(s) and missing nodePorts of svc (mutates it), reserving them in etcd.
   * prev is the stored Service on update: what it already holds is kept, not re-reserved.
   * Returns the undo. Explicit values that are taken or out of range → 422 Invalid.
   */
  async allocate(svc: KubeObject, prev: KubeObject | undefined): Promise<Release> {
    const undo: Release[] = [];
    const release = async () => { for (const u of undo.splice(0)) await u().catch(() => undefined); };
    try {
      const spec = (svc['spec'] ?? {}) as Obj;
      const prevSpec = (prev?.['spec'] ?? {}) as Obj;
      const type = spec['type'] ?? 'ClusterIP';
      if (type !== 'ExternalName' && spec['clusterIP'] !== 'None') {
        const want: string | undefined = spec['clusterIP'] || (Array.isArray(spec['clusterIPs']) ? spec['clusterIPs'][0] : undefined);
        if (!want || want !== prevSpec['clusterIP']) {
          const ip = want ? await this.reserveIP(want, svc) : await this.randomIP(svc);
          undo.push(() => this.storage.delete(IP_PREFIX + ip).then(() => undefined));
          spec['clusterIP'] = ip;
        }
        spec['clusterIPs'] = [spec['clusterIP']];
      }
      if (type === 'NodePort' || type === 'LoadBalancer') {
        const held = new Set(((prevSpec['ports'] ?? []) as Obj[]).map((p) => `${p['protocol'] ?? 'TCP'}/${p['nodePort']}`));
        const ports = (spec['ports'] ?? []) as Obj[];
        for (let i = 0; i < ports.length; i++) {
          const p = ports[i]!;
          const proto = String(p['protocol'] ?? 'TCP');
          if (p['nodePort'] && held.has(`${proto}/${p['nodePort']}`)) continue;
          const port = p['nodePort'] ? await this.reservePort(Number(p['nodePort']), proto, svc, i) : await this.randomPort(proto, svc);
          undo.push(() => this.storage.delete(portKey(proto, port)).then(() => undefined));
          p['nodePort'] = port;
        }
      }
      svc['spec'] = spec;
      return release;
    } catch (err) {
      await release();
      throw err;
    }
  }

  /** Releases what old holds and next (the Service after an update; undefined = deleted) does not. */
  async release(old: KubeObject, next?: KubeObject): Promise<void> {
    const o = (old['spec'] ?? {}) as Obj; const n = (next?.['spec'] ?? {}) as Obj;
    if (o['clusterIP'] && o['clusterIP'] !== 'None' && o['clusterIP'] !== n['clusterIP']) {
      await this.storage.delete(IP_PREFIX + o['clusterIP']).catch(() => undefined);
    }
    const keep = new Set(((n['ports'] ?? []) as Obj[]).filter((p) => p['nodePort']).map((p) => portKey(String(p['protocol'] ?? 'TCP'), Number(p['nodePort']))));
    for (const p of (o['ports'] ?? []) as Obj[]) {
      if (!p['nodePort']) continue;
      const k = portKey(String(p['protocol'] ?? 'TCP'), Number(p['nodePort']));
      if (!keep.has(k)) await this.storage.delete(k).catch(() => undefined);
    }
  }

  private async reserveIP(ip: string, svc: KubeObject): Promise<string> {
    const n = ipToIntOrNaN(ip);
    if (Number.isNaN(n)) return ip; // validation reports malformed IPs
    if (n < this.base || n >= this.base + this.size) {
      throw invalid(svc, 'spec.clusterIPs', `Invalid value: []string{"${ip}"}: failed to allocate IP ${ip}: the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${this.cidr}`);
    }
    try {
      await this.storage.create(IP_PREFIX + ip, ipObject(ip, svc));
      return ip;
    } catch (err) {
      if (err instanceof ApiError && err.reason === 'AlreadyExists') {
        throw invalid(svc, 'spec.clusterIPs', `Invalid value: []string{"${ip}"}: failed to allocate IP ${ip}: provided IP is already allocated`);
      }
      throw err;
    }
  }

  private async randomIP(svc: KubeObject): Promise<string> {
    // Upstream's static band: min(max(16, size/16), 256) low addresses are for explicit requests.
    const staticBand = Math.min(Math.max(16, Math.floor(this.size / 16)), 256);
    const lo = Math.min(staticBand, this.size - 2); const hi = this.size - 1;
    for (let attempt = 0; attempt < 64; attempt++) {
      const ip = intToIp(this.base + randomInt(lo, hi));
      try {
        await this.storage.create(IP_PREFIX + ip, ipObject(ip, svc));
        return ip;
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
      }
    }
    throw new ApiError('InternalError', 'Internal error occurred: failed to allocate a serviceIP: range is full');
  }

  private async reservePort(port: number, proto: string, svc: KubeObject, index: number): Promise<number> {
    if (port < this.ports.base || port >= this.ports.base + this.ports.size) return port; // validation reports it
    try {
      await this.storage.create(portKey(proto, port), portObject(proto, port, svc));
      return port;
    } catch (err) {
      if (err instanceof ApiError && err.reason === 'AlreadyExists') {
        throw invalid(svc, `spec.ports[${index}].nodePort`, `Invalid value: ${port}: provided port is already allocated`);
      }
      throw err;
    }
  }

  private async randomPort(proto: string, svc: KubeObject): Promise<number> {
    for (let attempt = 0; attempt < 128; attempt++) {
      const port = this.ports.base + randomInt(this.ports.size);
      try {
        await this.storage.create(portKey(proto, port), portObject(proto, port, svc));
        return port;
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
      }
    }
    throw new ApiError('InternalError', 'Internal error occurred: failed to allocate a nodePort: range is full');
  }
}

function invalid(svc: KubeObject, field: string, rest: string): ApiError {
  const err: FieldError = { type: 'FieldValueInvalid', field, message: `${field}: ${rest}` };
  return invalidError(Services, svc.metadata.name, [err]);
}

const portKey = (proto: string, port: number) => `${NODE_PORT_PREFIX}${proto.toLowerCase()}-${port}`;

function parentRef(svc: KubeObject) {
  return { group: '', resource: 'services', namespace: svc.metadata.namespace ?? '', name: svc.metadata.name };
}

function ipObject(ip: string, svc: KubeObject): KubeObject {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name: ip }, spec: { parentRef: parentRef(svc) } };
}

function portObject(proto: string, port: number, svc: KubeObject): KubeObject {
  return { apiVersion: 'v1', kind: 'ServiceNodePort', metadata: { name: `${proto.toLowerCase()}-${port}` }, spec: { parentRef: parentRef(svc) } };
}

function ipToIntOrNaN(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return NaN;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

function ipToInt(ip: string): number {
  const n = ipToIntOrNaN(ip);
  if (Number.isNaN(n)) throw new Error(`invalid IPv4 address ${ip}`);
  return n;
}

function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}
