/**
 * The StatefulSet controller's decisions, pure (upstream pkg/controller/statefulset:
 * stateful_set_control.go updateStatefulSet and stateful_set_utils.go). planStatefulSet walks the
 * ordinals as upstream does and returns the writes of one sync in order; in OrderedReady mode it
 * stops at the first pod that is missing, terminating or not yet Ready (one step at a time).
 */
import type { DeepReadonly } from '@mk8s/client';
import type { Pod, PodSpec, StatefulSet, StatefulSetStatus, Volume } from '@mk8s/api';
import { isPodAvailable, isPodReady } from '../../util/pods.js';
import { scaledValue } from '../../util/intstr.js';
import { CONTROLLER_REVISION_HASH_LABEL, type RevisionObj } from '../../util/history.js';
import { clone, type Obj } from '../../util/meta.js';

export type STSObj = Obj<StatefulSet>;
export type PodObj = Obj<Pod>;
type RO<T> = DeepReadonly<T> | T;

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** getParentNameAndOrdinal: `<set>-<ordinal>` → ordinal, or -1 when pod is not one of set's names. */
export function podOrdinal(setName: string, podName: string): number {
  if (!podName.startsWith(`${setName}-`)) return -1;
  const rest = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}
export const startOrdinal = (set: RO<STSObj>): number => set.spec?.ordinals?.start ?? 0;
export const podName = (set: RO<STSObj>, ordinal: number): string => `${set.metadata.name}-${ordinal}`;
/** getPersistentVolumeClaimName: `<template>-<set>-<ordinal>`. */
export const claimName = (templateName: string, set: RO<STSObj>, ordinal: number): string => `${templateName}-${set.metadata.name}-${ordinal}`;
/** The ordinal whose claimName(templateName, set, ordinal) a claim's name is, or -1 (claimName's inverse, as podOrdinal is podName's). */
export function claimOrdinal(templateName: string, set: RO<STSObj>, name: string): number {
  const prefix = claimName(templateName, set, 0).slice(0, -1);
  if (!name.startsWith(prefix)) return -1;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) && claimName(templateName, set, Number(rest)) === name ? Number(rest) : -1;
}
export const podRevision = (p: RO<PodObj>): string => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';

const isRunningAndReady = (p: RO<PodObj>): boolean => p.status?.phase === 'Running' && isPodReady(p);
const isTerminating = (p: RO<PodObj>): boolean => !!p.metadata.deletionTimestamp;
export const isHealthy = (p: RO<PodObj>): boolean => isRunningAndReady(p) && !isTerminating(p);
const isFinished = (p: RO<PodObj>): boolean => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';

/** ApplyRevision: the set with the template a revision recorded. */
export function applyRevision(set: RO<STSObj>, rev: RO<RevisionObj> | undefined): STSObj {
  const out = clone(set) as STSObj;
  const tpl = (rev?.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec?.template;
  if (tpl) {
    const { $patch: _drop, ...t } = clone(tpl);
    out.spec = { ...out.spec!, template: t as never };
  }
  return out;
}

/** newStatefulSetPod: the pod for one ordinal of set (identity, storage, revision label). */
export function newStatefulSetPod(set: RO<STSObj>, ordinal: number, revision: string): PodObj {
  const name = podName(set, ordinal);
  const t = set.spec?.template;
  const spec = clone((t?.spec ?? { containers: [] }) as PodSpec);
  const labels: Record<string, string> = { ...(t?.metadata?.labels ?? {}), [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal), [CONTROLLER_REVISION_HASH_LABEL]: revision };
  spec.hostname = name;
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
  const claims: Volume[] = (set.spec?.volumeClaimTemplates ?? []).map((c) => ({ name: c.metadata?.name ?? '', persistentVolumeClaim: { claimName: claimName(c.metadata?.name ?? '', set, ordinal) } }));
  if (claims.length) spec.volumes = [...(spec.volumes ?? []).filter((v) => !claims.some((c) => c.name === v.name)), ...claims];
  const meta: PodObj['metadata'] = { name, namespace: set.metadata.namespace ?? 'default', labels };
  if (t?.metadata?.annotations) meta.annotations = { ...t.metadata.annotations };
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec } as PodObj;
}

