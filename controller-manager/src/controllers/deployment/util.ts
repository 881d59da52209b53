/**
 * Rollout math and bookkeeping (upstream pkg/controller/deployment/util/deployment_util.go).
 * Pure functions over Deployments and ReplicaSets: no I/O, never mutate their arguments.
 */
import type { Deployment, DeploymentCondition, DeploymentStatus, PodTemplateSpec, ReplicaSet } from '@mk8s/api';
import { resolveFenceposts } from '../../util/intstr.js';
import { canonicalJson, computeHash } from '../../util/hash.js';
import { rfc3339 } from '../../util/meta.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';
export const DEFAULT_POD_TEMPLATE_HASH_KEY = 'pod-template-hash';

// Progressing condition reasons (deployment_util.go).
export const NEW_RS_REASON = 'NewReplicaSetCreated';
export const FAILED_RS_CREATE_REASON = 'ReplicaSetCreateError';
export const FOUND_NEW_RS_REASON = 'FoundNewReplicaSet';
export const RS_UPDATED_REASON = 'ReplicaSetUpdated';
export const NEW_RS_AVAILABLE_REASON = 'NewReplicaSetAvailable';
export const TIMED_OUT_REASON = 'ProgressDeadlineExceeded';
export const PAUSED_REASON = 'DeploymentPaused';
export const RESUMED_REASON = 'DeploymentResumed';
export const MIN_AVAILABLE_REASON = 'MinimumReplicasAvailable';
export const MIN_UNAVAILABLE_REASON = 'MinimumReplicasUnavailable';

/** Annotations the controller owns; never copied from the Deployment onto its ReplicaSets. */
const SKIPPED_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration', REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, 'deprecated.deployment.rollback.to',
]);

type D = Deployment;
type RS = ReplicaSet;

export const specReplicas = (x: { spec?: { replicas?: number } }): number => x.spec?.replicas ?? 1;
const rsReplicas = (rs: RS | undefined): number => rs?.spec?.replicas ?? 0;
export const isRollingUpdate = (d: D): boolean => (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

/** MaxUnavailable: the resolved maxUnavailable, capped at replicas; 0 for Recreate or no replicas. */
export function maxUnavailable(d: D): number {
  const replicas = specReplicas(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = d.spec?.strategy?.rollingUpdate;
  const { unavailable } = resolveFenceposts(ru?.maxSurge ?? '25%', ru?.maxUnavailable ?? '25%', replicas);
  return Math.min(unavailable, replicas);
}

/** MaxSurge: the resolved maxSurge; 0 for Recreate. */
export function maxSurge(d: D): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec?.strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge ?? '25%', ru?.maxUnavailable ?? '25%', specReplicas(d)).surge;
}

/** Sum of spec.replicas over rss (GetReplicaCountForReplicaSets). */
export const replicaCount = (rss: readonly (RS | undefined)[]): number => rss.reduce((n, rs) => n + rsReplicas(rs), 0);
/** Sum of status.replicas (GetActualReplicaCountForReplicaSets). */
export const actualReplicaCount = (rss: readonly (RS | undefined)[]): number => rss.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
export const readyReplicaCount = (rss: readonly (RS | undefined)[]): number => rss.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
export const availableReplicaCount = (rss: readonly (RS | undefined)[]): number => rss.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);
/** ReplicaSets with spec.replicas > 0. */
export const filterActive = <T extends RS>(rss: readonly (T | undefined)[]): T[] => rss.filter((rs): rs is T => !!rs && rsReplicas(rs) > 0);

/** The Deployment's revision of rs (0 when absent or invalid). */
export function revisionOf(obj: { metadata?: { annotations?: Record<string, string> } } | undefined): number {
  const v = obj?.metadata?.annotations?.[REVISION_ANNOTATION];
  const n = v === undefined ? 0 : Number(v);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

export const maxRevision = (rss: readonly RS[]): number => rss.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);

/** The template without the pod-template-hash label, for comparing a Deployment's and a ReplicaSet's templates. */
export function templateWithoutHash(t: PodTemplateSpec | undefined): PodTemplateSpec {
  const c: PodTemplateSpec = structuredClone(t ?? {});
  if (c.metadata?.labels) {
    delete c.metadata.labels[DEFAULT_POD_TEMPLATE_HASH_KEY];
    if (Object.keys(c.metadata.labels).length === 0) delete c.metadata.labels;
  }
  if (c.metadata && Object.keys(c.metadata).length === 0) delete c.metadata;
  return c;
}

