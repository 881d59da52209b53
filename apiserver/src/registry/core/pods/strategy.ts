import { Pods, podQOSClass } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});

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
