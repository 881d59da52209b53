/**
 * What a DNS lookup from a node gave and how to judge it; the lookup itself is node-local
 * (api/src/trace-node/dns-probe.ts runs it inside the node's netns).
 */
export const CLUSTER_DNS_IP = '10.96.0.10';

/** What one lookup from one node gave. */
export interface DnsProbe {
  node: string;
  name: string;
  /** The A records (sorted). */
  addresses: string[];
  /** node:dns' error code (ENOTFOUND = NXDOMAIN, ETIMEOUT, ECONNREFUSED, EREFUSED, ...). */
  error?: string;
  ms: number;
}

/** A problem with the probe given the addresses expected, or undefined when it answered them. */
export function dnsProblem(p: DnsProbe, expected: readonly string[]): string | undefined {
  if (p.error) return `${p.name} from ${p.node}: ${p.error === 'ETIMEOUT' ? `no answer from ${CLUSTER_DNS_IP} in 2 s` : p.error}`;
  const want = [...expected].sort();
  if (want.join(',') !== p.addresses.join(',')) return `${p.name} from ${p.node}: answered ${p.addresses.join(', ') || 'nothing'}, expected ${want.join(', ')}`;
  return undefined;
}