/** EqualIgnoreHash: the templates are equal apart from the pod-template-hash label. */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return canonicalJson(templateWithoutHash(a)) === canonicalJson(templateWithoutHash(b));
}

function byCreationThenName(a: RS, b: RS): number {
  const ta = a.metadata?.creationTimestamp ?? '', tb = b.metadata?.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = a.metadata?.name ?? '', nb = b.metadata?.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** ReplicaSetsByCreationTimestamp, oldest first (ties by name). */
export const sortByCreation = <T extends RS>(rss: readonly T[]): T[] => [...rss].sort(byCreationThenName);

/**
 * FindNewReplicaSet: the oldest ReplicaSet whose template matches the Deployment's. Failing that,
 * the one carrying the hash this template gets now: it was created from this very template, and
 * recognising it keeps a difference in server-side defaulting between a Deployment's and a
 * ReplicaSet's template from turning into endless new ReplicaSets.
 */
export function findNewReplicaSet<T extends RS>(d: D, rss: readonly T[]): T | undefined {
  const sorted = sortByCreation(rss);
  const equal = sorted.find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
  if (equal) return equal;
  const hash = computeHash(d.spec?.template, d.status?.collisionCount);
  return sorted.find((rs) => rs.metadata?.labels?.[DEFAULT_POD_TEMPLATE_HASH_KEY] === hash && rs.metadata?.name === `${d.metadata?.name}-${hash}`);
}

/** NewRSNewReplicas: how many replicas the new ReplicaSet should have now. */
export function newRSNewReplicas(d: D, allRSs: readonly (RS | undefined)[], newRS: RS): number {
  const replicas = specReplicas(d);
  if (!isRollingUpdate(d)) return replicas;
  const surge = maxSurge(d);
  // Upstream counts spec.replicas only. We also count pods a ReplicaSet still reports
  // (status.replicas): an old ReplicaSet's pods outlive its scale-down until its controller has
  // deleted them, and counting them keeps the total under replicas + maxSurge at every moment.
  const current = allRSs.reduce((n, rs) => n + Math.max(rsReplicas(rs), rs?.status?.replicas ?? 0), 0);
  const maxTotal = replicas + surge;
  if (current >= maxTotal) return rsReplicas(newRS);
  const scaleUp = Math.min(maxTotal - current, replicas - rsReplicas(newRS));
  return rsReplicas(newRS) + scaleUp;
}

/**
 * The number of old-RS replicas that may be removed now without going below
 * replicas - maxUnavailable available (reconcileOldReplicaSets' maxScaledDown).
 */
export function maxScaledDown(d: D, allRSs: readonly (RS | undefined)[], newRS: RS | undefined): number {
  const minAvailable = specReplicas(d) - maxUnavailable(d);
  const newUnavailable = rsReplicas(newRS) - (newRS?.status?.availableReplicas ?? 0);
  return replicaCount(allRSs) - minAvailable - newUnavailable;
}

/**
 * cleanupUnhealthyReplicas: scale old ReplicaSets down by their unavailable replicas first (oldest
 * first), up to maxCleanup in total. Returns the new sizes by name.
 */
export function cleanupUnhealthy(oldRSs: readonly RS[], maxCleanup: number): Map<string, number> {
  const out = new Map<string, number>();
  let total = 0;
  for (const rs of sortByCreation(oldRSs)) {
    if (total >= maxCleanup) break;
    const spec = rsReplicas(rs);
    if (spec === 0) continue;
    const available = rs.status?.availableReplicas ?? 0;
    if (spec === available) continue;
    const n = Math.min(maxCleanup - total, spec - available);
    // A status that still counts pods of a scale-down just made (available > spec) would turn this
    // into a scale-up; upstream fails the sync then and retries on fresher state.
    if (n < 0) {
      throw new Error(`when cleaning up unhealthy replicas, got invalid request to scale down ${rs.metadata?.namespace}/${rs.metadata?.name} ${spec} -> ${spec - n}`);
    }
    out.set(rs.metadata?.name ?? '', spec - n);
    total += n;
  }
  return out;
}

/**
 * scaleDownOldReplicaSetsForRollingUpdate: scale old ReplicaSets (oldest first) down by as many
 * available pods as exceed replicas - maxUnavailable. Returns the new sizes by name.
 */
export function scaleDownOldForRollingUpdate(d: D, allRSs: readonly (RS | undefined)[], oldRSs: readonly RS[]): Map<string, number> {
  const out = new Map<string, number>();
  const minAvailable = specReplicas(d) - maxUnavailable(d);
  const available = availableReplicaCount(allRSs);
  if (available <= minAvailable) return out;
  const totalToScaleDown = available - minAvailable;
  let scaled = 0;
  for (const rs of sortByCreation(oldRSs)) {
    if (scaled >= totalToScaleDown) break;
    const spec = rsReplicas(rs);
    if (spec === 0) continue;
    const n = Math.min(spec, totalToScaleDown - scaled);
    out.set(rs.metadata?.name ?? '', spec - n);
    scaled += n;
  }
  return out;
}

/** FindActiveOrLatest: the only active ReplicaSet, the newest if none is active, else undefined. */
export function findActiveOrLatest<T extends RS>(newRS: T | undefined, oldRSs: readonly T[]): T | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const sorted = sortByCreation(oldRSs).reverse();
  const all = newRS ? [newRS, ...sorted] : sorted;
  const active = filterActive(all);
  if (active.length === 0) return newRS ?? sorted[0];
  if (active.length === 1) return active[0];
  return undefined;
}

