/**
 * Carries a Service's allocated values over an update that omits them, as upstream's service
 * REST storage patchAllocatedValues: a PUT of the original manifest (kubectl replace, a client
 * that read an old copy) keeps its clusterIP(s), nodePorts and healthCheckNodePort instead of
 * failing validation or reallocating.
 */
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const needsClusterIP = (spec: Obj) => (spec.type ?? 'ClusterIP') !== 'ExternalName';
const needsNodePort = (spec: Obj) => spec.type === 'NodePort' || spec.type === 'LoadBalancer';
const needsHCNodePort = (spec: Obj) => spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';

/** Mutates next.spec, filling allocated fields from prev.spec where next leaves them empty. */
export function preserveServiceAllocations(next: unknown, prev: unknown): void {
  const n = (next as Obj | undefined)?.spec, o = (prev as Obj | undefined)?.spec;
  if (!isObj(n) || !isObj(o)) return;
  if (needsClusterIP(o) && needsClusterIP(n)) {
    if (!n.clusterIP && o.clusterIP) n.clusterIP = o.clusterIP;
    if ((!Array.isArray(n.clusterIPs) || n.clusterIPs.length === 0) && Array.isArray(o.clusterIPs) && o.clusterIPs.length) n.clusterIPs = [...o.clusterIPs];
  }
  if (needsNodePort(o) && needsNodePort(n)) {
    const oldPorts: Obj[] = Array.isArray(o.ports) ? o.ports : [];
    const newPorts: Obj[] = Array.isArray(n.ports) ? n.ports : [];
    const usedNew = new Set(newPorts.map((p) => p.nodePort).filter(Boolean));
    const byName = new Map(oldPorts.map((p) => [p.name ?? '', p.nodePort]));
    for (const p of newPorts) {
      if (p.nodePort) continue;
      const old = byName.get(p.name ?? '');
      // A nodePort already claimed by another port of the new spec cannot be reused.
      if (old && !usedNew.has(old)) { p.nodePort = old; usedNew.add(old); }
    }
  }
  if (needsHCNodePort(o) && needsHCNodePort(n) && !n.healthCheckNodePort && o.healthCheckNodePort) n.healthCheckNodePort = o.healthCheckNodePort;
}