/** identityMatches: name, namespace and the pod-name label (hostname/subdomain as upstream's updateIdentity fixes them). */
export function identityMatches(set: RO<STSObj>, p: RO<PodObj>): boolean {
  const ord = podOrdinal(set.metadata.name, p.metadata.name);
  return ord >= 0 && p.metadata.labels?.[POD_NAME_LABEL] === p.metadata.name && p.metadata.labels?.[POD_INDEX_LABEL] === String(ord);
}

export type StsAction =
  | { type: 'create'; ordinal: number; revision: string }
  | { type: 'delete'; pod: string; why: 'failed' | 'scale-down' | 'update' }
  | { type: 'relabel'; pod: string };

export interface StsPlan {
  actions: StsAction[];
  /** What a user reading `mkctl trace` wants to know: the ordinal the sync stopped at and why. */
  blockedBy?: { ordinal: number; pod: string; reason: string };
}

export interface StsRevisions { current: string; update: string; currentSet: RO<STSObj>; updateSet: RO<STSObj> }

/** The revision a missing ordinal is created at (newVersionedStatefulSetPod): below the partition, the current one. */
export function revisionForOrdinal(set: RO<STSObj>, ordinal: number, r: StsRevisions, currentReplicas: number): string {
  const us = r.currentSet.spec?.updateStrategy;
  if (us?.type === 'RollingUpdate' || us?.type === undefined) {
    const limit = us?.rollingUpdate ? startOrdinal(set) + (us.rollingUpdate.partition ?? 0) : startOrdinal(set) + currentReplicas;
    if (ordinal < limit) return r.current;
  }
  return r.update;
}

/**
 * updateStatefulSet: the ordered writes of one sync. pods are the set's claimed pods.
 * o.maxUnavailable: the MaxUnavailableStatefulSet feature gate; off (1.32's default), a RollingUpdate
 * takes one pod down at a time whatever rollingUpdate.maxUnavailable says, as upstream.
 */
