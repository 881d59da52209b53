/**
 * ReplicaSet controller (upstream pkg/controller/replicaset): keeps spec.replicas active pods
 * that match the selector, adopting orphans and releasing pods whose labels stop matching.
 * Watches ReplicaSets and Pods; writes Pods, ReplicaSet status and Events.
 * The same class runs core/v1 ReplicationControllers (upstream's replication manager is this
 * controller behind an RC↔RS adapter): `resource` picks the kind, and RC selectors are label maps.
 */
import { ApiError, isConflict, isNotFound, labelSelectorFromObject, labelSelectorFromSet, Pods, ReplicaSets, ReplicationControllers, TerminalError, type ParsedLabelSelector, type Pod, type ReplicaSet, type ReplicaSetCondition, type ReplicaSetStatus, type ResourceDescriptor } from '@mk8s/api';
import { controllerOf, objectKey, splitKey, newControllerRef, type SharedInformer } from '@mk8s/client';
import { BaseController, slowStartBatch, type ControllerContext } from '../../controller.js';
import { ControllerExpectations } from '../../util/expectations.js';
import { clone, rfc3339, type Obj } from '../../util/meta.js';
import { isPodActive, isPodAvailable, isPodReady, podsToDelete } from '../../util/pods.js';
import { claimObjects } from '../../util/ref-manager.js';
import { canonicalJson } from '../../util/hash.js';

export type RSObj = Obj<ReplicaSet>;
export type PodObj = Obj<Pod>;

/** Upstream's BurstReplicas: the most pods one sync creates or deletes. */
export const BURST_REPLICAS = 500;

export interface ReplicaSetControllerOptions {
  burstReplicas?: number;
  /** The kind managed: ReplicaSets (default) or ReplicationControllers. */
  resource?: typeof ReplicaSets | typeof ReplicationControllers;
  /** Controller and queue name. @default 'replicaset' */
  name?: string;
}

export class ReplicaSetController extends BaseController {
  static readonly NAME = 'replicaset';
  readonly name: string;
  readonly expectations: ControllerExpectations;
  readonly replicaSets: SharedInformer<RSObj>;
  readonly pods: SharedInformer<PodObj>;
  private readonly burst: number;
  private readonly kind: ResourceDescriptor;

  constructor(ctx: ControllerContext, o: ReplicaSetControllerOptions = {}) {
    super(ctx, o.name ?? ReplicaSetController.NAME);
    this.name = o.name ?? ReplicaSetController.NAME;
    this.kind = o.resource ?? ReplicaSets;
    this.burst = o.burstReplicas ?? BURST_REPLICAS;
    this.expectations = new ControllerExpectations(ctx.clock);
    this.replicaSets = ctx.informers.informerFor<RSObj>(this.kind);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.replicaSets.addEventHandler({
      onAdd: (rs) => this.enqueue(objectKey(rs)),
      onUpdate: (_, rs) => this.enqueue(objectKey(rs)),
      onDelete: (rs) => { this.expectations.delete(objectKey(rs)); this.enqueue(objectKey(rs)); },
    });
    this.pods.addEventHandler({
      onAdd: (p) => this.addPod(p),
      onUpdate: (o, p) => this.updatePod(o, p),
      onDelete: (p) => this.deletePod(p),
    });
  }

  /** The ReplicaSet controlling pod (by controllerRef, uid-checked against the cache). */
  private ownerKey(p: PodObj): string | undefined {
    const ref = controllerOf(p);
    if (!ref || ref.kind !== this.kind.kind) return undefined;
    const key = `${p.metadata.namespace}/${ref.name}`;
    const rs = this.replicaSets.lister.get(key);
    return rs && rs.metadata.uid === ref.uid ? key : undefined;
  }

  /** ReplicaSets in pod's namespace whose selector matches it (candidates for adoption). */
  private matchingReplicaSets(p: PodObj): string[] {
    return this.replicaSets.lister.list(p.metadata.namespace).filter((rs) => this.selectorOf(rs)?.matches(p.metadata.labels) ?? false).map(objectKey);
  }

  private addPod(p: PodObj): void {
    if (p.metadata.deletionTimestamp) return this.deletePod(p);
    if (controllerOf(p)) {
      const key = this.ownerKey(p);
      if (!key) return;
      this.expectations.creationObserved(key);
      this.enqueue(key);
      return;
    }
    for (const key of this.matchingReplicaSets(p)) this.enqueue(key);
  }

