/**
 * DNS as a node sees it: one query to the cluster DNS (kube-dns, 10.96.0.10) from inside a node's
 * network namespace, where Service IPs are routed (kube-proxy); used by `mkctl doctor network` and
 * the `dns` link of `mkctl trace`. The query runs in a child node process (`ip netns exec`) with
 * node:dns' resolver: one try, 2 s timeout, no search list.
 */
import { CLUSTER_DNS_IP, type DnsProbe } from '../trace/index.js';
import { execFileStdout, firstLine, type ExecFile } from './node-exec.js';
import { nodeNetns } from './proxy-rules.js';

const SCRIPT = `const { Resolver } = require('node:dns').promises;
const r = new Resolver({ timeout: 2000, tries: 1 }); r.setServers([process.argv[1]]);
const t0 = Date.now();
r.resolve4(process.argv[2]).then((a) => console.log(JSON.stringify({ addresses: a.sort(), ms: Date.now() - t0 })),
  (e) => console.log(JSON.stringify({ addresses: [], error: e.code || String(e), ms: Date.now() - t0 })));`;

/** Resolves name (A) from node's netns `mk8s-<node>` against server; never rejects (a failure is the probe's error). */
export async function probeDns(node: string, name: string, server = CLUSTER_DNS_IP, o: { exec?: ExecFile } = {}): Promise<DnsProbe> {
  try {
    const stdout = await (o.exec ?? execFileStdout)('ip', ['netns', 'exec', nodeNetns(node), process.execPath, '-e', SCRIPT, server, name], { timeoutMs: 10_000 });
    const r = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { addresses?: string[]; error?: string; ms?: number };
    return { node, name, addresses: r.addresses ?? [], ...(r.error ? { error: r.error } : {}), ms: r.ms ?? 0 };
  } catch (e) {
    return { node, name, addresses: [], error: firstLine(e), ms: 0 };
  }
}
