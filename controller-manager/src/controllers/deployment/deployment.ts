/**
 * Deployment controller (upstream pkg/controller/deployment): one ReplicaSet per pod template
 * (named <deployment>-<pod-template-hash>), RollingUpdate within maxSurge/maxUnavailable or
 * Recreate, revision annotations, revisionHistoryLimit, pause, proportional scaling and the
 * Progressing/Available conditions `kubectl rollout status` reads. Rollback is what `kubectl
 * rollout undo` does client-side: it writes an old template back, and the matching old ReplicaSet
 * is reused with a new revision.
 * Watches Deployments, ReplicaSets and Pods; writes ReplicaSets, Deployment status and Events.
 */
import { Deployments, isAlreadyExists, isNotFound, labelSelectorFromObject, Pods, ReplicaSets, TerminalError, type Deployment, type DeploymentStatus, type ParsedLabelSelector, type Pod, type ReplicaSet } from '@mk8s/api';
import { controllerOf, isControlledBy, newControllerRef, objectKey, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { canonicalJson, computeHash } from '../../util/hash.js';
import { clone, type Obj } from '../../util/meta.js';
import { claimObjects } from '../../util/ref-manager.js';
import * as u from './util.js';

export type DeployObj = Obj<Deployment>;
export type RSObj = Obj<ReplicaSet>;
type PodObj = Obj<Pod>;

export class DeploymentController extends BaseController {
  static readonly NAME = 'deployment';
  readonly name = DeploymentController.NAME;
  readonly deployments: SharedInformer<DeployObj>;
  readonly replicaSets: SharedInformer<RSObj>;
  readonly pods: SharedInformer<PodObj>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'deployment');
    this.deployments = ctx.informers.informerFor<DeployObj>(Deployments);
    this.replicaSets = ctx.informers.informerFor<RSObj>(ReplicaSets);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.deployments.addEventHandler({
      onAdd: (d) => this.enqueue(objectKey(d)),
      onUpdate: (_, d) => this.enqueue(objectKey(d)),
      onDelete: (d) => this.enqueue(objectKey(d)),
    });
    this.replicaSets.addEventHandler({
      onAdd: (rs) => this.enqueueForRS(rs),
      onUpdate: (old, rs) => {
        if (old.metadata.resourceVersion === rs.metadata.resourceVersion && old.metadata.resourceVersion !== undefined) return;
        if (controllerOf(old)?.uid !== controllerOf(rs)?.uid) this.enqueueForRS(old);
        this.enqueueForRS(rs);
      },
      onDelete: (rs) => this.enqueueForRS(rs),
    });
    // Recreate waits for old pods to be gone: a pod deletion may unblock it.
    this.pods.addEventHandler({
      onDelete: (p) => {
        const ref = controllerOf(p);
        if (ref?.kind !== 'ReplicaSet') return;
        const rs = this.replicaSets.lister.get(`${p.metadata.namespace}/${ref.name}`);
        const dkey = rs && this.ownerKey(rs);
        const d = dkey ? this.deployments.lister.get(dkey) : undefined;
        if (d && d.spec?.strategy?.type === 'Recreate') this.enqueue(objectKey(d));
      },
    });
  }

  private ownerKey(rs: RSObj): string | undefined {
    const ref = controllerOf(rs);
    if (!ref || ref.kind !== 'Deployment') return undefined;
    const key = `${rs.metadata.namespace}/${ref.name}`;
    const d = this.deployments.lister.get(key);
    return d && d.metadata.uid === ref.uid ? key : undefined;
  }

  private enqueueForRS(rs: RSObj): void {
    if (controllerOf(rs)) {
      const key = this.ownerKey(rs);
      if (key) this.enqueue(key);
      return;
    }
    for (const d of this.deployments.lister.list(rs.metadata.namespace)) {
      if (selectorOf(d)?.matches(rs.metadata.labels)) this.enqueue(objectKey(d));
    }
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const cached = this.deployments.lister.get(key);
    if (!cached) return;
    const run = new Rollout(this, clone(cached), signal);
    return run.sync();
  }

  /** @internal */ get context(): ControllerContext { return this.ctx; }
}

function selectorOf(d: DeployObj): ParsedLabelSelector | undefined {
  try { return labelSelectorFromObject(d.spec?.selector); } catch { return undefined; }
}

