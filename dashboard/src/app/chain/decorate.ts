/**
 * What the chain view adds to a gathered chain before the walk, the dashboard's part of the
 * node-local evidence: kube-proxy's rules per node from the dashboard server's proxy-rules
 * endpoint (read as root in each node's netns, authorized by the user's own token), or, when the
 * server cannot read them (501: compose or VM mode) or the call fails, why the link is `info`.
 * DNS answers are not read here (they are seen from inside a node): the dns link says so.
 */
import { proxiedServices, type ApiGet, type ProxyEvidence, type TraceGathered } from '@mk8s/api/trace';

/** The dashboard server's endpoint (dashboard/src/server/proxy-rules.ts) for a Service on nodes. */
export function proxyRulesPath(namespace: string, name: string, nodes: readonly string[]): string {
  const q = nodes.length ? `?nodes=${nodes.map(encodeURIComponent).join(',')}` : '';
  return `/mk8s/v1/namespaces/${encodeURIComponent(namespace)}/services/${encodeURIComponent(name)}/proxy-rules${q}`;
}

/** The part of the endpoint's answer read here: node → evidence. */
interface ProxyRulesAnswer { nodes?: Record<string, ProxyEvidence> }

/**
 * Sets the not-read wording, then, with get (the app's API client: the user's token), asks the
 * server for each proxied Service's rules on the chain's nodes, one call at a time (a browser has
 * six connections to the dashboard and the watches hold four), and fills `input.proxy`, which
 * turns the kube-proxy link ok or broken. Never rejects: any failure leaves the link `info`.
 */
export async function decorateForDashboard(g: TraceGathered, get?: ApiGet): Promise<void> {
  if (g.kind !== 'chain') return;
  const nodes = (g.input.nodes ?? []).map((n) => n.metadata?.name ?? '').filter(Boolean);
  g.input.proxyNotRead = `not visible from the API: kube-proxy on ${nodes.length ? nodes.join(', ') : 'each node'} programs the Service's rules from the EndpointSlices above; \`mkctl trace\`, run as root on the machine that runs the nodes, reads them`;
  g.input.dnsNotRead = 'not looked up: DNS answers are seen from inside a node, not through the API';
  const services = proxiedServices(g);
  if (!get || !nodes.length || !services.length) return;
  const proxy: Record<string, ProxyEvidence[]> = Object.fromEntries(nodes.map((n) => [n, []]));
  try {
    for (const s of services) {
      const answer = await get(proxyRulesPath(s.namespace, s.name, nodes)) as ProxyRulesAnswer | null;
      for (const n of nodes) {
        const ev = answer?.nodes?.[n];
        if (!ev) return;   // a node left out: the rules are not known, say so rather than call them missing
        proxy[n]!.push(ev);
      }
    }
  } catch {
    return;              // 501 (not readable where the dashboard runs), 403, network: the info wording stays
  }
  g.input.proxy = proxy;
}
