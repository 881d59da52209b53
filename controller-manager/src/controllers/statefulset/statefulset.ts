/**
 * StatefulSet controller (upstream pkg/controller/statefulset): pods `<set>-<ordinal>` with stable
 * identity (hostname, subdomain = serviceName, pod-name and pod-index labels) and storage (claims
 * `<template>-<set>-<ordinal>` from volumeClaimTemplates), OrderedReady or Parallel, RollingUpdate
 * with partition (and maxUnavailable) or OnDelete, ControllerRevisions for currentRevision /
 * updateRevision, and the claims' owner references as persistentVolumeClaimRetentionPolicy asks
 * (claims.ts; the garbage collector deletes what they point at). Watches StatefulSets, Pods,
 * ControllerRevisions, PersistentVolumeClaims; writes Pods, PersistentVolumeClaims,
 * ControllerRevisions, StatefulSet status and Events.
 */
import { ControllerRevisions, isAlreadyExists, isConflict, isNotFound, labelSelectorFromObject, lookupResource, PersistentVolumeClaims, Pods, StatefulSets, TerminalError, type ParsedLabelSelector, type StatefulSetStatus } from '@mk8s/api';
import { controllerOf, newControllerRef, objectKey, splitKey, type SharedInformer } from '@mk8s/client';
import { defaultFeatureGate } from '@mk8s/component-base';
import { BaseController, type ControllerContext } from '../../controller.js';
import { canonicalJson } from '../../util/hash.js';
import { RevisionHistory, type RevisionObj } from '../../util/history.js';
import { clone, type Obj } from '../../util/meta.js';
import { claimObjects } from '../../util/ref-manager.js';
import { claimsFor, desiredClaimOwners, podClaimIsStale, type PVCObj } from './claims.js';
import { applyRevision, computeStatus, newStatefulSetPod, planStatefulSet, claimOrdinal, podName, podOrdinal, startOrdinal, POD_INDEX_LABEL, POD_NAME_LABEL, type PodObj, type StsPlan, type STSObj } from './util.js';

/** How long a created pod the watch has not shown counts as existing. */
const UNSEEN_TIMEOUT_MS = 30_000;

export class StatefulSetController extends BaseController {
  static readonly NAME = 'statefulset';
  readonly name = StatefulSetController.NAME;
  readonly sets: SharedInformer<STSObj>;
  readonly pods: SharedInformer<PodObj>;
  readonly revisions: SharedInformer<RevisionObj>;
  readonly claims: SharedInformer<PVCObj>;
  private readonly history: RevisionHistory;
  /** The last plan per set (for tests and `mkctl trace`-style logs). */
  readonly lastPlan = new Map<string, StsPlan>();
  /**
   * Pods this controller created that the informer has not shown yet, per set (a light form of
   * expectations): a sync that runs before the watch catches up must not create them again.
   */
  private readonly unseen = new Map<string, Map<string, { pod: PodObj; at: number }>>();