/** One sync of one Deployment (syncDeployment and the rollout it chooses). */
class Rollout {
  private readonly ctx: ControllerContext;
  private readonly ns: string;
  /** ReplicaSets written during this sync, by name. */
  private readonly latest = new Map<string, RSObj>();
  constructor(private readonly c: DeploymentController, private d: DeployObj, private readonly signal: AbortSignal) {
    this.ctx = c.context;
    this.ns = d.metadata.namespace ?? 'default';
  }

  private get now(): number { return this.ctx.clock.now(); }
  private rsClient() { return this.ctx.client.resource<RSObj>(ReplicaSets, this.ns); }
  private dClient() { return this.ctx.client.resource<DeployObj>(Deployments, this.ns); }

  async sync(): Promise<{ requeueAfterMs?: number } | void> {
    const d = this.d;
    let selector: ParsedLabelSelector;
    try { selector = labelSelectorFromObject(d.spec?.selector); } catch (err) { throw new TerminalError(`invalid selector: ${(err as Error).message}`); }
    if (selector.empty) {
      this.ctx.recorder.event(d, 'Warning', 'SelectorOverlap', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        this.d = await this.dClient().updateStatus({ ...d, status: { ...(d.status ?? {}), observedGeneration: d.metadata.generation ?? 0 } }, { signal: this.signal });
      }
      return;
    }
    const rsList = await this.claimReplicaSets(selector);
    if (d.metadata.deletionTimestamp) return this.syncStatusOnly(rsList);
    await this.checkPausedConditions();
    if (this.d.spec?.paused) return this.syncScale(rsList);
    if (await this.isScalingEvent(rsList)) return this.syncScale(rsList);
    if (this.d.spec?.strategy?.type === 'Recreate') return this.rolloutRecreate(rsList);
    return this.rolloutRolling(rsList);
  }

  private async claimReplicaSets(selector: ParsedLabelSelector): Promise<RSObj[]> {
    const d = this.d;
    return claimObjects({
      owner: d, ownerResource: Deployments, selector, candidates: this.c.replicaSets.lister.list(this.ns), client: this.rsClient(), signal: this.signal,
      recheckOwner: async () => {
        const fresh = await this.dClient().get(d.metadata.name, { signal: this.signal });
        if (fresh.metadata.uid !== d.metadata.uid) throw new Error(`original Deployment ${this.ns}/${d.metadata.name} is gone`);
        if (fresh.metadata.deletionTimestamp) throw new Error(`${this.ns}/${d.metadata.name} has just been deleted`);
      },
    });
  }

  // ---- ReplicaSets and revisions ----

  /** getAllReplicaSetsAndSyncRevision: the new ReplicaSet (created if asked) and the old ones. */
  private async getAll(rsList: RSObj[], create: boolean): Promise<{ newRS: RSObj | undefined; oldRSs: RSObj[] }> {
    // Writes earlier in this sync are newer than the cache: use them (avoids self-inflicted conflicts).
    const names = new Set(rsList.map((rs) => rs.metadata.name));
    rsList = [...rsList.map((rs) => this.latest.get(rs.metadata.name) ?? rs), ...[...this.latest.values()].filter((rs) => !names.has(rs.metadata.name))];
    const existing = u.findNewReplicaSet(this.d, rsList);
    const oldRSs = rsList.filter((rs) => rs !== existing);
    const newRS = await this.getNewReplicaSet(existing, oldRSs, create);
    return { newRS, oldRSs };
  }

