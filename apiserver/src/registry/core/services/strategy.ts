import { Services, type KubeObject } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';
import type { ServiceAllocator } from './allocator.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Services: ClusterIP and NodePorts are allocated by the server (unique across apiservers through
 * etcd) and kept when an update omits them (upstream patchAllocatedValues), so `kubectl apply`
 * and PUTs without them do not lose their address.
 */
export function createServiceStrategy(allocator: ServiceAllocator): RestStrategy {
  return {
    resource: Services,
    tracksGeneration: false,
    nameIsDNSLabel: true,
    prepareForCreate(svc) {
      svc['status'] = { loadBalancer: {} };
    },
    prepareForUpdate(next, prev) {
      keepAllocatedValues(next, prev);
    },
    allocate: async (obj, prev) => allocator.allocate(obj, prev),
    release: async (old, next) => allocator.release(old, next),
  };
}

function keepAllocatedValues(next: KubeObject, prev: KubeObject): void {
  const n = (next['spec'] ?? {}) as Obj; const p = (prev['spec'] ?? {}) as Obj;
  const type = n['type'] ?? 'ClusterIP';
  if (type !== 'ExternalName' && !n['clusterIP'] && p['clusterIP']) {
    n['clusterIP'] = p['clusterIP'];
    n['clusterIPs'] = p['clusterIPs'] ?? [p['clusterIP']];
  }
  if (type === 'NodePort' || type === 'LoadBalancer') {
    const old = (p['ports'] ?? []) as Obj[];
    for (const port of (n['ports'] ?? []) as Obj[]) {
      if (port['nodePort']) continue;
      const match = old.find((o) => o['port'] === port['port'] && (o['protocol'] ?? 'TCP') === (port['protocol'] ?? 'TCP'));
      if (match?.['nodePort']) port['nodePort'] = match['nodePort'];
    }
  }
  next['spec'] = n;
}
