import { Pods, type FieldError, type KubeObject } from '@mk8s/api';
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

/** Spec fields a pod update may change (upstream ValidatePodUpdate). */
function mutableSpecView(spec: Obj): Obj {
  const copy = structuredClone(spec);
  for (const list of ['containers', 'initContainers'] as const) {
    const cs = copy[list] as Obj[] | undefined;
    if (Array.isArray(cs)) for (const c of cs) delete c['image'];
  }
  delete copy['activeDeadlineSeconds'];
  delete copy['tolerations'];
  delete copy['terminationGracePeriodSeconds'];
  return copy;
}

export const podStrategy: RestStrategy = {
  resource: Pods,
  returnDeletedObject: true,
  prepareForCreate(pod) {
    pod['status'] = { phase: 'Pending', qosClass: podQOSClass(pod) };
  },
  validateUpdate(next, prev): FieldError[] {
    const a = mutableSpecView(asObj(next['spec'])); const b = mutableSpecView(asObj(prev['spec']));
    if (JSON.stringify(sortKeys(a)) !== JSON.stringify(sortKeys(b))) {
      return [{ type: 'FieldValueForbidden', field: 'spec',
        message: 'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)' }];
    }
    return [];
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

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Obj)[k])]));
}
