/**
 * Job controller (upstream pkg/controller/job, 1.32): runs pods until `completions` succeed
 * (or, without completions, until one succeeds and the rest finish), `parallelism` at a time,
 * in NonIndexed or Indexed mode. Watches Jobs and Pods; writes Pods (create with the
 * batch.kubernetes.io/job-tracking finalizer, delete, finalizer removal), Job status and Events.
 *
 * Counting is finalizer-based, as upstream: a finished pod keeps its finalizer until its uid is
 * recorded in status.uncountedTerminatedPods; only then is the finalizer removed, and only once
 * the pod no longer holds it does the uid move into status.succeeded / status.failed. A
 * controller killed at any point therefore resumes without losing or double-counting a pod.
 */
import {
  isNotFound, JOB_COMPLETION_INDEX_ANNOTATION, JOB_COMPLETION_INDEX_ENV, JOB_LABELS, JOB_TRACKING_FINALIZER,
  Jobs, labelSelectorFromObject, Pods, TerminalError, type Job, type JobCondition, type JobStatus, type ParsedLabelSelector, type Pod,
} from '@mk8s/api';
import { controllerOf, newControllerRef, objectKey, splitKey, type ResourceClient, type SharedInformer } from '@mk8s/client';
import { BaseController, slowStartBatch, type ControllerContext } from '../../controller.js';
import { ControllerExpectations } from '../../util/expectations.js';
import { canonicalJson } from '../../util/hash.js';
import { clone, rfc3339, type Obj } from '../../util/meta.js';
import { isPodReady } from '../../util/pods.js';
import { claimObjects } from '../../util/ref-manager.js';
import {
  deadlineRemainingMs, matchPodFailurePolicy, nextBackoffRecord, pastBackoffLimitOnFailure, remainingBackoffMs, wantActive,
  type BackoffRecord, type PolicyAction,
} from './decisions.js';
import { formatIndexes, parseIndexes } from './indexes.js';

export type JobObj = Obj<Job>;
export type PodObj = Obj<Pod>;

/** Upstream's MaxUncountedPods and MaxPodCreateDeletePerSync. */
export const MAX_UNCOUNTED_PODS = 500;
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;

