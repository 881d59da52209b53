/**
 * `mkctl doctor network`, the pure part: given what was read on each node (bridge address, routes,
 * IPAM files, nat rules) and what the API says (nodes' podCIDRs and InternalIPs, pods, Services
 * with their ready endpoints), list the facts and what is inconsistent: leaked IPs, missing or
 * stale routes, missing or stale kube-proxy rules.
 */

export interface NodeFacts {
  name: string;
  internalIP?: string;
  podCIDR?: string;
  ready: boolean;
}

export interface NodeObservation {
  node: string;
  /** Could the node's netns be read at all? */
  reachable: boolean;
  error?: string;
  /** cni0 addresses as "ip/prefix", and whether it is UP. */
  bridge?: { addrs: string[]; up: boolean };
  /** `ip route` lines. */
  routes: string[];
  /** IPAM: allocated IP → container id. */
  allocations: Record<string, string>;
  /** `iptables-save -t nat` text, when readable. */
  nat?: string;
  /** The cluster DNS asked for kubernetes.default from this node (absent: not checked). */
  dns?: DnsProbe;
}

export interface ApiView {
  nodes: NodeFacts[];
  /** Pods with an IP, by node. */
  pods: { namespace: string; name: string; node: string; ip: string; hostNetwork: boolean }[];
  services: { namespace: string; name: string; clusterIP: string; readyEndpoints: number }[];
}

import { dnsProblem, type DnsProbe } from '@mk8s/api/trace';

/** The default Service every cluster has: what the DNS check asks for. */
export const DNS_CHECK_SERVICE = { namespace: 'default', name: 'kubernetes' };

export interface NodeReport { node: string; facts: string[]; problems: string[] }

function inCidr(ip: string, cidr: string): boolean {
  const [base, bitsS] = cidr.split('/');
  const bits = Number(bitsS);
  const toN = (s: string) => s.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return ((toN(ip) & mask) >>> 0) === ((toN(base!) & mask) >>> 0);
}

const gatewayOf = (cidr: string) => cidr.replace(/\.0\/(\d+)$/, '.1/$1');