  private updatePod(old: PodObj, cur: PodObj): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion && old.metadata.resourceVersion !== undefined) return;
    const labelsChanged = canonicalJson(old.metadata.labels ?? {}) !== canonicalJson(cur.metadata.labels ?? {});
    if (cur.metadata.deletionTimestamp) {
      this.deletePod(cur);
      if (labelsChanged) this.deletePod(old);
      return;
    }
    const oldRef = controllerOf(old), curRef = controllerOf(cur);
    const refChanged = oldRef?.uid !== curRef?.uid;
    if (refChanged && oldRef) { const k = this.ownerKey(old); if (k) this.enqueue(k); }
    if (curRef) {
      const key = this.ownerKey(cur);
      if (!key) return;
      this.enqueue(key);
      // A pod that just became ready turns available after minReadySeconds: look again then.
      const rs = this.replicaSets.lister.get(key);
      const mrs = rs?.spec?.minReadySeconds ?? 0;
      if (mrs > 0 && !isPodReady(old) && isPodReady(cur)) this.queue.addAfter(key, mrs * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged) for (const key of this.matchingReplicaSets(cur)) this.enqueue(key);
  }

  private deletePod(p: PodObj): void {
    const key = this.ownerKey(p) ?? (controllerOf(p)?.kind === this.kind.kind ? `${p.metadata.namespace}/${controllerOf(p)?.name}` : undefined);
    if (!key) return;
    this.expectations.deletionObserved(key, objectKey(p));
    this.enqueue(key);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const rs = this.replicaSets.lister.get(key);
    if (!rs) { this.expectations.delete(key); return; }
    const needsSync = this.expectations.satisfied(key);
    let selector: ParsedLabelSelector;
    try { selector = this.parseSelector(rs); } catch (err) { throw new TerminalError(`invalid selector: ${(err as Error).message}`); }
    const { namespace } = splitKey(key);
    const podClient = this.ctx.client.resource<PodObj>(Pods, namespace);
    const active = this.pods.lister.list(namespace).filter(isPodActive);
    const owned = await claimObjects({
      owner: rs, ownerResource: this.kind, selector, candidates: active, client: podClient, signal,
      recheckOwner: async () => {
        const fresh = await this.ctx.client.resource<RSObj>(this.kind, namespace).get(rs.metadata.name, { signal });
        if (fresh.metadata.uid !== rs.metadata.uid) throw new Error(`original ${this.kind.kind} ${key} is gone: got uid ${fresh.metadata.uid}, wanted ${rs.metadata.uid}`);
        if (fresh.metadata.deletionTimestamp) throw new Error(`${key} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
      },
    });
    let manageErr: unknown;
    if (needsSync && !rs.metadata.deletionTimestamp) {
      try { await this.manageReplicas(owned, rs, podClient, signal); } catch (err) { manageErr = err; }
    }
    const status = this.calculateStatus(rs, owned, manageErr);
    const updated = await this.updateStatus(rs, status, signal);
    if (manageErr) throw manageErr;
    const mrs = updated.spec?.minReadySeconds ?? 0;
    const st = updated.status;
    if (mrs > 0 && st && st.readyReplicas === updated.spec?.replicas && st.availableReplicas !== updated.spec?.replicas) {
      return { requeueAfterMs: mrs * 1000 };
    }
  }

  /** spec.selector: a LabelSelector (ReplicaSet) or a label map (ReplicationController). Throws when invalid. */
  private parseSelector(rs: RSObj): ParsedLabelSelector {
    if (this.kind === ReplicationControllers) {
      const sel = rs.spec?.selector as unknown as Record<string, string> | undefined;
      // An RC with an empty selector selects nothing (validation rejects it; never adopt everything).
      if (!sel || Object.keys(sel).length === 0) throw new Error('empty selector');
      return labelSelectorFromSet(sel);
    }
    return labelSelectorFromObject(rs.spec?.selector);
  }

  private selectorOf(rs: RSObj): ParsedLabelSelector | undefined {
    try { return this.parseSelector(rs); } catch { return undefined; }
  }

  private async manageReplicas(pods: PodObj[], rs: RSObj, podClient: ReturnType<ControllerContext['client']['resource']>, signal: AbortSignal): Promise<void> {
    const key = objectKey(rs);
    const want = rs.spec?.replicas ?? 1;
    let diff = pods.length - want;
    if (diff < 0) {
      diff = Math.min(-diff, this.burst);
      this.expectations.expectCreations(key, diff);
      this.log.debug({ key, need: want, creating: diff }, 'Too few replicas');
      const res = await slowStartBatch(diff, 1, async () => {
        try {
          const created = await podClient.create(podFromTemplate(rs, this.kind) as PodObj, { signal });
          this.ctx.recorder.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: %v', created.metadata.name);
        } catch (err) {
          // A create that failed will never be observed: lower the expectation now.
          this.expectations.creationObserved(key);
          if (err instanceof ApiError && err.reason === 'Forbidden' && /being terminated/.test(err.message)) return;
          this.ctx.recorder.event(rs, 'Warning', 'FailedCreate', 'Error creating: %v', (err as Error).message);
          throw err;
        }
      });
      // Creates skipped after a failed batch will not be observed either.
      const skipped = diff - res.successes - (res.error !== undefined ? 1 : 0);
      for (let i = 0; i < skipped; i++) this.expectations.creationObserved(key);
      if (res.error !== undefined) throw res.error;
      return;
    }
    if (diff > 0) {
      diff = Math.min(diff, this.burst);
      const victims = podsToDelete(pods, this.relatedPods(rs, pods), diff);
      this.expectations.expectDeletions(key, victims.map(objectKey));
      const errors: unknown[] = [];
      await Promise.all(victims.map(async (p) => {
        try {
          await podClient.delete(p.metadata.name, { signal, ...(p.metadata.uid ? { preconditions: { uid: p.metadata.uid } } : {}) });
          this.ctx.recorder.event(rs, 'Normal', 'SuccessfulDelete', 'Deleted pod: %v', p.metadata.name);
        } catch (err) {
          this.expectations.deletionObserved(key, objectKey(p));
          if (isNotFound(err)) return;
          this.ctx.recorder.event(rs, 'Warning', 'FailedDelete', 'Error deleting: %v', (err as Error).message);
          errors.push(err);
        }
      }));
      if (errors.length) throw errors[0];
    }
  }

  /**
   * getIndirectlyRelatedPods: the active pods of every ReplicaSet sharing rs's controller (e.g. all
   * of a Deployment's), so that deletion prefers nodes the whole Deployment is doubled up on.
   */
  private relatedPods(rs: RSObj, own: PodObj[]): PodObj[] {
    const owner = controllerOf(rs);
    if (!owner) return own;
    const siblings = new Set(this.replicaSets.lister.list(rs.metadata.namespace).filter((x) => controllerOf(x)?.uid === owner.uid).map((x) => x.metadata.uid));
    siblings.add(rs.metadata.uid);
    const related = this.pods.lister.list(rs.metadata.namespace).filter((p) => isPodActive(p) && siblings.has(controllerOf(p)?.uid));
    return related.length ? related : own;
  }

  private calculateStatus(rs: RSObj, pods: PodObj[], manageErr: unknown): ReplicaSetStatus {
    const templateLabels = labelSelectorFromSet(rs.spec?.template?.metadata?.labels);
    const now = this.ctx.clock.now();
    const mrs = rs.spec?.minReadySeconds ?? 0;
    const s: ReplicaSetStatus = {
      replicas: pods.length,
      fullyLabeledReplicas: pods.filter((p) => templateLabels.matches(p.metadata.labels)).length,
      readyReplicas: pods.filter(isPodReady).length,
      availableReplicas: pods.filter((p) => isPodAvailable(p, mrs, now)).length,
      observedGeneration: rs.metadata.generation ?? 0,
    };
    let conditions: ReplicaSetCondition[] = clone(rs.status?.conditions ?? []);
    const failure = conditions.find((c) => c.type === 'ReplicaFailure');
    if (manageErr && !failure) {
      const diff = pods.length - (rs.spec?.replicas ?? 1);
      conditions.push({ type: 'ReplicaFailure', status: 'True', reason: diff < 0 ? 'FailedCreate' : 'FailedDelete', message: (manageErr as Error).message ?? String(manageErr), lastTransitionTime: rfc3339(now) });
    } else if (!manageErr && failure) {
      conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
    }
    if (conditions.length) s.conditions = conditions;
    return s;
  }

  private async updateStatus(rs: RSObj, status: ReplicaSetStatus, signal: AbortSignal): Promise<RSObj> {
    const same = (cur: RSObj) => canonicalJson(normStatus(cur.status)) === canonicalJson(normStatus(status));
    if (same(rs)) return rs;
    const client = this.ctx.client.resource<RSObj>(this.kind, rs.metadata.namespace);
    let cur = rs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await client.updateStatus({ ...clone(cur), status }, { signal });
      } catch (err) {
        // One retry against a fresh copy, as upstream's updateReplicaSetStatus.
        if (attempt > 0 || !isConflict(err)) throw err;
        cur = await client.get(rs.metadata.name, { signal });
        if (cur.metadata.uid !== rs.metadata.uid) return cur;
        status = { ...status, observedGeneration: status.observedGeneration ?? 0 };
      }
    }
  }
}

function normStatus(s: ReplicaSetStatus | undefined): ReplicaSetStatus {
  return {
    replicas: s?.replicas ?? 0, fullyLabeledReplicas: s?.fullyLabeledReplicas ?? 0, readyReplicas: s?.readyReplicas ?? 0,
    availableReplicas: s?.availableReplicas ?? 0, observedGeneration: s?.observedGeneration ?? 0,
    ...(s?.conditions?.length ? { conditions: s.conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason })) as ReplicaSetCondition[] } : {}),
  };
}


/** GetPodFromTemplate: the pod a ReplicaSet creates (generateName "<rs>-", controller ownerReference). */
export function podFromTemplate(rs: RSObj, kind: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'> = ReplicaSets): Pod {
  const t = rs.spec?.template;
  const meta: NonNullable<Pod['metadata']> = {
    generateName: `${rs.metadata.name}-`,
    namespace: rs.metadata.namespace ?? 'default',
    ownerReferences: [newControllerRef(rs, kind)],
  };
  if (t?.metadata?.labels) meta.labels = { ...t.metadata.labels };
  if (t?.metadata?.annotations) meta.annotations = { ...t.metadata.annotations };
  if (t?.metadata?.finalizers) meta.finalizers = [...t.metadata.finalizers];
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec: clone(t?.spec ?? { containers: [] }) };
}
