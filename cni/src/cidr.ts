/** IPv4 CIDR arithmetic for the pod network (IPv4 only, as the cluster's network plan). */

/** A parsed IPv4 CIDR. */
export interface Cidr { base: number; prefix: number }

export function ipToInt(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4) throw new Error(`invalid IPv4 address "${ip}"`);
  let n = 0;
  for (const p of parts) {
    const v = Number(p);
    if (!/^\d{1,3}$/.test(p) || v > 255) throw new Error(`invalid IPv4 address "${ip}"`);
    n = n * 256 + v;
  }
  return n;
}

export function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** parseCidr parses "a.b.c.d/n" and normalizes the base to the network address. */
export function parseCidr(cidr: string): Cidr {
  const [ip, len] = cidr.split('/');
  const prefix = Number(len);
  if (!ip || len === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) throw new Error(`invalid CIDR "${cidr}"`);
  const size = 2 ** (32 - prefix);
  const base = Math.floor(ipToInt(ip) / size) * size;
  return { base, prefix };
}

export function cidrSize(c: Cidr): number { return 2 ** (32 - c.prefix); }

export function cidrContains(c: Cidr, ip: string): boolean {
  const n = ipToInt(ip);
  return n >= c.base && n < c.base + cidrSize(c);
}

export function formatCidr(c: Cidr): string { return `${intToIp(c.base)}/${c.prefix}`; }

/** The gateway of a pod CIDR: its first host address (.1 of a /24), as host-local's default. */
export function gatewayOf(c: Cidr): string { return intToIp(c.base + 1); }

/** The addresses pods may get: every host address except the gateway (network and broadcast excluded). */
export function podRange(c: Cidr): { first: number; last: number } {
  return { first: c.base + 2, last: c.base + cidrSize(c) - 2 };
}