export function annotatedInt(rs: RS, key: string): number | undefined {
  const v = rs.metadata?.annotations?.[key];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
}

/** IsSaturated: the new ReplicaSet runs all desired replicas and they are available. */
export function isSaturated(d: D, newRS: RS | undefined): boolean {
  if (!newRS) return false;
  const desired = annotatedInt(newRS, DESIRED_REPLICAS_ANNOTATION);
  return rsReplicas(newRS) === specReplicas(d) && desired === specReplicas(d) && (newRS.status?.availableReplicas ?? 0) === specReplicas(d);
}

/**
 * Proportional scaling (DeploymentController.scale for rolling updates with several active
 * ReplicaSets): spreads the change in replicas over them by their share of max-replicas,
 * leftovers to the largest. Returns new sizes by name.
 */
export function proportionalSizes(d: D, newRS: RS | undefined, oldRSs: readonly RS[]): Map<string, number> {
  const all = filterActive([...oldRSs, newRS]);
  const replicas = specReplicas(d);
  const allowed = replicas > 0 ? replicas + maxSurge(d) : 0;
  const toAdd = allowed - replicaCount(all);
  // ReplicaSetsBySizeNewer when adding, BySizeOlder when removing: larger first, then by age.
  const sorted = [...all].sort((a, b) => {
    if (rsReplicas(a) !== rsReplicas(b)) return rsReplicas(b) - rsReplicas(a);
    const c = byCreationThenName(a, b);
    return toAdd > 0 ? -c : c;
  });
  const sizes = new Map<string, number>();
  let added = 0;
  for (const rs of sorted) {
    const name = rs.metadata?.name ?? '';
    if (toAdd === 0) { sizes.set(name, rsReplicas(rs)); continue; }
    const p = proportion(d, rs, toAdd, added);
    sizes.set(name, rsReplicas(rs) + p);
    added += p;
  }
  const first = sorted[0];
  if (toAdd !== 0 && first) {
    const name = first.metadata?.name ?? '';
    sizes.set(name, Math.max(0, (sizes.get(name) ?? 0) + toAdd - added));
  }
  return sizes;
}

