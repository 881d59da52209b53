/**
 * CidrSet (upstream pkg/controller/nodeipam/ipam/cidrset): carves a cluster CIDR into equal
 * subnets (e.g. /24s of 10.244.0.0/16) and hands them out without repeats. IPv4 only.
 * Not safe for use from two processes: only the leader's controller allocates.
 */
export class CidrSet {
  private readonly base: number;
  private readonly subnetBits: number;
  private readonly count: number;
  private readonly used = new Set<number>();
  private next = 0;

  constructor(clusterCIDR = '10.244.0.0/16', readonly maskSize = 24) {
    const { ip, prefix } = parseCidr(clusterCIDR);
    if (maskSize < prefix || maskSize > 32) throw new Error(`invalid node CIDR mask size ${maskSize} for cluster CIDR ${clusterCIDR}`);
    if (maskSize - prefix > 24) throw new Error(`CIDR mask size ${maskSize} makes too many subnets of ${clusterCIDR}`);
    this.subnetBits = 32 - maskSize;
    this.count = 2 ** (maskSize - prefix);
    this.base = prefix === 0 ? 0 : (ip & ~((2 ** (32 - prefix)) - 1)) >>> 0;
  }

  /** Number of subnets in use. */
  get size(): number { return this.used.size; }

  private index(cidr: string): number | undefined {
    const { ip, prefix } = parseCidr(cidr);
    if (prefix !== 32 - this.subnetBits) return undefined;
    const off = (ip - this.base) / 2 ** this.subnetBits;
    return Number.isInteger(off) && off >= 0 && off < this.count ? off : undefined;
  }

  private cidrAt(i: number): string {
    return `${formatIP((this.base + i * 2 ** this.subnetBits) >>> 0)}/${32 - this.subnetBits}`;
  }

  /** Marks cidr used (a node already has it). False when cidr is not a subnet of this set. */
  occupy(cidr: string): boolean {
    const i = this.index(cidr);
    if (i === undefined) return false;
    this.used.add(i);
    return true;
  }

  release(cidr: string): void {
    const i = this.index(cidr);
    if (i !== undefined) this.used.delete(i);
  }

  /** The next free subnet (rotating, so a released one is not reused at once), or undefined when full. */
  allocateNext(): string | undefined {
    for (let n = 0; n < this.count; n++) {
      const i = (this.next + n) % this.count;
      if (!this.used.has(i)) {
        this.used.add(i);
        this.next = (i + 1) % this.count;
        return this.cidrAt(i);
      }
    }
    return undefined;
  }
}

export function parseCidr(cidr: string): { ip: number; prefix: number } {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr.trim());
  if (!m) throw new Error(`invalid CIDR address: ${cidr}`);
  const parts = m.slice(1, 5).map(Number);
  const prefix = Number(m[5]);
  if (parts.some((p) => p > 255) || prefix > 32) throw new Error(`invalid CIDR address: ${cidr}`);
  return { ip: (((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0), prefix };
}

const formatIP = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
