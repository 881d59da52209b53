/**
 * Node lifecycle decisions (upstream pkg/controller/nodelifecycle and the taint-eviction
 * controller), as pure functions: zone states, the taints a node's conditions call for, and when
 * a pod on a NoExecute-tainted node must go.
 */
import type { Node, NodeCondition, Pod, Taint, Toleration } from '@mk8s/api';

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
export const TAINT_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';

export type ZoneState = 'Initial' | 'Normal' | 'FullDisruption' | 'PartialDisruption';

export const readyCondition = (n: Node): NodeCondition | undefined => n.status?.conditions?.find((c) => c.type === 'Ready');

/** The zone key of a node (upstream GetZoneKey: region + zone labels). */
export function zoneOf(n: Node): string {
  const l = n.metadata?.labels ?? {};
  const region = l['topology.kubernetes.io/region'] ?? l['failure-domain.beta.kubernetes.io/region'] ?? '';
  const zone = l['topology.kubernetes.io/zone'] ?? l['failure-domain.beta.kubernetes.io/zone'] ?? '';
  return region || zone ? `${region}:\x00:${zone}` : '';
}

/**
 * ComputeZoneState: no ready node → FullDisruption; more than 2 not-ready nodes making up at
 * least unhealthyZoneThreshold of the zone → PartialDisruption; else Normal.
 */
export function computeZoneState(readyStatuses: readonly (string | undefined)[], unhealthyZoneThreshold = 0.55): { notReady: number; state: ZoneState } {
  let ready = 0, notReady = 0;
  for (const s of readyStatuses) if (s === 'True') ready++; else notReady++;
  if (ready === 0 && notReady > 0) return { notReady, state: 'FullDisruption' };
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyZoneThreshold) return { notReady, state: 'PartialDisruption' };
  return { notReady, state: 'Normal' };
}

/** The eviction rate (nodes tainted per second) for a zone in state, as upstream's setLimiterInZone. */
export function zoneEvictionQPS(state: ZoneState, zoneSize: number, o: { evictionQPS: number; secondaryEvictionQPS: number; largeClusterThreshold: number }): number {
  switch (state) {
    case 'PartialDisruption': return zoneSize > o.largeClusterThreshold ? o.secondaryEvictionQPS : 0;
    default: return o.evictionQPS;
  }
}

/** The NoExecute taint (if any) a node's Ready condition calls for. */
export function wantedNoExecuteKey(n: Node): string | undefined {
  const s = readyCondition(n)?.status;
  if (s === 'False') return TAINT_NOT_READY;
  if (s === 'Unknown') return TAINT_UNREACHABLE;
  return undefined;
}

/** The NoSchedule taints a node's conditions call for (TaintNodesByCondition). */
export function wantedNoScheduleKeys(n: Node): string[] {
  const keys: string[] = [];
  const cond = (t: string) => n.status?.conditions?.find((c) => c.type === t)?.status;
  const ready = cond('Ready');
  if (ready === 'False') keys.push(TAINT_NOT_READY);
  else if (ready === 'Unknown') keys.push(TAINT_UNREACHABLE);
  if (cond('MemoryPressure') === 'True') keys.push(TAINT_MEMORY_PRESSURE);
  if (cond('DiskPressure') === 'True') keys.push(TAINT_DISK_PRESSURE);
  if (cond('PIDPressure') === 'True') keys.push(TAINT_PID_PRESSURE);
  if (cond('NetworkUnavailable') === 'True') keys.push(TAINT_NETWORK_UNAVAILABLE);
  if (n.spec?.unschedulable) keys.push(TAINT_UNSCHEDULABLE);
  return keys;
}

/** Keys the controller owns per effect: taints with these keys are added and removed by it alone. */
export const MANAGED_NO_SCHEDULE = new Set([TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_MEMORY_PRESSURE, TAINT_DISK_PRESSURE, TAINT_PID_PRESSURE, TAINT_NETWORK_UNAVAILABLE, TAINT_UNSCHEDULABLE]);
export const MANAGED_NO_EXECUTE = new Set([TAINT_NOT_READY, TAINT_UNREACHABLE]);

/** v1helper.ToleratesTaint. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  const op = t.operator ?? 'Equal';
  if (op === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** What the DefaultTolerationSeconds admission plugin adds (upstream's apiserver default). */
export const ADMISSION_DEFAULT_TOLERATION_SECONDS = 300;

/**
 * The pod's tolerations, plus what the DefaultTolerationSeconds admission plugin adds to every
 * pod (not-ready and unreachable, NoExecute, for defaultSeconds) when the pod has none for them.
 * Upstream that duration is an apiserver flag; here the controller-manager's flag also applies to
 * tolerations exactly as that admission plugin wrote them (Exists, NoExecute, 300 s), so a short
 * value takes effect for pods admitted with the default.
 */
export function effectiveTolerations(p: Pod, defaultSeconds: number): Toleration[] {
  const ts = (p.spec?.tolerations ?? []).map((t) =>
    (t.key === TAINT_NOT_READY || t.key === TAINT_UNREACHABLE) && t.operator === 'Exists' && t.effect === 'NoExecute' && t.tolerationSeconds === ADMISSION_DEFAULT_TOLERATION_SECONDS && t.value === undefined
      ? { ...t, tolerationSeconds: defaultSeconds } : t);
  for (const key of [TAINT_NOT_READY, TAINT_UNREACHABLE]) {
    const has = ts.some((t) => (t.key === key || (!t.key && t.operator === 'Exists')) && (!t.effect || t.effect === 'NoExecute'));
    if (!has) ts.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: defaultSeconds });
  }
  return ts;
}

/**
 * When a pod on a node with these NoExecute taints must be deleted: 'now' if some taint is not
 * tolerated, a time (ms) when the shortest matching tolerationSeconds runs out (counted from the
 * taint's timeAdded, or from now when unknown), or 'never'.
 */
export function evictionTime(p: Pod, taints: readonly Taint[], defaultSeconds: number, now: number): 'now' | 'never' | number {
  const noExec = taints.filter((t) => t.effect === 'NoExecute');
  if (noExec.length === 0) return 'never';
  const tols = effectiveTolerations(p, defaultSeconds).filter((t) => !t.effect || t.effect === 'NoExecute');
  let at = Infinity;
  for (const taint of noExec) {
    const matching = tols.filter((t) => tolerates(t, taint));
    if (matching.length === 0) return 'now';
    const secs = Math.min(...matching.map((t) => (t.tolerationSeconds === undefined || t.tolerationSeconds === null ? Infinity : Math.max(0, t.tolerationSeconds))));
    if (secs === Infinity) continue;
    const added = taint.timeAdded ? Date.parse(taint.timeAdded) : now;
    at = Math.min(at, (Number.isNaN(added) ? now : added) + secs * 1000);
  }
  return at === Infinity ? 'never' : at;
}
