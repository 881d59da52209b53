/**
 * `kubectl get hpa` columns, after upstream's printHorizontalPodAutoscaler / formatHPAMetrics
 * (pkg/printers/internalversion/printers.go): NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE,
 * TARGETS as `cpu: 73%/50%`, `cpu: <unknown>/50%`, `memory: 120Mi/200Mi`, `5/10 (avg)`, at most two
 * then `+ N more...`. Printers are found by group and plural: an autoscaling/v1 object is printed
 * from the v2 object it was made from, as upstream prints the internal version.
 */
import type { KubeObject } from '@mk8s/api';
import { canonicalQuantity } from '@mk8s/api';
import { storedFormOf } from '../registry/autoscaling/conversion.js';
import { AGE, NAME, age, col, type Printer } from './printer-kit.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const q = (v: unknown): string => {
  if (v === undefined || v === null) return '0';
  try { return canonicalQuantity(v as string); } catch { return String(v); }
};

/** formatHPAMetrics: spec i is paired with status i, as upstream does. */
export function formatHpaMetrics(specs: readonly Obj[], statuses: readonly Obj[]): string {
  if (specs.length === 0) return '<none>';
  const list: string[] = [];
  specs.forEach((spec, i) => {
    const st: Obj | undefined = statuses[i];
    switch (spec.type) {
      case 'External':
      case 'Object': {
        const f = spec.type === 'External' ? 'external' : 'object';
        const target: Obj = spec[f]?.target ?? {};
        const cur: Obj | undefined = isObj(st?.[f]) ? st![f].current ?? {} : undefined;
        if (target.averageValue != null) list.push(`${cur?.averageValue != null ? q(cur.averageValue) : '<unknown>'}/${q(target.averageValue)} (avg)`);
        else list.push(`${cur ? q(cur.value) : '<unknown>'}/${q(target.value)}`);
        break;
      }
      case 'Pods': {
        const cur = isObj(st?.pods) ? q(st!.pods.current?.averageValue) : '<unknown>';
        list.push(`${cur}/${q(spec.pods?.target?.averageValue)}`);
        break;
      }
      case 'Resource':
      case 'ContainerResource': {
        const f = spec.type === 'Resource' ? 'resource' : 'containerResource';
        const src: Obj = spec[f] ?? {};
        const target: Obj = src.target ?? {};
        const status: Obj | undefined = isObj(st?.[f]) ? st![f] : undefined;
        if (target.averageValue != null) {
          list.push(`${src.name}: ${status ? q(status.current?.averageValue) : '<unknown>'}/${q(target.averageValue)}`);
        } else {
          const cur = typeof status?.current?.averageUtilization === 'number' ? `${status.current.averageUtilization}%` : '<unknown>';
          const tgt = typeof target.averageUtilization === 'number' ? `${target.averageUtilization}%` : '<auto>';
          list.push(`${src.name}: ${cur}/${tgt}`);
        }
        break;
      }
      default:
        list.push('<unknown type>');
    }
  });
  const max = 2;
  return list.length > max ? `${list.slice(0, max).join(', ')} + ${list.length - max} more...` : list.join(', ');
}

const hpaPrinter: Printer = {
  columns: [
    NAME,
    col('Reference', 'string', 'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.'),
    col('Targets', 'string', 'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.'),
    col('MinPods', 'string', 'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.'),
    col('MaxPods', 'integer', 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.'),
    col('Replicas', 'integer', 'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.'),
    AGE,
  ],
  row(obj: KubeObject, now: number) {
    const hpa = storedFormOf(obj) as Obj;
    const spec: Obj = hpa.spec ?? {};
    const status: Obj = hpa.status ?? {};
    const ref: Obj = spec.scaleTargetRef ?? {};
    const metrics = formatHpaMetrics(Array.isArray(spec.metrics) ? spec.metrics : [], Array.isArray(status.currentMetrics) ? status.currentMetrics : []);
    const minPods = typeof spec.minReplicas === 'number' ? String(spec.minReplicas) : '<unset>';
    return { cells: [obj.metadata.name, `${ref.kind ?? ''}/${ref.name ?? ''}`, metrics, minPods, spec.maxReplicas ?? 0, status.currentReplicas ?? 0, age(obj, now)] };
  },
};

/** group/resource → printer. */
export const AUTOSCALING_PRINTERS: Record<string, Printer> = {
  'autoscaling/horizontalpodautoscalers': hpaPrinter,
};
