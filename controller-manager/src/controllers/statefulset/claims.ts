/**
 * A StatefulSet's per-ordinal claims (upstream stateful_set_utils.go / stateful_pod_control.go),
 * pure: the claims an ordinal needs (`<template>-<set>-<ordinal>`, the template's labels plus the
 * set's selector labels), and the owner references persistentVolumeClaimRetentionPolicy asks for:
 *
 *   whenDeleted Retain, whenScaled Retain  no owner refs
 *   whenDeleted Delete, whenScaled Retain  the set controls the claim (deleted with the set)
 *   whenDeleted Retain, whenScaled Delete  a pod scaled away controls its claims (deleted with it)
 *   whenDeleted Delete, whenScaled Delete  the set while the ordinal is in range, else the pod
 *
 * The garbage collector does the deleting; pvc-protection keeps a claim until no pod uses it.
 */
import type { OwnerReference, PersistentVolumeClaim } from '@mk8s/api';
import type { DeepReadonly } from '@mk8s/client';
import { clone, type Obj } from '../../util/meta.js';
import { claimName, podName, type PodObj, type STSObj } from './util.js';

type RO<T> = DeepReadonly<T> | T;
export type PVCObj = Obj<PersistentVolumeClaim>;
export type RetentionPolicyType = 'Retain' | 'Delete';
/** What an owner reference is matched against: the object's name and uid (no uid: not created yet). */
export interface OwnerId { apiVersion: string; kind: string; name: string; uid?: string | undefined }

const SET_KIND = { apiVersion: 'apps/v1', kind: 'StatefulSet' };
const POD_KIND = { apiVersion: 'v1', kind: 'Pod' };

/** getPersistentVolumeClaimRetentionPolicy: Retain for whatever is unset. */
export function retentionPolicy(set: RO<STSObj>): { whenDeleted: RetentionPolicyType; whenScaled: RetentionPolicyType } {
  const p = set.spec?.persistentVolumeClaimRetentionPolicy;
  return { whenDeleted: p?.whenDeleted === 'Delete' ? 'Delete' : 'Retain', whenScaled: p?.whenScaled === 'Delete' ? 'Delete' : 'Retain' };
}

/** getPersistentVolumeClaims: the claims of ordinal, by template name. */
export function claimsFor(set: RO<STSObj>, ordinal: number): Map<string, PVCObj> {
  const out = new Map<string, PVCObj>();
  for (const t of set.spec?.volumeClaimTemplates ?? []) {
    const tpl = t.metadata?.name ?? '';
    out.set(tpl, {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName(tpl, set, ordinal), namespace: set.metadata.namespace ?? 'default',
        labels: { ...(t.metadata?.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) },
        ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
      },
      spec: clone(t.spec ?? {}),
    } as PVCObj);
  }
  return out;
}

const matchesRef = (ref: RO<OwnerReference>, o: OwnerId) => ref.apiVersion === o.apiVersion && ref.kind === o.kind && ref.name === o.name;
const hasOwnerRef = (claim: RO<PVCObj>, o: OwnerId) => !!o.uid && (claim.metadata.ownerReferences ?? []).some((r) => r.uid === o.uid);

/** hasStaleOwnerRef: a ref naming o (kind and name) with another uid: left by an earlier incarnation. */
export function hasStaleOwnerRef(claim: RO<PVCObj>, o: OwnerId): boolean {
  const ref = (claim.metadata.ownerReferences ?? []).find((r) => matchesRef(r, o));
  return !!ref && ref.uid !== o.uid;
}

/** hasUnexpectedController: with a Delete policy, another object controls the claim (the set and pod may). */
function hasUnexpectedController(claim: RO<PVCObj>, set: OwnerId, pod: OwnerId, policy: ReturnType<typeof retentionPolicy>): boolean {
  if (policy.whenDeleted === 'Retain' && policy.whenScaled === 'Retain') return false;
  for (const r of claim.metadata.ownerReferences ?? []) {
    if (matchesRef(r, set)) { if (r.uid !== set.uid) return true; continue; }
    if (matchesRef(r, pod)) { if (r.uid !== pod.uid) return true; continue; }
    if (r.controller) return true;
  }
  return false;
}

/** The owner refs of claim the policy asks for; undefined when they are up to date (isClaimOwnerUpToDate). */
export function desiredClaimOwners(claim: RO<PVCObj>, setObj: RO<STSObj>, podObj: RO<PodObj> | { metadata: { name: string; uid?: string } }, scaledDown: boolean): OwnerReference[] | undefined {
  const set: OwnerId = { ...SET_KIND, name: setObj.metadata.name, uid: setObj.metadata.uid };
  const pod: OwnerId = { ...POD_KIND, name: podObj.metadata.name, uid: podObj.metadata.uid };
  const policy = retentionPolicy(setObj);
  // Managed by an earlier incarnation of the set or pod: not ours to touch (the GC sorts it out).
  if (hasStaleOwnerRef(claim, set) || hasStaleOwnerRef(claim, pod)) return undefined;
  const refs = (claim.metadata.ownerReferences ?? []) as readonly OwnerReference[];
  const unexpected = hasUnexpectedController(claim, set, pod, policy);
  const ours = refs.filter((r) => (set.uid && r.uid === set.uid) || (pod.uid && r.uid === pod.uid));
  const want: OwnerId[] = [];
  if (!unexpected) {
    if (policy.whenDeleted === 'Delete' && !(policy.whenScaled === 'Delete' && scaledDown)) want.push(set);
    if (policy.whenScaled === 'Delete' && scaledDown) want.push(pod);
  }
  // A pod not created yet cannot be an owner: what it would need waits for its next sync.
  const wanted = want.filter((o) => !!o.uid);
  const upToDate = ours.length === wanted.length && wanted.every((o) => ours.some((r) => r.uid === o.uid && r.controller === true));
  if (upToDate) return undefined;
  const kept = refs.filter((r) => !matchesRef(r, set) && !matchesRef(r, pod)).map((r) => ({ ...r }));
  return [...kept, ...wanted.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid!, controller: true, blockOwnerDeletion: true }))];
}

/**
 * PodClaimIsStale: with whenScaled Delete, a claim of the ordinal that a pod of the same name but
 * another uid still owns is about to be collected: the pod must not be created (it would bind to
 * a claim that goes away) until the garbage collector is done.
 */
export function podClaimIsStale(set: RO<STSObj>, ordinal: number, podUid: string | undefined, claims: (name: string) => RO<PVCObj> | undefined): boolean {
  if (retentionPolicy(set).whenScaled === 'Retain') return false;
  const pod: OwnerId = { ...POD_KIND, name: podName(set, ordinal), uid: podUid };
  for (const c of claimsFor(set, ordinal).values()) {
    const cur = claims(c.metadata.name);
    if (cur && hasStaleOwnerRef(cur, pod)) return true;
  }
  return false;
}
