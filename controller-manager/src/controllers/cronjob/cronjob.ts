/**
 * CronJob controller (upstream pkg/controller/cronjob, the v2 controller): creates a Job
 * `<cronjob>-<scheduled minutes>` at each activation of spec.schedule (in spec.timeZone), honouring
 * suspend, startingDeadlineSeconds, concurrencyPolicy and the history limits, and requeues itself
 * at the next activation. Watches CronJobs and Jobs; writes Jobs, CronJob status and Events.
 * Time comes from the injected clock only.
 */
import {
  CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION, CronJobs, isAlreadyExists, isNotFound, isValidTimeZone, Jobs, parseCronSchedule,
  type CronJob, type CronJobStatus, type CronSchedule, type Job, type ObjectReference,
} from '@mk8s/api';
import { controllerOf, newControllerRef, objectKey, splitKey, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import { canonicalJson } from '../../util/hash.js';
import { clone, rfc3339, type Obj } from '../../util/meta.js';
import { isJobFinished } from '../job/job.js';
import { jobNameFor, mostRecentScheduleTime, nextScheduleDelayMs, rfc3339InZone } from './schedule.js';

export type CronJobObj = Obj<CronJob>;
export type JobObj = Obj<Job>;

const finishedCondition = (j: JobObj) => (j.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
const timeOf = (t: string | undefined): number | undefined => (t ? Date.parse(t) : undefined);

export class CronJobController extends BaseController {
  static readonly NAME = 'cronjob';
  readonly name = CronJobController.NAME;
  readonly cronJobs: SharedInformer<CronJobObj>;
  readonly jobs: SharedInformer<JobObj>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'cronjob');
    this.cronJobs = ctx.informers.informerFor<CronJobObj>(CronJobs);
    this.jobs = ctx.informers.informerFor<JobObj>(Jobs);
    this.cronJobs.addEventHandler({
      onAdd: (cj) => this.enqueue(objectKey(cj)),
      onUpdate: (_, cj) => this.enqueue(objectKey(cj)),
      onDelete: (cj) => this.queue.forget(objectKey(cj)),
    });
    const owner = (j: JobObj) => { const r = controllerOf(j); if (r?.kind === 'CronJob') this.enqueue(`${j.metadata.namespace}/${r.name}`); };
    this.jobs.addEventHandler({ onAdd: owner, onUpdate: (_, j) => owner(j), onDelete: owner });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const cached = this.cronJobs.lister.get(key);
    if (!cached) return;
    const { namespace } = splitKey(key);
    const cj = clone(cached);
    const jobs = this.jobs.lister.list(namespace).filter((j) => controllerOf(j)?.uid === cj.metadata.uid);
    const status: CronJobStatus = cj.status ??= {};
    const before = canonicalJson(cached.status ?? {});
    let requeueAfterMs: number | undefined;
    try {
      await this.reconcileActive(cj, jobs, signal);
      requeueAfterMs = await this.schedule(cj, signal);
    } finally {
      if (!status.active?.length) delete status.active;
      if (canonicalJson(status) !== before) {
        await this.ctx.client.resource<CronJobObj>(CronJobs, namespace).updateStatus(cj, { signal });
      }
    }
    await this.cleanupFinishedJobs(cj, this.jobs.lister.list(namespace).filter((j) => controllerOf(j)?.uid === cj.metadata.uid), signal);
    if (requeueAfterMs !== undefined) return { requeueAfterMs: Math.max(requeueAfterMs, 1) };
  }

  /**
   * The active list follows the Jobs: finished ones leave it (lastSuccessfulTime), missing ones go.
   * A running Job of ours that is not listed is not adopted (upstream syncCronJob): the live CronJob
   * is read first, as the cache may predate our own status write; if it does not list the Job either,
   * the Job was made by someone else (`kubectl create job --from=cronjob/x`) and only earns an
   * UnexpectedJob warning, so it neither counts for concurrencyPolicy nor shows as ACTIVE. A Job the
   * controller created but failed to record comes back through the AlreadyExists path of schedule().
   */
  private async reconcileActive(cj: CronJobObj, jobs: JobObj[], signal: AbortSignal): Promise<void> {
    const status = cj.status!;
    const active = status.active ??= [];
    let live: CronJobObj | undefined;
    for (const j of jobs) {
      const i = active.findIndex((r) => r.uid === j.metadata.uid);
      const fin = finishedCondition(j);
      if (i >= 0 && fin) {
        active.splice(i, 1);
        this.ctx.recorder.event(cj, 'Normal', 'SawCompletedJob', 'Saw completed job: %v, condition: %v', j.metadata.name, fin.type);
      } else if (i < 0 && !fin) {
        live ??= await this.ctx.client.resource<CronJobObj>(CronJobs, cj.metadata.namespace).get(cj.metadata.name, { signal });
        const ref = (live.status?.active ?? []).find((r) => r.uid === j.metadata.uid);
        if (ref) active.push(ref);
        else this.ctx.recorder.event(cj, 'Warning', 'UnexpectedJob', 'Saw a job that the controller did not create or forgot: %v', j.metadata.name);
      }
      if (fin?.type === 'Complete' && j.status?.completionTime) {
        const t = Date.parse(j.status.completionTime);
        const last = timeOf(status.lastSuccessfulTime);
        if (last === undefined || t > last) status.lastSuccessfulTime = rfc3339(t);
      }
    }
    const known = new Set(jobs.map((j) => j.metadata.uid));
    for (const ref of [...active]) {
      if (known.has(ref.uid)) continue;
      try {
        const live = await this.ctx.client.resource<JobObj>(Jobs, cj.metadata.namespace).get(ref.name!, { signal });
        if (live.metadata.uid === ref.uid) continue;
      } catch (err) { if (!isNotFound(err)) throw err; }
      active.splice(active.indexOf(ref), 1);
      this.ctx.recorder.event(cj, 'Normal', 'MissingJob', 'Active job went missing: %v', ref.name);
    }
  }

  /** syncCronJob's scheduling half: returns when to look again. */
  private async schedule(cj: CronJobObj, signal: AbortSignal): Promise<number | undefined> {
    const spec = cj.spec!;
    const status = cj.status!;
    if (cj.metadata.deletionTimestamp) return undefined;
    if (spec.timeZone && !isValidTimeZone(spec.timeZone)) {
      this.ctx.recorder.event(cj, 'Warning', 'UnknownTimeZone', 'invalid timeZone: %q', spec.timeZone);
      return undefined;
    }
    if (spec.suspend) return undefined;
    let sched: CronSchedule;
    try { sched = parseCronSchedule(spec.schedule, spec.timeZone ?? undefined); } catch (err) {
      this.ctx.recorder.event(cj, 'Warning', 'UnparseableSchedule', 'unparseable schedule: %q : %s', spec.schedule, (err as Error).message);
      return undefined;
    }
    const now = this.ctx.clock.now();
    const times = {
      creationMs: Date.parse(cj.metadata.creationTimestamp ?? rfc3339(now)),
      ...(status.lastScheduleTime ? { lastScheduleMs: Date.parse(status.lastScheduleTime) } : {}),
      ...(spec.startingDeadlineSeconds != null ? { startingDeadlineSeconds: spec.startingDeadlineSeconds } : {}),
    };
    const next = () => nextScheduleDelayMs({ creationMs: times.creationMs, ...(status.lastScheduleTime ? { lastScheduleMs: Date.parse(status.lastScheduleTime) } : {}) }, now, sched);
    const recent = mostRecentScheduleTime(times, now, sched, true);
    if (recent.missed === 'many') {
      this.ctx.recorder.event(cj, 'Warning', 'TooManyMissedTimes', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew');
    }
    const scheduled = recent.mostRecentMs;
    if (scheduled === undefined) return next();
    if (spec.startingDeadlineSeconds != null && scheduled + spec.startingDeadlineSeconds * 1000 < now) {
      this.ctx.recorder.event(cj, 'Warning', 'MissSchedule', 'Missed scheduled time to start a job: %s', rfc3339InZone(scheduled, spec.timeZone ?? undefined));
      return next();
    }
    const name = jobNameFor(cj.metadata.name, scheduled);
    if ((status.active ?? []).some((r) => r.name === name) || (status.lastScheduleTime && Date.parse(status.lastScheduleTime) === scheduled)) return next();
    const policy = spec.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && (status.active ?? []).length > 0) {
      this.ctx.recorder.event(cj, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      return next();
    }
    const jobClient = this.ctx.client.resource<JobObj>(Jobs, cj.metadata.namespace);
    if (policy === 'Replace') {
      for (const ref of [...(status.active ?? [])]) {
        try {
          await jobClient.delete(ref.name!, { signal, propagationPolicy: 'Background', ...(ref.uid ? { preconditions: { uid: ref.uid } } : {}) });
          this.ctx.recorder.event(cj, 'Normal', 'SuccessfulDelete', 'Deleted job %v', ref.name);
        } catch (err) {
          if (!isNotFound(err)) { this.ctx.recorder.event(cj, 'Warning', 'FailedDelete', 'Deleted job: %v', (err as Error).message); throw err; }
        }
        status.active!.splice(status.active!.indexOf(ref), 1);
      }
    }
    let created: JobObj;
    try {
      created = await jobClient.create(jobFromTemplate(cj, scheduled), { signal });
      this.ctx.recorder.event(cj, 'Normal', 'SuccessfulCreate', 'Created job %v', created.metadata.name);
    } catch (err) {
      if (!isAlreadyExists(err)) {
        this.ctx.recorder.event(cj, 'Warning', 'FailedCreate', 'Error creating job: %v', (err as Error).message);
        throw err;
      }
      // Created by an earlier sync whose status write was lost: adopt it as that run.
      created = await jobClient.get(name, { signal });
      if (controllerOf(created)?.uid !== cj.metadata.uid) return next();
    }
    if (!finishedCondition(created) && !(status.active ?? []).some((r) => r.uid === created.metadata.uid)) (status.active ??= []).push(jobRef(created));
    status.lastScheduleTime = rfc3339(scheduled);
    return next();
  }

  /** History limits: the oldest finished Jobs beyond successful/failedJobsHistoryLimit are deleted. */
  private async cleanupFinishedJobs(cj: CronJobObj, jobs: JobObj[], signal: AbortSignal): Promise<void> {
    const spec = cj.spec!;
    const byStart = (a: JobObj, b: JobObj) => (a.status?.startTime ?? a.metadata.creationTimestamp ?? '').localeCompare(b.status?.startTime ?? b.metadata.creationTimestamp ?? '');
    const groups: [string, number | undefined][] = [['Complete', spec.successfulJobsHistoryLimit ?? undefined], ['Failed', spec.failedJobsHistoryLimit ?? undefined]];
    for (const [type, limit] of groups) {
      if (limit === undefined) continue;
      const done = jobs.filter((j) => isJobFinished(j) && finishedCondition(j)?.type === type && !j.metadata.deletionTimestamp).sort(byStart);
      for (const j of done.slice(0, Math.max(0, done.length - limit))) {
        try {
          await this.ctx.client.resource<JobObj>(Jobs, cj.metadata.namespace).delete(j.metadata.name, { signal, propagationPolicy: 'Background', ...(j.metadata.uid ? { preconditions: { uid: j.metadata.uid } } : {}) });
          this.ctx.recorder.event(cj, 'Normal', 'SuccessfulDelete', 'Deleted job %v', j.metadata.name);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
  }
}

function jobRef(j: JobObj): ObjectReference {
  return { kind: 'Job', namespace: j.metadata.namespace ?? '', name: j.metadata.name, uid: j.metadata.uid ?? '', apiVersion: 'batch/v1', resourceVersion: j.metadata.resourceVersion ?? '' };
}

/** getJobFromTemplate2: the Job for one activation, named deterministically and owned by the CronJob. */
export function jobFromTemplate(cj: CronJobObj, scheduledMs: number): JobObj {
  const tpl = cj.spec?.jobTemplate;
  return {
    apiVersion: 'batch/v1', kind: 'Job',
    metadata: {
      name: jobNameFor(cj.metadata.name, scheduledMs),
      namespace: cj.metadata.namespace,
      labels: { ...(tpl?.metadata?.labels ?? {}) },
      annotations: { ...(tpl?.metadata?.annotations ?? {}), [CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339InZone(scheduledMs, cj.spec?.timeZone ?? undefined) },
      ownerReferences: [newControllerRef(cj, CronJobs)],
    },
    spec: clone(tpl?.spec ?? { template: { spec: { containers: [] } } }),
  } as JobObj;
}