export function checkNetwork(api: ApiView, obs: NodeObservation[]): NodeReport[] {
  return obs.map((o) => {
    const r: NodeReport = { node: o.node, facts: [], problems: [] };
    const me = api.nodes.find((n) => n.name === o.node);
    if (!me) r.problems.push(`node ${o.node} has a network namespace but no Node object (stale netns?)`);
    if (!o.reachable) { r.problems.push(`cannot read the node's network namespace: ${o.error ?? 'unknown error'}`); return r; }
    // Bridge
    if (!o.bridge) r.problems.push(me?.podCIDR ? 'bridge cni0 is missing (no pod has been set up yet, or the CNI plugin failed)' : 'bridge cni0 is missing');
    else {
      r.facts.push(`bridge cni0 ${o.bridge.up ? 'UP' : 'DOWN'} ${o.bridge.addrs.join(', ') || '(no address)'}`);
      if (!o.bridge.up) r.problems.push('bridge cni0 is DOWN');
      if (me?.podCIDR && !o.bridge.addrs.includes(gatewayOf(me.podCIDR))) r.problems.push(`bridge cni0 should hold ${gatewayOf(me.podCIDR)} (gateway of podCIDR ${me.podCIDR}), has ${o.bridge.addrs.join(', ') || 'none'}`);
    }
    // Routes (host-gw)
    if (!me?.podCIDR) r.problems.push(`node ${o.node} has no spec.podCIDR (node-ipam controller)`);
    const podRoutes = o.routes.filter((l) => /^10\.\d+\.\d+\.\d+\/\d+ via /.test(l));
    for (const other of api.nodes) {
      if (other.name === o.node || !other.podCIDR) continue;
      const line = o.routes.find((l) => l.startsWith(`${other.podCIDR} `));
      if (!line) r.problems.push(`missing route to ${other.name}'s pods ${other.podCIDR} via ${other.internalIP ?? '?'} (node route agent in kube-proxy)`);
      else if (other.internalIP && !line.includes(`via ${other.internalIP} `)) r.problems.push(`route to ${other.podCIDR} goes "${line.trim()}", expected via ${other.internalIP}`);
      else r.facts.push(`route ${other.podCIDR} via ${other.internalIP ?? '?'} (${other.name})`);
    }
    for (const l of podRoutes) {
      const dst = l.split(' ')[0]!;
      if (!api.nodes.some((n) => n.podCIDR === dst)) r.problems.push(`stale route "${l.trim()}": no node owns ${dst}`);
    }
    // IPAM
    const ips = Object.keys(o.allocations);
    const podsHere = api.pods.filter((p) => p.node === o.node && !p.hostNetwork);
    r.facts.push(`IPAM: ${ips.length} allocated, ${podsHere.length} pods with an IP`);
    for (const ip of ips.sort()) {
      if (me?.podCIDR && !inCidr(ip, me.podCIDR)) r.problems.push(`IPAM holds ${ip} outside podCIDR ${me.podCIDR}`);
      if (!podsHere.some((p) => p.ip === ip)) r.problems.push(`leaked IP ${ip} (container ${o.allocations[ip]!.slice(0, 12)}): no pod on this node has it`);
    }
    for (const p of podsHere) if (!ips.includes(p.ip)) r.problems.push(`pod ${p.namespace}/${p.name} has IP ${p.ip} that IPAM did not allocate`);
    // kube-proxy
    if (o.nat === undefined) r.problems.push('could not read the nat table');
    else {
      const lines = o.nat.split('\n');
      const svcRules = lines.filter((l) => l.startsWith('-A KUBE-SERVICES ') && / -j KUBE-SVC-/.test(l));
      r.facts.push(`kube-proxy: ${svcRules.length} service rules, ${lines.filter((l) => l.startsWith(':KUBE-SEP-')).length} endpoint chains`);
      if (!lines.some((l) => l.includes('-j KUBE-SERVICES'))) r.problems.push('no jump to KUBE-SERVICES from PREROUTING/OUTPUT: kube-proxy has not synced here');
      for (const s of api.services) {
        if (!s.clusterIP || s.clusterIP === 'None') continue;
        const rule = svcRules.find((l) => l.includes(`-d ${s.clusterIP}/32 `));
        if (!rule) { if (s.readyEndpoints > 0) r.problems.push(`missing rules for service ${s.namespace}/${s.name} (${s.clusterIP}, ${s.readyEndpoints} ready endpoints)`); continue; }
        const chain = /-j (KUBE-SVC-\S+)/.exec(rule)![1]!;
        const eps = lines.filter((l) => l.startsWith(`-A ${chain} `) && / -j KUBE-SEP-/.test(l)).length;
        if (eps !== s.readyEndpoints) r.problems.push(`service ${s.namespace}/${s.name}: ${eps} endpoints programmed, ${s.readyEndpoints} ready in the API`);
      }
      for (const l of svcRules) {
        const ip = / -d (\S+)\/32 /.exec(l)?.[1];
        if (ip && !api.services.some((s) => s.clusterIP === ip)) r.problems.push(`stale rule for ${ip} (${/--comment "([^"]+)"/.exec(l)?.[1] ?? '?'}): no such Service`);
      }
    }
    // Cluster DNS (kube-dns): the default Service's name must resolve to its ClusterIP from here.
    if (o.dns) {
      const want = api.services.find((s) => s.namespace === DNS_CHECK_SERVICE.namespace && s.name === DNS_CHECK_SERVICE.name)?.clusterIP;
      const problem = want ? dnsProblem(o.dns, [want]) : undefined;
      if (problem) r.problems.push(`DNS: ${problem} (kube-system/coredns: mkctl -n kube-system get pods -l k8s-app=kube-dns)`);
      else r.facts.push(`DNS: ${o.dns.name} → ${o.dns.addresses.join(', ')} in ${o.dns.ms} ms`);
    }
    return r;
  });
}

export function formatReports(reports: NodeReport[]): string {
  const out: string[] = [];
  for (const r of reports) {
    out.push(`${r.node}: ${r.problems.length ? `${r.problems.length} problem${r.problems.length > 1 ? 's' : ''}` : 'ok'}`);
    for (const f of r.facts) out.push(`  ${f}`);
    for (const p of r.problems) out.push(`  ✗ ${p}`);
  }
  return `${out.join('\n')}\n`;
}
