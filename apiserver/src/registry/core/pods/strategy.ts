import { Pods, type KubeObject } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
const containersOf = (spec: Obj): Obj[] => [...((spec['initContainers'] ?? []) as Obj[]), ...((spec['containers'] ?? []) as Obj[])];

/** Upstream's qos.GetPodQOS, reduced to cpu and memory. */
export function podQOSClass(pod: KubeObject): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const cs = containersOf(asObj(pod['spec']));
  let any = false; let guaranteed = cs.length > 0;
  for (const c of cs) {
    const res = asObj(c['resources']);
    const req = asObj(res['requests']); const lim = asObj(res['limits']);
    for (const r of ['cpu', 'memory']) {
      if (req[r] !== undefined || lim[r] !== undefined) any = true;
      const want = req[r] ?? lim[r];
      if (lim[r] === undefined || String(want) !== String(lim[r])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export const podStrategy: RestStrategy = {
  resource: Pods,
  returnDeletedObject: true,
  prepareForCreate(pod) {
    pod['status'] = { phase: 'Pending', qosClass: podQOSClass(pod) };
  },
  prepareForStatusUpdate(next, prev) {
    // The kubelet may not move a pod between nodes through status.
    next['spec'] = structuredClone(prev['spec']);
  },
  gracePeriodSeconds(pod, requested) {
    const spec = asObj(pod['spec']);
    const phase = asObj(pod['status'])['phase'];
    // Never scheduled, or already finished: nothing runs that needs time to stop.
    if (!spec['nodeName'] || phase === 'Succeeded' || phase === 'Failed') return 0;
    if (requested !== undefined) return requested;
    const t = spec['terminationGracePeriodSeconds'];
    return typeof t === 'number' && t >= 0 ? t : 30;
  },
};
