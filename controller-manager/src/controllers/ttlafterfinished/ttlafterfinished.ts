/**
 * TTL-after-finished controller (upstream pkg/controller/ttlafterfinished): deletes a finished
 * Job (Complete or Failed) ttlSecondsAfterFinished after it finished, in the foreground so its
 * pods go first. Watches Jobs; writes Job deletions. Before deleting it re-reads the Job from
 * the apiserver, so a TTL changed meanwhile (or a Job re-created under the same name) is honoured.
 */
import { isNotFound, Jobs, type Job } from '@mk8s/api';
import { objectKey, splitKey, type SharedInformer } from '@mk8s/client';
import { BaseController, type ControllerContext } from '../../controller.js';
import type { Obj } from '../../util/meta.js';

export type JobObj = Obj<Job>;

/** When the Job finished (completionTime, else the finished condition's transition); undefined while running. */
export function finishTimeMs(j: Pick<Job, 'status'>): number | undefined {
  const c = (j.status?.conditions ?? []).find((x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True');
  if (!c) return undefined;
  if (c.type === 'Complete' && j.status?.completionTime) return Date.parse(j.status.completionTime);
  return c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : undefined;
}

/** ms until j expires (≤ 0: due now); undefined when it has no TTL or has not finished. */
export function timeLeftMs(j: Pick<Job, 'spec' | 'status'>, nowMs: number): number | undefined {
  const ttl = j.spec?.ttlSecondsAfterFinished;
  if (ttl === undefined || ttl === null) return undefined;
  const fin = finishTimeMs(j);
  return fin === undefined ? undefined : fin + ttl * 1000 - nowMs;
}

export class TTLAfterFinishedController extends BaseController {
  static readonly NAME = 'ttl-after-finished';
  readonly name = TTLAfterFinishedController.NAME;
  readonly jobs: SharedInformer<JobObj>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'ttl_jobs_to_delete');
    this.jobs = ctx.informers.informerFor<JobObj>(Jobs);
    const add = (j: JobObj) => { if (!j.metadata.deletionTimestamp && timeLeftMs(j, 0) !== undefined) this.enqueue(objectKey(j)); };
    this.jobs.addEventHandler({ onAdd: add, onUpdate: (_, j) => add(j) });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> {
    const j = this.jobs.lister.get(key);
    if (!j || j.metadata.deletionTimestamp) return;
    const left = timeLeftMs(j, this.ctx.clock.now());
    if (left === undefined) return;
    if (left > 0) return { requeueAfterMs: left };
    const { namespace, name } = splitKey(key);
    const client = this.ctx.client.resource<JobObj>(Jobs, namespace);
    let fresh: JobObj;
    try { fresh = await client.get(name, { signal }); } catch (err) { if (isNotFound(err)) return; throw err; }
    if (fresh.metadata.deletionTimestamp) return;
    const freshLeft = timeLeftMs(fresh, this.ctx.clock.now());
    if (freshLeft === undefined) return;
    if (freshLeft > 0) return { requeueAfterMs: freshLeft };
    try {
      await client.delete(name, { signal, propagationPolicy: 'Foreground', ...(fresh.metadata.uid ? { preconditions: { uid: fresh.metadata.uid } } : {}) });
      this.log.info({ job: key }, 'Deleted expired Job');
    } catch (err) { if (!isNotFound(err)) throw err; }
  }
}
