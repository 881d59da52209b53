/**
 * kube-proxy's rules as a node sees them: `iptables-save -t nat` inside the node's network
 * namespace `mk8s-<node>` (local mode), parsed by `proxyEvidenceFromIptables`. Needs root on the
 * machine that runs the nodes; used by `mkctl trace` and the dashboard server.
 */
import { proxyEvidenceFromIptables, type ProxyEvidence } from '../trace/index.js';
import { isDNS1123Label } from '../validation/names.js';
import { execFileStdout, firstLine, type ExecFile } from './node-exec.js';

/** Where the readers run (the real process by default). */
export interface NodeReadOptions {
  /** @default execFile of node:child_process */
  exec?: ExecFile;
  /** This process' uid; reading another netns needs 0. @default process.getuid() */
  uid?: number | undefined;
}

/** The netns of a node in local mode (mkctl/src/cluster/network-plan.ts names them). */
export const nodeNetns = (node: string): string => `mk8s-${node}`;

/**
 * The nodes whose netns `mk8s-<node>` exists on this machine and that this process may enter;
 * undefined when it can read none (not root, no `ip`: compose or VM mode, or a user's shell).
 * Only names that are DNS labels are returned, so a caller that checks membership passes no
 * other text to `ip netns exec`.
 */
export async function localNodes(o: NodeReadOptions = {}): Promise<Set<string> | undefined> {
  if ((o.uid ?? process.getuid?.()) !== 0) return undefined;
  let text: string;
  try { text = await (o.exec ?? execFileStdout)('ip', ['netns', 'list'], { timeoutMs: 5000 }); } catch { return undefined; }
  const nodes = new Set<string>();
  // `ip netns list` prints "name" or "name (id: N)" per line.
  for (const line of text.split('\n')) {
    const ns = line.split(' ')[0] ?? '';
    const node = ns.startsWith('mk8s-') ? ns.slice('mk8s-'.length) : '';
    if (node && isDNS1123Label(node).length === 0) nodes.add(node);
  }
  return nodes;
}

/**
 * What kube-proxy programmed for services on node (netns `mk8s-<node>`, which the caller has
 * checked with localNodes), one ProxyEvidence per service in the order given. Never rejects: a
 * failed iptables-save is `present: false` with the error as detail.
 */
export async function readNodeProxyEvidence(node: string, services: readonly { namespace: string; name: string }[], o: Pick<NodeReadOptions, 'exec'> = {}): Promise<ProxyEvidence[]> {
  try {
    const nat = await (o.exec ?? execFileStdout)('ip', ['netns', 'exec', nodeNetns(node), 'iptables-save', '-t', 'nat'], { timeoutMs: 10_000, maxBuffer: 64 << 20 });
    return proxyEvidenceFromIptables(node, nat, [...services]);
  } catch (e) {
    return services.map(() => ({ node, present: false, endpoints: 0, detail: `iptables-save failed: ${firstLine(e)}` }));
  }
}

/**
 * readNodeProxyEvidence for each node, keyed by node; undefined when any node's netns is not
 * readable here (the caller says why the link is `info`).
 */
export async function readProxyEvidence(nodes: readonly string[], services: readonly { namespace: string; name: string }[], o: NodeReadOptions = {}): Promise<Record<string, ProxyEvidence[]> | undefined> {
  const local = await localNodes(o);
  if (!local || nodes.some((n) => !local.has(n))) return undefined;
  const out: Record<string, ProxyEvidence[]> = {};
  // Node by node: iptables-save takes the xtables lock, and a 2-core machine gains nothing from parallel ones.
  for (const n of nodes) out[n] = await readNodeProxyEvidence(n, services, o);
  return out;
}