export function planStatefulSet(set: RO<STSObj>, pods: readonly RO<PodObj>[], r: StsRevisions, now: number, o: { maxUnavailable?: boolean } = {}): StsPlan {
  const plan: StsPlan = { actions: [] };
  const start = startOrdinal(set), replicasWanted = set.spec?.replicas ?? 1, end = start + replicasWanted;
  const mrs = set.spec?.minReadySeconds ?? 0;
  const monotonic = set.spec?.podManagementPolicy !== 'Parallel';
  const slots: (RO<PodObj> | undefined)[] = new Array(replicasWanted).fill(undefined);
  const condemned: RO<PodObj>[] = [];
  for (const p of pods) {
    const ord = podOrdinal(set.metadata.name, p.metadata.name);
    if (ord < 0) continue;
    if (ord >= start && ord < end) slots[ord - start] = p; else condemned.push(p);
  }
  condemned.sort((a, b) => podOrdinal(set.metadata.name, b.metadata.name) - podOrdinal(set.metadata.name, a.metadata.name));
  if (set.metadata.deletionTimestamp) return plan;
  const currentReplicas = set.status?.currentReplicas ?? 0;
  const block = (ordinal: number, pod: string, reason: string): StsPlan => { plan.blockedBy = { ordinal, pod, reason }; return plan; };
  // The first unhealthy pod in ordinal order (replicas, then condemned): the one scale-down may remove while unhealthy.
  const firstUnhealthy = [...slots.filter((p): p is RO<PodObj> => !!p), ...condemned].find((p) => !isHealthy(p));

  for (let i = 0; i < slots.length; i++) {
    const ord = start + i;
    let p = slots[i];
    if (p && isFinished(p)) {
      if (!isTerminating(p)) plan.actions.push({ type: 'delete', pod: p.metadata.name, why: 'failed' });
      // The new pod comes on a later sync, once the old one is gone from the API.
      if (monotonic) return block(ord, p.metadata.name, `pod ${p.metadata.name} ${p.status?.phase}: deleted to be re-created`);
      continue;
    }
    if (!p) {
      plan.actions.push({ type: 'create', ordinal: ord, revision: revisionForOrdinal(set, ord, r, currentReplicas) });
      if (monotonic) return block(ord, podName(set, ord), `creating pod ${podName(set, ord)}; OrderedReady waits for it to be Running and Ready`);
      continue;
    }
    if (isTerminating(p) && monotonic) return block(ord, p.metadata.name, `pod ${p.metadata.name} is terminating`);
    if (!isRunningAndReady(p) && monotonic) return block(ord, p.metadata.name, `pod ${p.metadata.name} is not Running and Ready (phase ${p.status?.phase ?? 'Pending'})`);
    if (!isPodAvailable(p, mrs, now) && monotonic) return block(ord, p.metadata.name, `pod ${p.metadata.name} is not available for minReadySeconds ${mrs}`);
    if (!identityMatches(set, p)) plan.actions.push({ type: 'relabel', pod: p.metadata.name });
  }

  for (const p of condemned) {
    const ord = podOrdinal(set.metadata.name, p.metadata.name);
    if (isTerminating(p)) { if (monotonic) return block(ord, p.metadata.name, `scale-down waits for ${p.metadata.name} to terminate`); continue; }
    if (monotonic && !isHealthy(p) && p !== firstUnhealthy) return block(ord, p.metadata.name, `scale-down waits: ${p.metadata.name} is not Running and Ready`);
    plan.actions.push({ type: 'delete', pod: p.metadata.name, why: 'scale-down' });
    if (monotonic) return block(ord, p.metadata.name, `scaling down: deleting ${p.metadata.name} (highest ordinal first)`);
  }

  const us = set.spec?.updateStrategy;
  if (us?.type === 'OnDelete') return plan;
  const updateMin = us?.rollingUpdate?.partition ?? 0;
  // In Parallel mode a slot may still be empty here (its create is in this plan): not yet healthy.
  if (slots.some((p) => !p)) return plan;
  const live = slots as RO<PodObj>[];
  if (o.maxUnavailable === true && us?.rollingUpdate?.maxUnavailable != null) {
    let maxUnavailable = scaledValue(us.rollingUpdate.maxUnavailable as number | string, replicasWanted, true);
    if (maxUnavailable < 1) maxUnavailable = 1;
    const unavailable = live.filter((p) => !isHealthy(p)).length;
    if (unavailable >= maxUnavailable) {
      const first = live.find((p) => !isHealthy(p));
      return first ? block(podOrdinal(set.metadata.name, first.metadata.name), first.metadata.name, `${unavailable} pod(s) unavailable, maxUnavailable ${maxUnavailable}`) : plan;
    }
    let room = maxUnavailable - unavailable;
    for (let target = live.length - 1; target >= updateMin && room > 0; target--) {
      const p = live[target]!;
      if (podRevision(p) !== r.update && !isTerminating(p)) { plan.actions.push({ type: 'delete', pod: p.metadata.name, why: 'update' }); room--; }
    }
    return plan;
  }
  for (let target = live.length - 1; target >= updateMin; target--) {
    const p = live[target]!;
    if (podRevision(p) !== r.update && !isTerminating(p)) {
      plan.actions.push({ type: 'delete', pod: p.metadata.name, why: 'update' });
      return block(start + target, p.metadata.name, `rolling update: deleting ${p.metadata.name} to re-create it at ${r.update}`);
    }
    if (!isHealthy(p)) return block(start + target, p.metadata.name, `rolling update waits for ${p.metadata.name} to be Running and Ready`);
  }
  return plan;
}

/** computeReplicaStatus + completeRollingUpdate. */
export function computeStatus(set: RO<STSObj>, pods: readonly RO<PodObj>[], r: { current: string; update: string }, collisionCount: number, now: number): StatefulSetStatus {
  const mrs = set.spec?.minReadySeconds ?? 0;
  const mine = pods.filter((p) => podOrdinal(set.metadata.name, p.metadata.name) >= 0);
  const s: StatefulSetStatus = {
    observedGeneration: set.metadata.generation ?? 0,
    replicas: mine.length,
    readyReplicas: mine.filter(isRunningAndReady).length,
    currentReplicas: mine.filter((p) => podRevision(p) === r.current).length,
    updatedReplicas: mine.filter((p) => podRevision(p) === r.update).length,
    availableReplicas: mine.filter((p) => isRunningAndReady(p) && isPodAvailable(p, mrs, now)).length,
    currentRevision: r.current, updateRevision: r.update, collisionCount,
  };
  if (set.spec?.updateStrategy?.type !== 'OnDelete' && s.updatedReplicas === s.replicas && s.readyReplicas === s.replicas) {
    s.currentReplicas = s.updatedReplicas;
    s.currentRevision = r.update;
  }
  return s;
}
