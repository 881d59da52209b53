/**
 * DNS name helpers: normalized owner names (lower case, no trailing dot), reverse-lookup names for
 * IPv4 and IPv6, and the deprecated pod names `a-b-c-d.<ns>.pod.<zone>` (spec 2.6).
 */
import { isIP } from 'node:net';

/** Lower case, no trailing dot: the form every record is stored and looked up under (spec 2.1: case-insensitive). */
export function normalizeName(name: string): string {
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  return n.toLowerCase();
}

/** True when name is zone or below it (both normalized). */
export function inZone(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

/** The names between name (exclusive) and zone (inclusive), nearest first: the empty non-terminals a record implies. */
export function ancestors(name: string, zone: string): string[] {
  const out: string[] = [];
  let n = name;
  while (n !== zone && n.length > zone.length) {
    const dot = n.indexOf('.');
    if (dot < 0) break;
    n = n.slice(dot + 1);
    out.push(n);
  }
  return out;
}

/** Expands an IPv6 address to its 32 hex nibbles (no separators). */
function ipv6Nibbles(ip: string): string {
  const [head = '', tail] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const missing = 8 - h.length - t.length;
  const groups = tail === undefined ? h : [...h, ...Array.from({ length: missing }, () => '0'), ...t];
  return groups.map((g) => g.padStart(4, '0')).join('').toLowerCase();
}

/** The PTR owner name of an IP: `d.c.b.a.in-addr.arpa` or the ip6.arpa nibble form; undefined for a non-IP. */
export function reverseName(ip: string): string | undefined {
  const v = isIP(ip);
  if (v === 4) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  if (v === 6) return `${[...ipv6Nibbles(ip)].reverse().join('.')}.ip6.arpa`;
  return undefined;
}

/** The reverse zones cluster DNS answers for (CoreDNS' default Corefile: `kubernetes <zone> in-addr.arpa ip6.arpa`). */
export const REVERSE_ZONES = ['in-addr.arpa', 'ip6.arpa'] as const;

/**
 * Parses `a-b-c-d.<ns>.pod.<zone>` (and the IPv6 form with dashes for colons). Returns the IP and
 * namespace, or undefined when name is not of that shape.
 */
export function parsePodName(name: string, zone: string): { ip: string; namespace: string } | undefined {
  const suffix = `.pod.${zone}`;
  if (!name.endsWith(suffix)) return undefined;
  const labels = name.slice(0, -suffix.length).split('.');
  if (labels.length !== 2) return undefined;
  const [dashed = '', namespace = ''] = labels;
  const v4 = dashed.replaceAll('-', '.');
  if (isIP(v4) === 4) return { ip: v4, namespace };
  const v6 = dashed.replaceAll('-', ':');
  if (isIP(v6) === 6) return { ip: v6, namespace };
  return undefined;
}

/** The dashed form of an IP used as a label (`10-244-1-5`): pod names and endpoints without a hostname. */
export function dashedIp(ip: string): string {
  return ip.replaceAll(isIP(ip) === 6 ? ':' : '.', '-');
}
