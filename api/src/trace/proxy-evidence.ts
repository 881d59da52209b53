/** Reads kube-proxy's iptables rules as evidence for the kube-proxy link (the text comes from iptables-save in a node's netns). */
import type { ProxyEvidence } from './link.js';

/** Parses `iptables-save -t nat` for the KUBE-SVC chains of Services (by "ns/name:port" comments). */
export function proxyEvidenceFromIptables(node: string, natText: string, services: { namespace: string; name: string }[]): ProxyEvidence[] {
  const lines = natText.split('\n');
  return services.map(({ namespace, name }) => {
    const key = `${namespace}/${name}`;
    const svcRule = lines.find((l) => l.startsWith('-A KUBE-SERVICES ') && l.includes(`"${key}:`) || (l.startsWith('-A KUBE-SERVICES ') && l.includes(`"${key} `)));
    const chain = svcRule ? /-j (KUBE-SVC-\S+)/.exec(svcRule)?.[1] : undefined;
    if (!chain) return { node, present: false, endpoints: 0, detail: `no KUBE-SERVICES rule for ${key}` };
    const eps = lines.filter((l) => l.startsWith(`-A ${chain} `) && /-j KUBE-SEP-/.test(l)).length;
    return { node, present: true, endpoints: eps, detail: `${key} → ${chain} with ${eps} endpoints` };
  });
}