  private async getNewReplicaSet(existing: RSObj | undefined, oldRSs: RSObj[], create: boolean): Promise<RSObj | undefined> {
    const d = this.d;
    const newRevision = u.maxRevision(oldRSs) + 1;
    if (existing) {
      let rs = existing;
      const annotations = u.newReplicaSetAnnotations(d, rs, newRevision, true);
      const minReady = d.spec?.minReadySeconds ?? 0;
      if (annotations || (rs.spec?.minReadySeconds ?? 0) !== minReady) {
        const copy = clone(rs);
        if (annotations) copy.metadata.annotations = annotations;
        copy.spec = { ...copy.spec!, minReadySeconds: minReady };
        rs = await this.rsClient().update(copy, { signal: this.signal });
        this.latest.set(rs.metadata.name, rs);
      }
      await this.setDeploymentRevision(rs.metadata.annotations?.[u.REVISION_ANNOTATION]);
      if (u.hasProgressDeadline(this.d) && !u.getCondition(this.d.status, 'Progressing')) {
        const status = clone(this.d.status ?? {});
        u.setCondition(status, u.newCondition('Progressing', 'True', u.FOUND_NEW_RS_REASON, `Found new replica set "${rs.metadata.name}"`, this.now));
        await this.writeStatus(status);
      }
      return rs;
    }
    if (!create) return undefined;

    const hash = computeHash(d.spec?.template, d.status?.collisionCount);
    const template = clone(d.spec?.template ?? {});
    template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [u.DEFAULT_POD_TEMPLATE_HASH_KEY]: hash } };
    const sel = clone(d.spec!.selector);
    sel.matchLabels = { ...(sel.matchLabels ?? {}), [u.DEFAULT_POD_TEMPLATE_HASH_KEY]: hash };
    const fresh: RSObj = {
      apiVersion: 'apps/v1', kind: 'ReplicaSet',
      metadata: { name: `${d.metadata.name}-${hash}`, namespace: this.ns, ownerReferences: [newControllerRef(d, Deployments)], labels: { ...template.metadata.labels } },
      spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector: sel, template },
    };
    const replicas = u.newRSNewReplicas(d, [...oldRSs, fresh], fresh);
    fresh.spec!.replicas = replicas;
    fresh.metadata.annotations = u.newReplicaSetAnnotations(d, fresh, newRevision, false) ?? {};

    let created: RSObj;
    let alreadyExisted = false;
    try {
      created = await this.rsClient().create(fresh, { signal: this.signal });
    } catch (err) {
      if (!isAlreadyExists(err)) {
        const status = clone(this.d.status ?? {});
        const msg = `Failed to create new replica set "${fresh.metadata.name}": ${(err as Error).message}`;
        if (u.hasProgressDeadline(d)) u.setCondition(status, u.newCondition('Progressing', 'False', u.FAILED_RS_CREATE_REASON, msg, this.now));
        this.ctx.recorder.event(d, 'Warning', u.FAILED_RS_CREATE_REASON, msg);
        await this.writeStatus(status);
        throw err;
      }
      // Either our own earlier create (cache lag) or a hash collision with a foreign ReplicaSet.
      const other = await this.rsClient().get(fresh.metadata.name, { signal: this.signal });
      if (isControlledBy(other, d) && (u.equalIgnoreHash(other.spec?.template, d.spec?.template) || other.metadata.labels?.[u.DEFAULT_POD_TEMPLATE_HASH_KEY] === hash)) {
        created = other;
        alreadyExisted = true;
      } else {
        const status = clone(this.d.status ?? {});
        status.collisionCount = (status.collisionCount ?? 0) + 1;
        await this.writeStatus(status);
        throw new Error(`found a hash collision for deployment ${this.ns}/${d.metadata.name}: bumping collisionCount to ${status.collisionCount}`);
      }
    }
    this.latest.set(created.metadata.name, created);
    if (!alreadyExisted && replicas > 0) {
      this.ctx.recorder.event(d, 'Normal', 'ScalingReplicaSet', 'Scaled up replica set %s from 0 to %d', created.metadata.name, replicas);
    }
    await this.setDeploymentRevision(String(newRevision));
    if (!alreadyExisted && u.hasProgressDeadline(this.d)) {
      const status = clone(this.d.status ?? {});
      u.setCondition(status, u.newCondition('Progressing', 'True', u.NEW_RS_REASON, `Created new replica set "${created.metadata.name}"`, this.now));
      await this.writeStatus(status);
    }
    return created;
  }

  /** Keeps the Deployment's revision annotation equal to its new ReplicaSet's (what `kubectl describe` shows). */
  private async setDeploymentRevision(revision: string | undefined): Promise<void> {
    if (revision === undefined || this.d.metadata.annotations?.[u.REVISION_ANNOTATION] === revision) return;
    const prev = this.d.metadata.annotations?.[u.REVISION_ANNOTATION];
    if (prev !== undefined && Number(prev) > Number(revision)) return;
    this.d = await this.dClient().patch(this.d.metadata.name, 'merge', { metadata: { annotations: { [u.REVISION_ANNOTATION]: revision } } }, { signal: this.signal });
  }

  private async writeStatus(status: DeploymentStatus): Promise<void> {
    this.d = await this.dClient().updateStatus({ ...clone(this.d), status }, { signal: this.signal });
  }

  /** scaleReplicaSet: sets replicas and the desired/max annotations; records ScalingReplicaSet. Returns the updated ReplicaSet. */
  private async scaleReplicaSet(rs: RSObj, newScale: number, op?: 'up' | 'down'): Promise<RSObj> {
    const want = u.replicasAnnotations(this.d);
    const sizeChanged = (rs.spec?.replicas ?? 0) !== newScale;
    const annChanged = Object.entries(want).some(([k, v]) => rs.metadata.annotations?.[k] !== v);
    if (!sizeChanged && !annChanged) return rs;
    const copy = clone(rs);
    const oldScale = copy.spec?.replicas ?? 0;
    copy.spec = { ...copy.spec!, replicas: newScale };
    copy.metadata.annotations = { ...(copy.metadata.annotations ?? {}), ...want };
    const updated = await this.rsClient().update(copy, { signal: this.signal });
    this.latest.set(updated.metadata.name, updated);
    if (sizeChanged) {
      const operation = op ?? (oldScale < newScale ? 'up' : 'down');
      this.ctx.recorder.event(this.d, 'Normal', 'ScalingReplicaSet', 'Scaled %s replica set %s from %d to %d', operation, rs.metadata.name, oldScale, newScale);
    }
    return updated;
  }

  // ---- strategies ----

  private async rolloutRolling(rsList: RSObj[]): Promise<{ requeueAfterMs?: number } | void> {
    const got = await this.getAll(rsList, true);
    let newRS = got.newRS!;
    let oldRSs = got.oldRSs;
    // reconcileNewReplicaSet
    const want = u.specReplicas(this.d);
    const cur = newRS.spec?.replicas ?? 0;
    if (cur !== want) {
      const target = cur > want ? want : u.newRSNewReplicas(this.d, [...oldRSs, newRS], newRS);
      if (target !== cur) {
        newRS = await this.scaleReplicaSet(newRS, target);
        return this.syncRolloutStatus([...oldRSs, newRS], newRS);
      }
    }
    // reconcileOldReplicaSets
    const scaled = await this.reconcileOld(oldRSs, newRS);
    oldRSs = scaled.oldRSs;
    if (scaled.changed) return this.syncRolloutStatus([...oldRSs, newRS], newRS);
    if (u.deploymentComplete(this.d, this.d.status ?? {})) await this.cleanup(oldRSs);
    return this.syncRolloutStatus([...oldRSs, newRS], newRS);
  }

  private async reconcileOld(oldRSs: RSObj[], newRS: RSObj): Promise<{ oldRSs: RSObj[]; changed: boolean }> {
    const active = u.filterActive(oldRSs);
    if (u.replicaCount(active) === 0) return { oldRSs, changed: false };
    const all = [...oldRSs, newRS];
    const maxDown = u.maxScaledDown(this.d, all, newRS);
    if (maxDown <= 0) return { oldRSs, changed: false };
    let changed = false;
    const apply = async (sizes: Map<string, number>) => {
      for (const [name, size] of sizes) {
        const i = oldRSs.findIndex((rs) => rs.metadata.name === name);
        const rs = oldRSs[i];
        if (!rs || (rs.spec?.replicas ?? 0) === size) continue;
        oldRSs = [...oldRSs];
        oldRSs[i] = await this.scaleReplicaSet(rs, size, 'down');
        changed = true;
      }
    };
    await apply(u.cleanupUnhealthy(u.filterActive(oldRSs), maxDown));
    await apply(u.scaleDownOldForRollingUpdate(this.d, [...oldRSs, newRS], u.filterActive(oldRSs)));
    return { oldRSs, changed };
  }

  private async rolloutRecreate(rsList: RSObj[]): Promise<{ requeueAfterMs?: number } | void> {
    let { newRS, oldRSs } = await this.getAll(rsList, false);
    let scaledDown = false;
    for (let i = 0; i < oldRSs.length; i++) {
      const rs = oldRSs[i]!;
      if ((rs.spec?.replicas ?? 0) === 0) continue;
      oldRSs[i] = await this.scaleReplicaSet(rs, 0, 'down');
      scaledDown = true;
    }
    if (scaledDown) return this.syncRolloutStatus([...oldRSs, newRS], newRS);
    if (this.oldPodsRunning(oldRSs)) return this.syncRolloutStatus([...oldRSs, newRS], newRS);
    if (!newRS) newRS = (await this.getAll([...oldRSs], true)).newRS;
    if (newRS && (newRS.spec?.replicas ?? 0) !== u.specReplicas(this.d)) {
      newRS = await this.scaleReplicaSet(newRS, u.specReplicas(this.d), 'up');
    }
    if (u.deploymentComplete(this.d, this.d.status ?? {})) await this.cleanup(oldRSs);
    return this.syncRolloutStatus([...oldRSs, newRS], newRS);
  }

  private oldPodsRunning(oldRSs: RSObj[]): boolean {
    if (u.actualReplicaCount(oldRSs) > 0) return true;
    const uids = new Set(oldRSs.map((rs) => rs.metadata.uid));
    return this.c.pods.lister.list(this.ns).some((p) => {
      const ref = controllerOf(p);
      return !!ref && uids.has(ref.uid) && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded';
    });
  }

  /** isScalingEvent: an active ReplicaSet was sized for a different replica count than the Deployment wants now. */
  private async isScalingEvent(rsList: RSObj[]): Promise<boolean> {
    const { newRS, oldRSs } = await this.getAll(rsList, false);
    for (const rs of u.filterActive([...oldRSs, newRS])) {
      const desired = u.annotatedInt(rs, u.DESIRED_REPLICAS_ANNOTATION);
      if (desired !== undefined && desired !== u.specReplicas(this.d)) return true;
    }
    return false;
  }

  /** sync: scaling (and the paused case): resize ReplicaSets without rolling out. */
  private async syncScale(rsList: RSObj[]): Promise<{ requeueAfterMs?: number } | void> {
    let { newRS, oldRSs } = await this.getAll(rsList, false);
    const all = (): RSObj[] => [...oldRSs, ...(newRS ? [newRS] : [])];
    const replace = (rs: RSObj) => {
      if (newRS && rs.metadata.name === newRS.metadata.name) newRS = rs;
      else oldRSs = oldRSs.map((x) => (x.metadata.name === rs.metadata.name ? rs : x));
    };
    const target = u.findActiveOrLatest(newRS, oldRSs);
    if (target) {
      if ((target.spec?.replicas ?? 0) !== u.specReplicas(this.d)) replace(await this.scaleReplicaSet(target, u.specReplicas(this.d)));
    } else if (u.isSaturated(this.d, newRS)) {
      for (const rs of u.filterActive(oldRSs)) replace(await this.scaleReplicaSet(rs, 0));
    } else if (u.isRollingUpdate(this.d)) {
      const before = u.replicaCount(u.filterActive(all()));
      const sizes = u.proportionalSizes(this.d, newRS, oldRSs);
      let after = 0;
      for (const s of sizes.values()) after += s;
      const op = after > before ? 'up' : 'down';
      for (const rs of u.filterActive(all())) {
        const size = sizes.get(rs.metadata.name);
        if (size !== undefined) replace(await this.scaleReplicaSet(rs, size, op));
      }
    }
    if (this.d.spec?.paused) await this.cleanup(oldRSs);
    const status = u.calculateStatus(this.d, all(), newRS, this.now);
    if (!sameStatus(this.d.status, status)) await this.writeStatus(status);
  }

  private async syncStatusOnly(rsList: RSObj[]): Promise<void> {
    const { newRS, oldRSs } = await this.getAll(rsList, false);
    const status = u.calculateStatus(this.d, [...oldRSs, newRS], newRS, this.now);
    if (!sameStatus(this.d.status, status)) await this.writeStatus(status);
  }

  private async checkPausedConditions(): Promise<void> {
    if (!u.hasProgressDeadline(this.d)) return;
    const cond = u.getCondition(this.d.status, 'Progressing');
    if (cond?.reason === u.TIMED_OUT_REASON) return;
    const pausedCond = cond?.reason === u.PAUSED_REASON;
    const status = clone(this.d.status ?? {});
    if (this.d.spec?.paused && !pausedCond) {
      u.setCondition(status, u.newCondition('Progressing', 'Unknown', u.PAUSED_REASON, 'Deployment is paused', this.now));
    } else if (!this.d.spec?.paused && pausedCond) {
      u.setCondition(status, u.newCondition('Progressing', 'Unknown', u.RESUMED_REASON, 'Deployment is resumed', this.now));
    } else {
      return;
    }
    await this.writeStatus(status);
  }

  /** cleanupDeployment: delete the oldest fully scaled-down ReplicaSets beyond revisionHistoryLimit. */
  private async cleanup(oldRSs: RSObj[]): Promise<void> {
    const limit = this.d.spec?.revisionHistoryLimit;
    if (limit === undefined || limit === null) return;
    const alive = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
    const diff = alive.length - limit;
    if (diff <= 0) return;
    const sorted = [...alive].sort((a, b) => u.revisionOf(a) - u.revisionOf(b) || (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    for (const rs of sorted.slice(0, diff)) {
      if ((rs.status?.replicas ?? 0) !== 0 || (rs.spec?.replicas ?? 0) !== 0 || (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0)) continue;
      try {
        await this.rsClient().delete(rs.metadata.name, { signal: this.signal, ...(rs.metadata.uid ? { preconditions: { uid: rs.metadata.uid } } : {}) });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  private async syncRolloutStatus(allRSs: (RSObj | undefined)[], newRS: RSObj | undefined): Promise<{ requeueAfterMs?: number } | void> {
    const d = this.d;
    const status = u.calculateStatus(d, allRSs, newRS, this.now);
    if (!u.hasProgressDeadline(d)) u.removeCondition(status, 'Progressing');
    const cur = u.getCondition(d.status, 'Progressing');
    const complete = status.replicas === status.updatedReplicas && cur?.reason === u.NEW_RS_AVAILABLE_REASON;
    if (u.hasProgressDeadline(d) && !complete) {
      const rsName = newRS?.metadata.name;
      if (u.deploymentComplete(d, status)) {
        const msg = rsName ? `ReplicaSet "${rsName}" has successfully progressed.` : 'Deployment has successfully progressed.';
        u.setCondition(status, u.newCondition('Progressing', 'True', u.NEW_RS_AVAILABLE_REASON, msg, this.now));
      } else if (u.deploymentProgressing(d, status)) {
        const msg = rsName ? `ReplicaSet "${rsName}" is progressing.` : 'Deployment is progressing.';
        const c = u.newCondition('Progressing', 'True', u.RS_UPDATED_REASON, msg, this.now);
        if (cur?.status === 'True' && cur.lastTransitionTime) c.lastTransitionTime = cur.lastTransitionTime;
        u.removeCondition(status, 'Progressing');
        u.setCondition(status, c);
      } else if (u.deploymentTimedOut(d, status, this.now)) {
        const msg = rsName ? `ReplicaSet "${rsName}" has timed out progressing.` : `Deployment "${d.metadata.name}" has timed out progressing.`;
        u.setCondition(status, u.newCondition('Progressing', 'False', u.TIMED_OUT_REASON, msg, this.now));
      }
    }
    // Surface a ReplicaSet's ReplicaFailure (e.g. quota) on the Deployment.
    const failure = allRSs.flatMap((rs) => rs?.status?.conditions ?? []).find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
    if (failure) u.setCondition(status, { type: 'ReplicaFailure', status: 'True', reason: failure.reason ?? 'FailedCreate', message: failure.message ?? '', lastUpdateTime: failure.lastTransitionTime ?? u.rfc3339(this.now), lastTransitionTime: failure.lastTransitionTime ?? u.rfc3339(this.now) });
    else u.removeCondition(status, 'ReplicaFailure');
    if (!sameStatus(d.status, status)) await this.writeStatus(status);
    return this.requeueStuck(status);
  }

  /** requeueStuckDeployment: look again when the progress deadline would pass. */
  private requeueStuck(status: DeploymentStatus): { requeueAfterMs?: number } | void {
    const c = u.getCondition(status, 'Progressing');
    if (!u.hasProgressDeadline(this.d) || !c || c.reason === u.TIMED_OUT_REASON || u.deploymentComplete(this.d, status)) return;
    const from = c.lastUpdateTime ? Date.parse(c.lastUpdateTime) : this.now;
    const after = from + (this.d.spec?.progressDeadlineSeconds ?? 600) * 1000 - this.now;
    return { requeueAfterMs: Math.max(1000, after + 1000) };
  }
}

function sameStatus(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  const norm = (s: DeploymentStatus | undefined) => ({
    observedGeneration: s?.observedGeneration ?? 0, replicas: s?.replicas ?? 0, updatedReplicas: s?.updatedReplicas ?? 0,
    readyReplicas: s?.readyReplicas ?? 0, availableReplicas: s?.availableReplicas ?? 0, unavailableReplicas: s?.unavailableReplicas ?? 0,
    collisionCount: s?.collisionCount ?? null, conditions: [...(s?.conditions ?? [])].sort((x, y) => x.type.localeCompare(y.type)),
  });
  return canonicalJson(norm(a)) === canonicalJson(norm(b));
}

