/**
 * StatefulSet controller (upstream pkg/controller/statefulset): pods `<set>-<ordinal>` with stable
 * identity (hostname, subdomain = serviceName, pod-name and pod-index labels) and storage (claims
 * `<template>-<set>-<ordinal>` from volumeClaimTemplates), OrderedReady or Parallel, RollingUpdate
 * with partition (and maxUnavailable) or OnDelete, ControllerRevisions for currentRevision /
 * updateRevision. Watches StatefulSets, Pods, ControllerRevisions; writes Pods,
 * PersistentVolumeClaims, ControllerRevisions, StatefulSet status and Events.
 */
import { ControllerRevisions, isAlreadyExists, isConflict, isNotFound, labelSelectorFromObject, lookupResource, PersistentVolumeClaims, Pods, StatefulSets, TerminalError, type ParsedLabelSelector, type PersistentVolumeClaim, type StatefulSetStatus } from '@mk8s/api';
import { controllerOf, newControllerRef, objectKey, splitKey, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { canonicalJson } from '../../util/hash.js';
import { RevisionHistory, type RevisionObj } from '../../util/history.js';
import { clone, type Obj } from '../../util/meta.js';
import { claimObjects } from '../../util/ref-manager.js';
import { applyRevision, claimName, computeStatus, newStatefulSetPod, planStatefulSet, podOrdinal, POD_INDEX_LABEL, POD_NAME_LABEL, type PodObj, type StsPlan, type STSObj } from './util.js';

type PVCObj = Obj<PersistentVolumeClaim>;

/** How long a created pod the watch has not shown counts as existing. */
const UNSEEN_TIMEOUT_MS = 30_000;

export class StatefulSetController extends BaseController {
  static readonly NAME = 'statefulset';
  readonly name = StatefulSetController.NAME;
  readonly sets: SharedInformer<STSObj>;
  readonly pods: SharedInformer<PodObj>;
  readonly revisions: SharedInformer<RevisionObj>;
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
    const plan = planStatefulSet(set, planned, revs, now);
    this.lastPlan.set(key, plan);
    let err: unknown;
    try { await this.execute(set, plan, revs, pods, signal); } catch (e) { err = e; }
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
      if (a.why === 'scale-down' && set.spec?.persistentVolumeClaimRetentionPolicy?.whenScaled === 'Delete') await this.deleteClaims(set, podOrdinal(set.metadata.name, p.metadata.name), signal);
    }));
  }

  /** createPersistentVolumeClaims: the ordinal's claims, when PVCs are served; whenDeleted Delete makes the set their owner. */
  private async createClaims(set: STSObj, ordinal: number, signal: AbortSignal): Promise<void> {
    const templates = set.spec?.volumeClaimTemplates ?? [];
    if (templates.length === 0 || !lookupResource('', 'persistentvolumeclaims')) return;
    const client = this.ctx.client.resource<PVCObj>(PersistentVolumeClaims, set.metadata.namespace);
    for (const t of templates) {
      const name = claimName(t.metadata?.name ?? '', set, ordinal);
      const claim: PVCObj = {
        apiVersion: 'v1', kind: 'PersistentVolumeClaim',
        metadata: { name, namespace: set.metadata.namespace ?? 'default', labels: { ...(t.metadata?.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) }, ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}) },
        spec: clone(t.spec ?? {}),
      } as PVCObj;
      if (set.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete') {
        claim.metadata.ownerReferences = [{ ...newControllerRef(set, StatefulSets), controller: false }];
      }
      try {
        await client.create(claim, { signal });
        this.ctx.recorder.event(set, 'Normal', 'SuccessfulCreate', 'create Claim %v Pod %v in StatefulSet %v success', name, `${set.metadata.name}-${ordinal}`, set.metadata.name);
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        this.ctx.recorder.event(set, 'Warning', 'FailedCreate', 'create Claim %v for Pod %v in StatefulSet %v failed error: %v', name, `${set.metadata.name}-${ordinal}`, set.metadata.name, (err as Error).message);
        throw err;
      }
    }
  }

  private async deleteClaims(set: STSObj, ordinal: number, signal: AbortSignal): Promise<void> {
    if (!lookupResource('', 'persistentvolumeclaims')) return;
    const client = this.ctx.client.resource<PVCObj>(PersistentVolumeClaims, set.metadata.namespace);
    for (const t of set.spec?.volumeClaimTemplates ?? []) {
      try { await client.delete(claimName(t.metadata?.name ?? '', set, ordinal), { signal }); } catch (err) { if (!isNotFound(err)) throw err; }
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