  constructor(ctx: ControllerContext) {
    super(ctx, 'statefulset');
    this.sets = ctx.informers.informerFor<STSObj>(StatefulSets);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.revisions = ctx.informers.informerFor<RevisionObj>(ControllerRevisions);
    this.claims = ctx.informers.informerFor<PVCObj>(PersistentVolumeClaims);
    this.history = new RevisionHistory({ client: (ns) => ctx.client.resource<RevisionObj>(ControllerRevisions, ns), ownerKind: StatefulSets });
    this.sets.addEventHandler({ onAdd: (s) => this.enqueue(objectKey(s)), onUpdate: (_, s) => this.enqueue(objectKey(s)), onDelete: (s) => this.enqueue(objectKey(s)) });
    const byOwner = (o: { metadata: PodObj['metadata'] }) => {
      const ref = controllerOf(o);
      if (ref?.kind === 'StatefulSet') { this.enqueue(`${o.metadata.namespace}/${ref.name}`); return; }
      if (ref) return;
      for (const s of this.sets.lister.list(o.metadata.namespace)) {
        try { if (labelSelectorFromObject(s.spec?.selector).matches(o.metadata.labels)) this.enqueue(objectKey(s)); } catch { /* invalid selector */ }
      }
    };
    this.pods.addEventHandler({ onAdd: byOwner, onUpdate: (o, p) => { byOwner(p); if (controllerOf(o)?.uid !== controllerOf(p)?.uid) byOwner(o); }, onDelete: byOwner });
    this.revisions.addEventHandler({ onAdd: byOwner as never, onUpdate: (_, r) => byOwner(r as never), onDelete: byOwner as never });
    // A claim of `<template>-<set>-<ordinal>` that changes or goes may unblock that ordinal (a stale
    // claim collected, a claim being deleted gone) or need its owner refs fixed.
    const byClaimName = (c: PVCObj) => {
      for (const set of this.sets.lister.list(c.metadata.namespace)) {
        if ((set.spec?.volumeClaimTemplates ?? []).some((t) => claimOrdinal(t.metadata?.name ?? '', set, c.metadata.name) >= 0)) this.enqueue(objectKey(set));
      }
    };
    this.claims.addEventHandler({ onAdd: byClaimName, onUpdate: (_, c) => byClaimName(c), onDelete: byClaimName });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const set = this.sets.lister.get(key);
    if (!set) { this.lastPlan.delete(key); this.unseen.delete(key); return; }
    let selector: ParsedLabelSelector;
    try { selector = labelSelectorFromObject(set.spec?.selector); } catch (err) { throw new TerminalError(`invalid selector: ${(err as Error).message}`); }
    if (selector.empty) return;
    const { namespace } = splitKey(key);
    const recheckOwner = async () => {
      const fresh = await this.ctx.client.resource<STSObj>(StatefulSets, namespace).get(set.metadata.name, { signal });
      if (fresh.metadata.uid !== set.metadata.uid) throw new Error(`original StatefulSet ${key} is gone: got uid ${fresh.metadata.uid}, wanted ${set.metadata.uid}`);
      if (fresh.metadata.deletionTimestamp) throw new Error(`${key} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
    };
    const podClient = this.ctx.client.resource<PodObj>(Pods, namespace);
    // Only pods named after the set are adopted (upstream's isMemberOf check in the claim filter).
    const candidates = this.pods.lister.list(namespace).filter((p) => podOrdinal(set.metadata.name, p.metadata.name) >= 0 || controllerOf(p)?.uid === set.metadata.uid);
    const pods = await claimObjects({ owner: set, ownerResource: StatefulSets, selector, candidates, client: podClient, recheckOwner, signal });
    const ownedRevs = await this.history.claim(set, this.revisions.lister.list(namespace), recheckOwner, signal);
    const hist = await this.history.construct(set, ownedRevs, signal);
    const all = [...hist.old, hist.update];
    const currentRev = all.find((r) => r.metadata.name === set.status?.currentRevision) ?? hist.update;
    const revs = { current: currentRev.metadata.name, update: hist.update.metadata.name, currentSet: applyRevision(set, currentRev), updateSet: applyRevision(set, hist.update) };
    const now = this.ctx.clock.now();
    const pending = this.unseen.get(key);
    const planned = [...pods];
    if (pending) {
      for (const [name, e] of pending) {
        if (this.pods.lister.get(`${namespace}/${name}`) || now - e.at > UNSEEN_TIMEOUT_MS) pending.delete(name);
        else if (!pods.some((p) => p.metadata.name === name)) planned.push(e.pod);
      }
    }
    const plan = planStatefulSet(set, planned, revs, now, { maxUnavailable: (this.ctx.featureGates ?? defaultFeatureGate).enabled('MaxUnavailableStatefulSet') });
    this.lastPlan.set(key, plan);
    let err: unknown;
    // Claims first (upstream fixes the condemned pods' claims before deleting any pod): a pod
    // scaled away must own its claims before it goes, or the garbage collector never takes them.
    try { await this.fixClaimOwners(set, pods, signal); await this.execute(set, plan, revs, pods, signal); } catch (e) { err = e; }
    // Status from the pods as this sync leaves them (upstream counts its own writes the same way).
    const after = planned.filter((p) => !plan.actions.some((a) => a.type === 'delete' && a.pod === p.metadata.name && a.why !== 'failed'));
    for (const a of plan.actions) if (a.type === 'create') after.push(newStatefulSetPod(a.revision === revs.current ? revs.currentSet : revs.updateSet, a.ordinal, a.revision));
    const status = computeStatus(set, after, revs, hist.collisionCount, now);
    await this.updateStatus(set, status, signal);
    // cleanupHistory: keep the current and update revisions and those pods still run.
    const live = new Set<string>([revs.current, revs.update, ...pods.map((p) => p.metadata.labels?.['controller-revision-hash'] ?? '')]);
    await this.history.truncate(namespace, hist.old, live, set.spec?.revisionHistoryLimit ?? 10, signal);
    if (err) throw err;
    const mrs = set.spec?.minReadySeconds ?? 0;
    if (mrs > 0 && status.readyReplicas !== status.availableReplicas) return { requeueAfterMs: mrs * 1000 };
  }

  private async execute(set: STSObj, plan: StsPlan, revs: { current: string; currentSet: STSObj | Readonly<STSObj>; updateSet: STSObj | Readonly<STSObj> }, pods: PodObj[], signal: AbortSignal): Promise<void> {
    const podClient = this.ctx.client.resource<PodObj>(Pods, set.metadata.namespace);
    await Promise.all(plan.actions.map(async (a) => {
      if (a.type === 'create') {
        const src = (a.revision === revs.current ? revs.currentSet : revs.updateSet) as STSObj;
        const pod = newStatefulSetPod(src, a.ordinal, a.revision);
        pod.metadata.ownerReferences = [newControllerRef(set, StatefulSets)];
        // A claim a previous pod of this ordinal still owns is about to be collected: wait for it
        // to go (its delete event brings the set back).
        if (podClaimIsStale(set, a.ordinal, undefined, (n) => this.claims.lister.get(`${set.metadata.namespace}/${n}`))) return;
        await this.createClaims(set, a.ordinal, signal);
        try {
          const made = await podClient.create(pod, { signal });
          const m = this.unseen.get(objectKey(set)) ?? new Map<string, { pod: PodObj; at: number }>();
          m.set(made.metadata.name, { pod: { ...made, status: made.status ?? { phase: 'Pending' } }, at: this.ctx.clock.now() });
          this.unseen.set(objectKey(set), m);
          this.ctx.recorder.event(set, 'Normal', 'SuccessfulCreate', 'create Pod %v in StatefulSet %v successful', pod.metadata.name, set.metadata.name);
        } catch (err) {
          if (isAlreadyExists(err)) return;
          this.ctx.recorder.event(set, 'Warning', 'FailedCreate', 'create Pod %v in StatefulSet %v failed error: %v', pod.metadata.name, set.metadata.name, (err as Error).message);
          throw err;
        }
        return;
      }
      const p = pods.find((x) => x.metadata.name === a.pod);
      if (!p) return;
      if (a.type === 'relabel') {
        const ord = podOrdinal(set.metadata.name, p.metadata.name);
        await podClient.patch(p.metadata.name, 'merge', { metadata: { labels: { [POD_NAME_LABEL]: p.metadata.name, [POD_INDEX_LABEL]: String(ord) } } }, { signal });
        return;
      }
      try {
        await podClient.delete(p.metadata.name, { signal, ...(p.metadata.uid ? { preconditions: { uid: p.metadata.uid } } : {}) });
        this.ctx.recorder.event(set, 'Normal', 'SuccessfulDelete', 'delete Pod %v in StatefulSet %v successful', p.metadata.name, set.metadata.name);
      } catch (err) {
        if (isNotFound(err)) return;
        this.ctx.recorder.event(set, 'Warning', 'FailedDelete', 'delete Pod %v in StatefulSet %v failed error: %v', p.metadata.name, set.metadata.name, (err as Error).message);
        throw err;
      }
    }));
  }

  /**
   * createPersistentVolumeClaims: the ordinal's missing claims, when PVCs are served, with the
   * owner refs the retention policy gives an ordinal in range. A claim being deleted blocks the
   * pod (it would start on data about to go); its delete event brings the set back.
   */
  private async createClaims(set: STSObj, ordinal: number, signal: AbortSignal): Promise<void> {
    if (!set.spec?.volumeClaimTemplates?.length || !lookupResource('', 'persistentvolumeclaims')) return;
    const client = this.ctx.client.resource<PVCObj>(PersistentVolumeClaims, set.metadata.namespace);
    const pod = podName(set, ordinal);
    for (const claim of claimsFor(set, ordinal).values()) {
      const name = claim.metadata.name;
      const cur = this.claims.lister.get(`${set.metadata.namespace}/${name}`);
      if (cur?.metadata.deletionTimestamp) throw new Error(`pvc ${name} is being deleted`);
      if (cur) continue;
      const refs = desiredClaimOwners(claim, set, { metadata: { name: pod } }, false);
      if (refs?.length) claim.metadata.ownerReferences = refs;
      try {
        await client.create(claim, { signal });
        this.ctx.recorder.event(set, 'Normal', 'SuccessfulCreate', 'create Claim %v Pod %v in StatefulSet %v success', name, pod, set.metadata.name);
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        this.ctx.recorder.event(set, 'Warning', 'FailedCreate', 'create Claim %v for Pod %v in StatefulSet %v failed error: %v', name, pod, set.metadata.name, (err as Error).message);
        throw err;
      }
    }
  }

  /**
   * UpdatePodClaimForRetentionPolicy for every pod of the set: claims of ordinals in range and of
   * pods scaled away get the owner refs the policy asks for (claims.ts). Only what differs is written.
   */
  private async fixClaimOwners(set: STSObj, pods: PodObj[], signal: AbortSignal): Promise<void> {
    if (!set.spec?.volumeClaimTemplates?.length || !lookupResource('', 'persistentvolumeclaims')) return;
    const client = this.ctx.client.resource<PVCObj>(PersistentVolumeClaims, set.metadata.namespace);
    const start = startOrdinal(set), end = start + (set.spec?.replicas ?? 1);
    for (const p of pods) {
      const ord = podOrdinal(set.metadata.name, p.metadata.name);
      if (ord < 0) continue;
      for (const want of claimsFor(set, ord).values()) {
        const cur = this.claims.lister.get(`${set.metadata.namespace}/${want.metadata.name}`);
        if (!cur || cur.metadata.deletionTimestamp) continue;
        const refs = desiredClaimOwners(cur, set, p, ord < start || ord >= end);
        if (!refs) continue;
        const next = clone(cur) as PVCObj;
        next.metadata.ownerReferences = refs;
        if (refs.length === 0) delete next.metadata.ownerReferences;
        await client.update(next, { signal });
        this.log.info({ claim: `${set.metadata.namespace}/${want.metadata.name}`, pod: p.metadata.name, owners: refs.map((r) => `${r.kind}/${r.name}`) }, 'Updated claim owner references for retention policy');
      }
    }
  }

  private async updateStatus(set: STSObj, status: StatefulSetStatus, signal: AbortSignal): Promise<void> {
    const norm = (s: StatefulSetStatus | undefined) => canonicalJson({ ...(s ?? {}), conditions: undefined });
    if (norm(set.status) === norm(status)) return;
    const client = this.ctx.client.resource<STSObj>(StatefulSets, set.metadata.namespace);
    const full = { ...status, ...(set.status?.conditions ? { conditions: clone(set.status.conditions) } : {}) } as StatefulSetStatus;
    try {
      await client.updateStatus({ ...clone(set), status: full }, { signal });
    } catch (err) {
      if (!isConflict(err)) throw err;
      const cur = await client.get(set.metadata.name, { signal });
      if (cur.metadata.uid !== set.metadata.uid) return;
      await client.updateStatus({ ...cur, status: full }, { signal });
    }
  }
}