const hasFinalizer = (p: PodObj): boolean => (p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
const isTerminal = (p: PodObj): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const isActive = (p: PodObj): boolean => !isTerminal(p) && !p.metadata.deletionTimestamp;
const isTerminating = (p: PodObj): boolean => !!p.metadata.deletionTimestamp && !isTerminal(p);
const isIndexed = (j: JobObj): boolean => j.spec?.completionMode === 'Indexed';
const condTrue = (j: JobObj, type: string): JobCondition | undefined => (j.status?.conditions ?? []).find((c) => c.type === type && c.status === 'True');
/** IsJobFinished: a Complete or Failed condition is True. */
export const isJobFinished = (j: { status?: JobStatus }): boolean => (j.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');

/** The completion index of a pod (annotation, then label); -1 when absent or malformed. */
export function completionIndex(p: PodObj): number {
  const v = p.metadata.annotations?.[JOB_COMPLETION_INDEX_ANNOTATION] ?? p.metadata.labels?.[JOB_LABELS.completionIndex];
  if (v === undefined || !/^\d+$/.test(v)) return -1;
  return Number(v);
}

/** isPodFailed: Failed, or (podReplacementPolicy TerminatingOrFailed) deleted before it succeeded. */
function isPodFailed(p: PodObj, job: JobObj): boolean {
  if (p.status?.phase === 'Failed') return true;
  if (job.spec?.podReplacementPolicy === 'Failed') return false;
  return !!p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded';
}

export class JobController extends BaseController {
  static readonly NAME = 'job';
  readonly name = JobController.NAME;
  readonly expectations: ControllerExpectations;
  readonly jobs: SharedInformer<JobObj>;
  readonly pods: SharedInformer<PodObj>;
  /** Pod uids whose finalizer this process removed and the informer has not yet shown without it (upstream's uidTrackingExpectations). */
  private readonly finalizerExpectations = new Map<string, Set<string>>();
  /** Per-Job pod failure back-off records (upstream's podBackoffStore). In memory: a new leader starts without back-off. */
  private readonly backoff = new Map<string, BackoffRecord>();

  constructor(ctx: ControllerContext) {
    super(ctx, 'job');
    this.expectations = new ControllerExpectations(ctx.clock);
    this.jobs = ctx.informers.informerFor<JobObj>(Jobs);
    this.pods = ctx.informers.informerFor<PodObj>(Pods);
    this.jobs.addEventHandler({
      onAdd: (j) => this.enqueue(objectKey(j)),
      onUpdate: (_, j) => this.enqueue(objectKey(j)),
      onDelete: (j) => { const k = objectKey(j); this.expectations.delete(k); this.backoff.delete(k); this.enqueue(k); },
    });
    this.pods.addEventHandler({
      onAdd: (p) => { const k = this.jobKeyOf(p); if (!k) return; if (!p.metadata.deletionTimestamp) this.expectations.creationObserved(k); this.enqueue(k); },
      onUpdate: (_, p) => { const k = this.jobKeyOf(p); if (!k) return; if (!hasFinalizer(p)) this.finalizerObserved(k, p); this.enqueue(k); },
      onDelete: (p) => { const k = this.jobKeyOf(p); if (!k) return; this.expectations.deletionObserved(k, objectKey(p)); this.finalizerObserved(k, p); this.enqueue(k); },
    });
  }

  /** The key of the Job named by pod's controllerRef (whether or not that Job still exists). */
  private jobKeyOf(p: PodObj): string | undefined {
    const ref = controllerOf(p);
    return ref?.kind === 'Job' && ref.apiVersion.startsWith('batch/') ? `${p.metadata.namespace}/${ref.name}` : undefined;
  }

  private finalizerObserved(key: string, p: PodObj): void {
    const s = this.finalizerExpectations.get(key);
    if (s && p.metadata.uid) { s.delete(p.metadata.uid); if (!s.size) this.finalizerExpectations.delete(key); }
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const { namespace, name } = splitKey(key);
    const podClient = this.ctx.client.resource<PodObj>(Pods, namespace);
    const cached = this.jobs.lister.get(key);
    if (!cached || isJobFinished(cached)) {
      // Gone or finished: no pod of it may keep the tracking finalizer (upstream's orphan pod cleanup).
      if (!cached) { this.expectations.delete(key); this.backoff.delete(key); this.finalizerExpectations.delete(key); } else this.backoff.delete(key);
      const stale = this.pods.lister.list(namespace).filter((p) => hasFinalizer(p) && controllerOf(p)?.kind === 'Job' && controllerOf(p)?.name === name
        && (!cached || controllerOf(p)?.uid === cached.metadata.uid || !this.jobs.lister.get(key)));
      await this.removeFinalizers(key, stale, podClient, signal);
      return;
    }
    const job = clone(cached);
    let selector: ParsedLabelSelector;
    try { selector = labelSelectorFromObject(job.spec?.selector); } catch (err) { throw new TerminalError(`invalid selector: ${(err as Error).message}`); }
    const satisfied = this.expectations.satisfied(key);
    const pods = await claimObjects({
      owner: job, ownerResource: Jobs, selector, candidates: this.pods.lister.list(namespace), client: podClient, signal,
      recheckOwner: async () => {
        const fresh = await this.ctx.client.resource<JobObj>(Jobs, namespace).get(name, { signal });
        if (fresh.metadata.uid !== job.metadata.uid) throw new Error(`original Job ${key} is gone: got uid ${fresh.metadata.uid}, wanted ${job.metadata.uid}`);
        if (fresh.metadata.deletionTimestamp) throw new Error(`${key} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
      },
    });
    const now = this.ctx.clock.now();
    const status: JobStatus = job.status ??= {};
    status.uncountedTerminatedPods ??= {};
    const uncounted = status.uncountedTerminatedPods;
    const uncSucceeded = new Set(uncounted.succeeded ?? []);
    const uncFailed = new Set(uncounted.failed ?? []);
    const expectedRm = this.finalizerExpectations.get(key) ?? new Set<string>();
    const completions = job.spec?.completions ?? undefined;
    const indexed = isIndexed(job);
    const validIndex = (p: PodObj): boolean => { const ix = completionIndex(p); return ix >= 0 && ix < (completions ?? 0); };

    if (!status.startTime && !job.spec?.suspend) status.startTime = rfc3339(now);

    // Pods finished since the last count: they hold the finalizer and are in no uncounted list.
    const fresh = (p: PodObj) => hasFinalizer(p) && !uncSucceeded.has(p.metadata.uid!) && !uncFailed.has(p.metadata.uid!) && !expectedRm.has(p.metadata.uid!) && (!indexed || validIndex(p));
    const newSucceeded = pods.filter((p) => fresh(p) && p.status?.phase === 'Succeeded');
    const newFailed = pods.filter((p) => fresh(p) && isPodFailed(p, job));
    const countedNewFailed = newFailed.filter((p) => matchPodFailurePolicy(job.spec?.podFailurePolicy, p).countFailed).length;
    const prevSucceededIndexes = indexed ? parseIndexes(status.completedIndexes, completions ?? 0) : [];
    const succeededIndexes = new Set(prevSucceededIndexes);
    if (indexed) for (const p of newSucceeded) succeededIndexes.add(completionIndex(p));
    const succeeded = indexed ? succeededIndexes.size : (status.succeeded ?? 0) + newSucceeded.length + uncSucceeded.size;
    const failed = (status.failed ?? 0) + countedNewFailed + uncFailed.size;
    const backoffRec = nextBackoffRecord(this.backoff.get(key), newSucceeded, newFailed, now);

    let activePods = pods.filter(isActive);
    let terminating = pods.filter(isTerminating).length;

    // The finished condition to reach, if any (upstream's jobCtx.finishedCondition).
    let finished: JobCondition | undefined;
    let requeueAfterMs: number | undefined;
    const failureTarget = condTrue(job, 'FailureTarget');
    if (failureTarget) {
      finished = this.condition('Failed', failureTarget.reason ?? '', failureTarget.message ?? '');
    } else {
      const failMessage = job.spec?.podFailurePolicy
        ? pods.filter((p) => hasFinalizer(p) && p.status?.phase === 'Failed').map((p) => matchPodFailurePolicy(job.spec?.podFailurePolicy, p)).find((m) => m.action === 'FailJob')?.message
        : undefined;
      if (failMessage) finished = this.condition('FailureTarget', 'PodFailurePolicy', failMessage);
    }
    if (!finished && condTrue(job, 'SuccessCriteriaMet')) finished = this.condition('Complete', condTrue(job, 'SuccessCriteriaMet')!.reason ?? '', condTrue(job, 'SuccessCriteriaMet')!.message ?? '');
    if (!finished) {
      const remaining = deadlineRemainingMs(job, now);
      if (failed > (job.spec?.backoffLimit ?? 6) || pastBackoffLimitOnFailure(job, pods)) {
        finished = this.condition('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
      } else if (remaining !== undefined && remaining <= 0) {
        finished = this.condition('FailureTarget', 'DeadlineExceeded', 'Job was active longer than specified deadline');
      } else if (remaining !== undefined) {
        requeueAfterMs = remaining;
      }
    }

    let manageErr: unknown;
    /** Pods created in this sync: active already, though the informer has not seen them (manageJob's active += diff). */
    let created = 0;
    let suspendEvent: [string, string] | undefined;
    if (finished && finished.type !== 'Complete') {
      // Failing: stop every active pod (finalizers kept: the pods are counted as failed below).
      try { activePods = await this.deletePods(key, job, activePods, podClient, signal, false); } catch (err) { manageErr = err; }
      terminating = pods.filter((p) => isTerminating(p) || (isActive(p) && !activePods.includes(p))).length;
    } else if (!finished) {
      if (satisfied && !job.metadata.deletionTimestamp) {
        try {
          const r = await this.manageJob(key, job, activePods, succeeded, succeededIndexes, backoffRec, podClient, signal);
          activePods = r.active;
          created = r.created ?? 0;
          if (r.requeueAfterMs !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, r.requeueAfterMs);
        } catch (err) { manageErr = err; }
        // Suspended / resumed transitions happen only in a sync that managed pods.
        const conds = status.conditions ??= [];
        const susp = conds.find((c) => c.type === 'Suspended');
        if (job.spec?.suspend) {
          if (susp?.status !== 'True') { this.setCondition(conds, 'Suspended', 'True', 'JobSuspended', 'Job suspended'); suspendEvent = ['Suspended', 'Job suspended']; }
        } else if (susp?.status === 'True') {
          this.setCondition(conds, 'Suspended', 'False', 'JobResumed', 'Job resumed');
          suspendEvent = ['Resumed', 'Job resumed'];
          // activeDeadlineSeconds counts continuous activity: a resumed Job starts again.
          status.startTime = rfc3339(now);
        }
      }
      const active = activePods.length + created;
      const complete = completions === undefined || completions === null ? succeeded > 0 && active === 0 : succeeded >= completions && active === 0;
      if (complete) finished = this.condition('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods');
    }

    status.active = activePods.length + created;
    status.ready = activePods.filter(isPodReady).length;
    status.terminating = terminating;
    if (!status.conditions?.length) delete status.conditions;

    const result = await this.trackAndRemoveFinalizers(key, job, pods, finished, { uncSucceeded, uncFailed, expectedRm, succeededIndexes, podClient, signal });
    if (result.counted) this.backoff.set(key, backoffRec);
    if (suspendEvent) this.ctx.recorder.event(job, 'Normal', suspendEvent[0], suspendEvent[1]);
    if (manageErr) throw manageErr;
    if (requeueAfterMs !== undefined && !result.finished) return { requeueAfterMs: Math.max(requeueAfterMs, 1) };
  }

  /** manageJob: create or delete pods toward wantActive. Returns the active pods left. */
  private async manageJob(key: string, job: JobObj, active: PodObj[], succeeded: number, succeededIndexes: Set<number>, backoffRec: BackoffRecord,
    podClient: ResourceClient<PodObj>, signal: AbortSignal): Promise<{ active: PodObj[]; created?: number; requeueAfterMs?: number }> {
    const completions = job.spec?.completions ?? 0;
    const indexed = isIndexed(job);
    let keep = active;
    if (indexed) {
      // Pods of an index out of range, already succeeded, or doubled up go first (appendDuplicatedIndexPodsForRemoval).
      const seen = new Set<number>();
      const extra: PodObj[] = [];
      for (const p of [...active].sort((a, b) => (isPodReady(b) ? 1 : 0) - (isPodReady(a) ? 1 : 0))) {
        const ix = completionIndex(p);
        if (ix < 0 || ix >= completions || succeededIndexes.has(ix) || seen.has(ix)) extra.push(p); else seen.add(ix);
      }
      if (extra.length) keep = await this.deletePods(key, job, active, podClient, signal, true, extra);
    }
    const want = wantActive(job, succeeded, keep.length);
    if (keep.length > want) {
      // Not-ready and newest pods first (activePodsForRemoval).
      const ranked = [...keep].sort((a, b) => (isPodReady(a) ? 1 : 0) - (isPodReady(b) ? 1 : 0) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''));
      const victims = ranked.slice(0, Math.min(keep.length - want, MAX_POD_CREATE_DELETE_PER_SYNC));
      return { active: await this.deletePods(key, job, keep, podClient, signal, true, victims) };
    }
    if (keep.length === want) return { active: keep };
    const wait = remainingBackoffMs(backoffRec, this.ctx.clock.now());
    if (wait > 0) return { active: keep, requeueAfterMs: wait };
    let diff = Math.min(want - keep.length, MAX_POD_CREATE_DELETE_PER_SYNC);
    let indexes: number[] = [];
    if (indexed) {
      const busy = new Set(keep.map(completionIndex));
      for (let i = 0; i < completions && indexes.length < diff; i++) if (!succeededIndexes.has(i) && !busy.has(i)) indexes.push(i);
      diff = indexes.length;
    }
    if (diff <= 0) return { active: keep };
    this.expectations.expectCreations(key, diff);
    let next = 0;
    const res = await slowStartBatch(diff, 1, async () => {
      const ix = indexed ? indexes[next++] : undefined;
      try {
        const created = await podClient.create(podForJob(job, ix), { signal });
        this.ctx.recorder.event(job, 'Normal', 'SuccessfulCreate', 'Created pod: %v', created.metadata.name);
      } catch (err) {
        this.expectations.creationObserved(key);
        this.ctx.recorder.event(job, 'Warning', 'FailedCreate', 'Error creating: %v', (err as Error).message);
        throw err;
      }
    });
    const skipped = diff - res.successes - (res.error !== undefined ? 1 : 0);
    for (let i = 0; i < skipped; i++) this.expectations.creationObserved(key);
    if (res.error !== undefined) throw res.error;
    return { active: keep, created: res.successes };
  }

  /**
   * Deletes victims (default: all of active); returns the active pods left. dropFinalizer:
   * pods removed to scale down or suspend lose the finalizer first so they are never counted
   * (upstream deleteJobPods); pods of a failing Job keep it and count as failed.
   */
  private async deletePods(key: string, job: JobObj, active: PodObj[], podClient: ResourceClient<PodObj>, signal: AbortSignal, dropFinalizer: boolean, victims: PodObj[] = active): Promise<PodObj[]> {
    if (!victims.length) return active;
    this.expectations.expectDeletions(key, victims.map(objectKey));
    const gone = new Set<PodObj>();
    const errors: unknown[] = [];
    await Promise.all(victims.map(async (p) => {
      try {
        if (dropFinalizer && hasFinalizer(p)) await this.removeFinalizers(key, [p], podClient, signal);
        await podClient.delete(p.metadata.name, { signal, ...(p.metadata.uid ? { preconditions: { uid: p.metadata.uid } } : {}) });
        gone.add(p);
        this.ctx.recorder.event(job, 'Normal', 'SuccessfulDelete', 'Deleted pod: %v', p.metadata.name);
      } catch (err) {
        this.expectations.deletionObserved(key, objectKey(p));
        if (isNotFound(err)) { gone.add(p); return; }
        this.ctx.recorder.event(job, 'Warning', 'FailedDelete', 'Error deleting: %v', (err as Error).message);
        errors.push(err);
      }
    }));
    if (errors.length) throw errors[0];
    return active.filter((p) => !gone.has(p));
  }

  /** Removes the tracking finalizer from pods; returns the uids that no longer hold it. */
  private async removeFinalizers(key: string, pods: readonly PodObj[], podClient: ResourceClient<PodObj>, signal: AbortSignal): Promise<{ removed: Set<string>; error?: unknown }> {
    const removed = new Set<string>();
    let error: unknown;
    await Promise.all(pods.map(async (p) => {
      try {
        await podClient.patch(p.metadata.name, 'strategic', { metadata: { '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER] } }, { signal });
      } catch (err) {
        if (!isNotFound(err)) { error ??= err; return; }
      }
      removed.add(p.metadata.uid!);
      let s = this.finalizerExpectations.get(key);
      if (!s) this.finalizerExpectations.set(key, (s = new Set()));
      s.add(p.metadata.uid!);
    }));
    return error === undefined ? { removed } : { removed, error };
  }

  /**
   * trackJobStatusAndRemoveFinalizers: record finished pods in uncountedTerminatedPods (write 1),
   * remove their finalizers, move the uids that no longer hold one into the counters, and reach
   * the finished condition once nothing is left to count or to terminate (write 2).
   */
  private async trackAndRemoveFinalizers(key: string, job: JobObj, pods: PodObj[], finished: JobCondition | undefined,
    o: { uncSucceeded: Set<string>; uncFailed: Set<string>; expectedRm: Set<string>; succeededIndexes: Set<number>; podClient: ResourceClient<PodObj>; signal: AbortSignal }): Promise<{ counted: boolean; finished: boolean }> {
    const status = job.status!;
    const indexed = isIndexed(job);
    const completions = job.spec?.completions ?? 0;
    const withFinalizer = new Set<string>();
    for (const p of pods) if (hasFinalizer(p) || o.expectedRm.has(p.metadata.uid!)) withFinalizer.add(p.metadata.uid!);
    const oldSucceeded = status.succeeded ?? 0, oldFailed = status.failed ?? 0;
    cleanUncounted(status, withFinalizer);
    const unc = status.uncountedTerminatedPods!;
    const toRemove: PodObj[] = [];
    const failing = finished !== undefined && finished.type !== 'SuccessCriteriaMet' && finished.type !== 'Complete';
    const policyCounts: Partial<Record<PolicyAction, number>> = {};
    let reachedMax = false;
    const sorted = indexed ? [...pods].sort((a, b) => completionIndex(a) - completionIndex(b)) : pods;
    for (const p of sorted) {
      const uid = p.metadata.uid!;
      if (!hasFinalizer(p) || o.expectedRm.has(uid)) continue;
      const consideredFailed = isPodFailed(p, job);
      // canRemoveFinalizer: the Job is finishing or being deleted, or the pod succeeded or failed.
      if (!(job.metadata.deletionTimestamp || finished || p.status?.phase === 'Succeeded' || consideredFailed)) continue;
      toRemove.push(p);
      const ix = completionIndex(p);
      if (p.status?.phase === 'Succeeded' && !o.uncFailed.has(uid)) {
        if (indexed) { if (ix >= 0 && ix < completions) o.succeededIndexes.add(ix); }
        else if (!(unc.succeeded ?? []).includes(uid)) (unc.succeeded ??= []).push(uid);
      } else if (consideredFailed || failing) {
        // A finishing (failed) Job counts every pod it stops as failed.
        if (!(unc.failed ?? []).includes(uid) && (!indexed || (ix >= 0 && ix < completions))) {
          const m = matchPodFailurePolicy(job.spec?.podFailurePolicy, p);
          if (m.action) policyCounts[m.action] = (policyCounts[m.action] ?? 0) + 1;
          if (m.countFailed) (unc.failed ??= []).push(uid);
        }
      }
      if ((unc.succeeded ?? []).length + (unc.failed ?? []).length >= MAX_UNCOUNTED_PODS) { reachedMax = true; break; }
    }
    if (indexed) {
      status.completedIndexes = formatIndexes(o.succeededIndexes);
      status.succeeded = o.succeededIndexes.size;
    }
    // The interim condition (FailureTarget / SuccessCriteriaMet) is written before finalizers go.
    let final: JobCondition | undefined = finished;
    if (finished && (finished.type === 'FailureTarget' || finished.type === 'SuccessCriteriaMet')) {
      const conds = status.conditions ??= [];
      if (!conds.some((c) => c.type === finished.type && c.status === 'True')) conds.push(finished);
      final = this.condition(finished.type === 'FailureTarget' ? 'Failed' : 'Complete', finished.reason ?? '', finished.message ?? '');
    }
    // Write 1: uncounted uids, interim conditions, active/ready/terminating.
    let cur = await this.writeStatus(job, this.jobs.lister.get(key)?.status, o.signal);
    const baseline = clone(cur.status);
    let counted = cur !== job || !toRemove.length;
    if (toRemove.length) {
      const { removed, error } = await this.removeFinalizers(key, toRemove, o.podClient, o.signal);
      for (const uid of removed) withFinalizer.delete(uid);
      cleanUncounted(cur.status!, withFinalizer);
      if (error) {
        await this.writeStatus(cur, baseline, o.signal);
        throw error;
      }
      counted = true;
    }
    // enactJobFinished: only once nothing is left uncounted, terminating or over the cap.
    const st = cur.status!;
    const left = (st.uncountedTerminatedPods?.succeeded ?? []).length + (st.uncountedTerminatedPods?.failed ?? []).length;
    let done = false;
    if (final && !reachedMax && left === 0 && (st.terminating ?? 0) === 0 && (final.type !== 'Failed' || (st.active ?? 0) === 0)) {
      const conds = st.conditions ??= [];
      this.setCondition(conds, final.type, 'True', final.reason ?? '', final.message ?? '');
      if (final.type === 'Complete') st.completionTime = rfc3339(this.ctx.clock.now());
      done = true;
    }
    cur = await this.writeStatus(cur, baseline, o.signal);
    if (done) {
      if (final!.type === 'Complete') this.ctx.recorder.event(cur, 'Normal', 'Completed', 'Job completed');
      else this.ctx.recorder.event(cur, 'Warning', final!.reason ?? 'Failed', final!.message ?? '');
    }
    if ((st.succeeded ?? 0) !== oldSucceeded || (st.failed ?? 0) !== oldFailed) this.log.debug({ job: key, succeeded: st.succeeded, failed: st.failed, policy: policyCounts }, 'Counted finished pods');
    return { counted, finished: done };
  }

  /** UpdateStatus when job.status differs from baseline (the status the server last held); returns a private copy of what was written, or job. */
  private async writeStatus(job: JobObj, baseline: JobStatus | undefined, signal: AbortSignal): Promise<JobObj> {
    if (canonicalJson(normStatus(baseline)) === canonicalJson(normStatus(job.status))) return job;
    return clone(await this.ctx.client.resource<JobObj>(Jobs, job.metadata.namespace).updateStatus(job, { signal }));
  }

  private condition(type: string, reason: string, message: string): JobCondition {
    const t = rfc3339(this.ctx.clock.now());
    return { type, status: 'True', reason, message, lastProbeTime: t, lastTransitionTime: t };
  }

  /** ensureJobConditionStatus: sets or adds a condition; the transition time moves only when status changes. */
  private setCondition(conds: JobCondition[], type: string, status: string, reason: string, message: string): void {
    const t = rfc3339(this.ctx.clock.now());
    const c = conds.find((x) => x.type === type);
    if (!c) { conds.push({ type, status, reason, message, lastProbeTime: t, lastTransitionTime: t }); return; }
    if (c.status !== status) c.lastTransitionTime = t;
    c.status = status; c.reason = reason; c.message = message; c.lastProbeTime = t;
  }
}

/** cleanUncountedPodsWithoutFinalizers: uids whose pods no longer hold the finalizer move into the counters. */
function cleanUncounted(status: JobStatus, withFinalizer: Set<string>): boolean {
  const unc = status.uncountedTerminatedPods ??= {};
  let changed = false;
  const s = (unc.succeeded ?? []).filter((u) => withFinalizer.has(u));
  if (s.length !== (unc.succeeded ?? []).length) { status.succeeded = (status.succeeded ?? 0) + (unc.succeeded ?? []).length - s.length; changed = true; }
  const f = (unc.failed ?? []).filter((u) => withFinalizer.has(u));
  if (f.length !== (unc.failed ?? []).length) { status.failed = (status.failed ?? 0) + (unc.failed ?? []).length - f.length; changed = true; }
  if (s.length) unc.succeeded = s; else delete unc.succeeded;
  if (f.length) unc.failed = f; else delete unc.failed;
  return changed;
}

function normStatus(s: JobStatus | undefined): unknown {
  const out: Record<string, unknown> = { ...(s ?? {}) };
  for (const k of ['active', 'succeeded', 'failed', 'ready', 'terminating']) if (!out[k]) delete out[k];
  out['conditions'] = (s?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason }));
  return out;
}

/**
 * The pod a Job creates: the template, generateName "<job>-" (Indexed: "<job>-<index>-" with the
 * index annotation and label, JOB_COMPLETION_INDEX from the downward API, hostname
 * "<job>-<index>"), the Job as controller, and the tracking finalizer.
 */
export function podForJob(job: JobObj, index?: number): PodObj {
  const t = job.spec?.template;
  const labels: Record<string, string> = { ...(t?.metadata?.labels ?? {}) };
  const annotations: Record<string, string> = { ...(t?.metadata?.annotations ?? {}) };
  const spec = clone(t?.spec ?? { containers: [] });
  let generateName = `${job.metadata.name}-`;
  if (index !== undefined) {
    annotations[JOB_COMPLETION_INDEX_ANNOTATION] = String(index);
    labels[JOB_LABELS.completionIndex] = String(index);
    generateName = `${job.metadata.name}-${index}-`;
    spec.hostname ??= `${job.metadata.name}-${index}`.slice(0, 63).replace(/[-.]+$/, '');
    const env = { name: JOB_COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX_ANNOTATION}']` } } };
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      if (!(c.env ?? []).some((e) => e.name === JOB_COMPLETION_INDEX_ENV)) c.env = [...(c.env ?? []), env];
    }
  }
  const meta: NonNullable<Pod['metadata']> = {
    generateName,
    namespace: job.metadata.namespace ?? 'default',
    labels,
    ownerReferences: [newControllerRef(job, Jobs)],
    finalizers: [...(t?.metadata?.finalizers ?? []), JOB_TRACKING_FINALIZER],
  };
  if (Object.keys(annotations).length) meta.annotations = annotations;
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec } as PodObj;
}
