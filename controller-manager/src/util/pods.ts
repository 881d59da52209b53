/** Pod predicates and the deletion ranking controllers use (upstream controller_utils.go, podutil). */
import type { Pod, PodCondition } from '@mk8s/api';
import type { DeepReadonly } from '@mk8s/client';

type P = Pod | DeepReadonly<Pod>;

/** IsPodActive: not Succeeded, not Failed and not being deleted. */
export function isPodActive(p: P): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata?.deletionTimestamp;
}

export function podReadyCondition(p: P): DeepReadonly<PodCondition> | undefined {
  return p.status?.conditions?.find((c) => c.type === 'Ready');
}

export function isPodReady(p: P): boolean {
  return podReadyCondition(p)?.status === 'True';
}

/** Ready for at least minReadySeconds at now (podutil.IsPodAvailable). */
export function isPodAvailable(p: P, minReadySeconds: number, now: number): boolean {
  const c = podReadyCondition(p);
  if (c?.status !== 'True') return false;
  if (!minReadySeconds) return true;
  const t = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : Number.NaN;
  return !Number.isNaN(t) && t + minReadySeconds * 1000 < now;
}

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function readyTime(p: P): number {
  const c = podReadyCondition(p);
  return c?.status === 'True' && c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : 0;
}

function maxRestarts(p: P): number {
  let max = 0;
  for (const s of p.status?.containerStatuses ?? []) max = Math.max(max, s.restartCount ?? 0);
  return max;
}

function deletionCost(p: P): number {
  const v = p.metadata?.annotations?.['controller.kubernetes.io/pod-deletion-cost'];
  const n = v === undefined ? 0 : Number(v);
  return Number.isFinite(n) ? n : 0;
}

/** afterOrZero: a zero time sorts first, otherwise the later time first. */
function afterOrZero(a: number, b: number): boolean {
  if (!a || !b) return !a;
  return a > b;
}

/**
 * ActivePodsWithRanks.Less: true when a should be deleted before b. Order: unassigned before
 * assigned; Pending < Unknown < Running; not ready before ready; lower deletion cost; more related
 * pods on the same node (rank); ready for less time; more restarts; newer; then by uid.
 */
export function deleteBefore(a: P, rankA: number, b: P, rankB: number): boolean {
  const na = a.spec?.nodeName ?? '', nb = b.spec?.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '';
  const pa = PHASE_ORDINAL[a.status?.phase ?? ''] ?? 0, pb = PHASE_ORDINAL[b.status?.phase ?? ''] ?? 0;
  if (pa !== pb) return pa < pb;
  const ra = isPodReady(a), rb = isPodReady(b);
  if (ra !== rb) return !ra;
  const ca = deletionCost(a), cb = deletionCost(b);
  if (ca !== cb) return ca < cb;
  if (rankA !== rankB) return rankA > rankB;
  if (ra && rb) {
    const ta = readyTime(a), tb = readyTime(b);
    if (ta !== tb) return afterOrZero(ta, tb);
  }
  const xa = maxRestarts(a), xb = maxRestarts(b);
  if (xa !== xb) return xa > xb;
  const ka = a.metadata?.creationTimestamp ? Date.parse(a.metadata.creationTimestamp) : 0;
  const kb = b.metadata?.creationTimestamp ? Date.parse(b.metadata.creationTimestamp) : 0;
  if (ka !== kb) return afterOrZero(ka, kb);
  return (a.metadata?.uid ?? '') < (b.metadata?.uid ?? '');
}

/**
 * getPodsToDelete: the n pods to remove from filteredPods, ranked by how many of relatedPods
 * (e.g. all pods of the Deployment) share their node, so that doubled-up nodes shrink first.
 */
export function podsToDelete<T extends P>(filteredPods: readonly T[], relatedPods: readonly P[], n: number): T[] {
  if (n <= 0) return [];
  const perNode = new Map<string, number>();
  for (const p of relatedPods) {
    if (!isPodActive(p)) continue;
    const node = p.spec?.nodeName ?? '';
    perNode.set(node, (perNode.get(node) ?? 0) + 1);
  }
  const ranked = filteredPods.map((p) => ({ p, rank: p.spec?.nodeName ? perNode.get(p.spec.nodeName) ?? 0 : 0 }));
  ranked.sort((x, y) => (deleteBefore(x.p, x.rank, y.p, y.rank) ? -1 : deleteBefore(y.p, y.rank, x.p, x.rank) ? 1 : 0));
  return ranked.slice(0, n).map((x) => x.p);
}