function proportion(d: D, rs: RS, toAdd: number, added: number): number {
  if (rsReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(d, rs);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

function replicaSetFraction(d: D, rs: RS): number {
  const replicas = specReplicas(d);
  if (replicas === 0) return -rsReplicas(rs);
  const deploymentReplicas = replicas + maxSurge(d);
  const annotated = annotatedInt(rs, MAX_REPLICAS_ANNOTATION) ?? d.status?.replicas ?? 0;
  if (annotated === 0) return 0;
  // Go's math.Round rounds half away from zero.
  const size = (rsReplicas(rs) * deploymentReplicas) / annotated;
  return Math.sign(size) * Math.round(Math.abs(size)) - rsReplicas(rs);
}

/**
 * SetNewReplicaSetAnnotations: copies the Deployment's annotations, sets the revision (keeping a
 * revision-history of reused revisions) and the replica annotations. Returns the new annotations,
 * or undefined when nothing changes.
 */
export function newReplicaSetAnnotations(d: D, rs: RS, newRevision: number, exists: boolean): Record<string, string> | undefined {
  const before = rs.metadata?.annotations ?? {};
  const a: Record<string, string> = { ...before };
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) if (!SKIPPED_ANNOTATIONS.has(k)) a[k] = v;
  const old = before[REVISION_ANNOTATION];
  const oldNum = old === undefined ? 0 : Number(old);
  if (!(oldNum >= newRevision)) {
    a[REVISION_ANNOTATION] = String(newRevision);
    if (old !== undefined && old !== '' && exists) {
      const h = before[REVISION_HISTORY_ANNOTATION];
      a[REVISION_HISTORY_ANNOTATION] = h ? `${h},${old}` : old;
    }
  }
  if (!exists) {
    a[DESIRED_REPLICAS_ANNOTATION] = String(specReplicas(d));
    a[MAX_REPLICAS_ANNOTATION] = String(specReplicas(d) + maxSurge(d));
  }
  return canonicalJson(a) === canonicalJson(before) ? undefined : a;
}

/** The desired/max replica annotations a ReplicaSet carries for d (SetReplicasAnnotations). */
export function replicasAnnotations(d: D): Record<string, string> {
  return { [DESIRED_REPLICAS_ANNOTATION]: String(specReplicas(d)), [MAX_REPLICAS_ANNOTATION]: String(specReplicas(d) + maxSurge(d)) };
}

// ---- conditions ----

export const getCondition = (s: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined => s?.conditions?.find((c) => c.type === type);

export function newCondition(type: string, status: 'True' | 'False' | 'Unknown', reason: string, message: string, now: number): DeploymentCondition {
  const t = rfc3339(now);
  return { type, status, reason, message, lastUpdateTime: t, lastTransitionTime: t };
}

/** SetDeploymentCondition: replaces the condition of the same type, keeping lastTransitionTime if the status did not change. */
export function setCondition(s: DeploymentStatus, c: DeploymentCondition): void {
  const cur = getCondition(s, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  if (cur && cur.status === c.status && cur.lastTransitionTime) c = { ...c, lastTransitionTime: cur.lastTransitionTime };
  s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== c.type), c];
}

export function removeCondition(s: DeploymentStatus, type: string): void {
  if (s.conditions) s.conditions = s.conditions.filter((c) => c.type !== type);
}

/** calculateStatus: the Deployment status from its ReplicaSets. */
export function calculateStatus(d: D, allRSs: readonly (RS | undefined)[], newRS: RS | undefined, now: number): DeploymentStatus {
  const available = availableReplicaCount(allRSs);
  const total = replicaCount(allRSs);
  const s: DeploymentStatus = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: actualReplicaCount(allRSs),
    updatedReplicas: actualReplicaCount([newRS]),
    readyReplicas: readyReplicaCount(allRSs),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
  };
  if (d.status?.collisionCount !== undefined) s.collisionCount = d.status.collisionCount;
  if (d.status?.conditions) s.conditions = structuredClone(d.status.conditions);
  if (available >= specReplicas(d) - maxUnavailable(d)) {
    setCondition(s, newCondition('Available', 'True', MIN_AVAILABLE_REASON, 'Deployment has minimum availability.', now));
  } else {
    setCondition(s, newCondition('Available', 'False', MIN_UNAVAILABLE_REASON, 'Deployment does not have minimum availability.', now));
  }
  return s;
}

/** DeploymentComplete: every replica is updated and available, and the status is current. */
export function deploymentComplete(d: D, s: DeploymentStatus): boolean {
  const r = specReplicas(d);
  return (s.updatedReplicas ?? 0) === r && (s.replicas ?? 0) === r && (s.availableReplicas ?? 0) === r && (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
}

/** DeploymentProgressing: the new status shows progress over the Deployment's current status. */
export function deploymentProgressing(d: D, s: DeploymentStatus): boolean {
  const o = d.status ?? {};
  const oldOld = (o.replicas ?? 0) - (o.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (s.updatedReplicas ?? 0) > (o.updatedReplicas ?? 0) || newOld < oldOld ||
    (s.readyReplicas ?? 0) > (o.readyReplicas ?? 0) || (s.availableReplicas ?? 0) > (o.availableReplicas ?? 0);
}

export const hasProgressDeadline = (d: D): boolean => d.spec?.progressDeadlineSeconds !== undefined && d.spec.progressDeadlineSeconds !== 2147483647;

/** DeploymentTimedOut: no progress for progressDeadlineSeconds since the Progressing condition's last update. */
export function deploymentTimedOut(d: D, s: DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(s, 'Progressing');
  if (!c) return false;
  if (c.reason === NEW_RS_AVAILABLE_REASON) return false;
  if (c.reason === TIMED_OUT_REASON) return true;
  const from = c.lastUpdateTime ? Date.parse(c.lastUpdateTime) : Number.NaN;
  return !Number.isNaN(from) && from + (d.spec?.progressDeadlineSeconds ?? 600) * 1000 < now;
}

export { rfc3339 };
