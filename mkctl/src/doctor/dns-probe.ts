/**
 * DNS as a node sees it: one query to the cluster DNS (kube-dns, 10.96.0.10) from inside a node's
 * network namespace, where Service IPs are routed (kube-proxy); used by `mkctl doctor network` and
 * the `dns` link of `mkctl trace`. The query runs in a child node process (`ip netns exec`) with
 * node:dns' resolver: one try, 2 s timeout, no search list.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

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

const SCRIPT = `const { Resolver } = require('node:dns').promises;
const r = new Resolver({ timeout: 2000, tries: 1 }); r.setServers([process.argv[1]]);
const t0 = Date.now();
r.resolve4(process.argv[2]).then((a) => console.log(JSON.stringify({ addresses: a.sort(), ms: Date.now() - t0 })),
  (e) => console.log(JSON.stringify({ addresses: [], error: e.code || String(e), ms: Date.now() - t0 })));`;

/** Resolves name (A) from node's netns `mk8s-<node>` against server. */
export async function probeDns(node: string, name: string, server = CLUSTER_DNS_IP): Promise<DnsProbe> {
  try {
    const { stdout } = await run('ip', ['netns', 'exec', `mk8s-${node}`, process.execPath, '-e', SCRIPT, server, name], { timeout: 10_000 });
    const r = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { addresses?: string[]; error?: string; ms?: number };
    return { node, name, addresses: r.addresses ?? [], ...(r.error ? { error: r.error } : {}), ms: r.ms ?? 0 };
  } catch (e) {
    return { node, name, addresses: [], error: e instanceof Error ? e.message.split('\n')[0]! : String(e), ms: 0 };
  }
}

/** A problem with the probe given the addresses expected, or undefined when it answered them. */
export function dnsProblem(p: DnsProbe, expected: readonly string[]): string | undefined {
  if (p.error) return `${p.name} from ${p.node}: ${p.error === 'ETIMEOUT' ? `no answer from ${CLUSTER_DNS_IP} in 2 s` : p.error}`;
  const want = [...expected].sort();
  if (want.join(',') !== p.addresses.join(',')) return `${p.name} from ${p.node}: answered ${p.addresses.join(', ') || 'nothing'}, expected ${want.join(', ')}`;
  return undefined;
}
