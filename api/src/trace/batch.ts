/**
 * `mkctl trace job/x` and `mkctl trace cronjob/x`, pure. A Job's chain: stored → pods (how many
 * run, succeeded, failed; the pod holding things up and why) → the Job's verdict (Complete, or the
 * Failed reason). A CronJob's: stored (schedule, suspend, last schedule) → its last Job → that
 * Job's chain.
 */
import type { Event, Pod } from '../types.js';
import type * as batch from 'kubernetes-types/batch/v1.js';
import type { Link } from './link.js';

const owned = <T extends { metadata?: { ownerReferences?: { controller?: boolean; uid: string }[] } }>(xs: T[], uid: string | undefined) =>
  xs.filter((x) => x.metadata?.ownerReferences?.some((o) => o.controller && o.uid === uid));
const cond = (j: batch.Job, type: string) => (j.status?.conditions ?? []).find((c) => c.type === type && c.status === 'True');
const waiting = (p: Pod) => (p.status?.containerStatuses ?? []).map((c) => c.state?.waiting?.reason).find(Boolean);
const exitOf = (p: Pod) => (p.status?.containerStatuses ?? []).map((c) => c.state?.terminated).find((t) => t && t.exitCode !== 0);

export function diagnoseJob(job: batch.Job, pods: Pod[], events: Event[] = []): Link[] {
  const m = job.metadata ?? {};
  const s = job.status ?? {};
  const name = m.name ?? '';
  const links: Link[] = [];
  const want = job.spec?.completions ?? 1;
  links.push({ step: 'stored', status: 'ok', evidence: `job ${name}: ${s.succeeded ?? 0}/${job.spec?.completions ?? 1} succeeded, ${s.active ?? 0} active, ${s.failed ?? 0} failed (backoffLimit ${job.spec?.backoffLimit ?? 6})${job.spec?.completionMode === 'Indexed' ? `, completed indexes ${s.completedIndexes || '<none>'}` : ''}` });
  if (job.spec?.suspend) { links.push({ step: 'pods', status: 'info', evidence: 'suspended: no pods run until spec.suspend is false' }); return links; }
  const mine = owned(pods, m.uid);
  const running = mine.filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  const failed = mine.filter((p) => p.status?.phase === 'Failed');
  const finished = cond(job, 'Complete') ?? cond(job, 'Failed');
  if (!mine.length && !finished) {
    const fc = events.find((e) => e.reason === 'FailedCreate');
    links.push({ step: 'pods', status: 'broken', evidence: fc ? `no pods: ${fc.message}` : 'no pods created yet', owner: 'controller-manager (job)', hint: `mkctl describe job ${name}` });
    return links;
  }
  const stuck = running.find((p) => !p.spec?.nodeName) ?? running.find((p) => /BackOff|Err/.test(waiting(p) ?? ''));
  if (stuck && !finished) {
    const why = stuck.spec?.nodeName ? waiting(stuck) : 'not scheduled';
    links.push({ step: 'pods', status: stuck.spec?.nodeName ? 'broken' : 'waiting', evidence: `pod ${stuck.metadata?.name} ${why}`, owner: stuck.spec?.nodeName ? 'kubelet' : 'scheduler', hint: `mkctl describe pod ${stuck.metadata?.name}` });
  } else {
    const last = failed.at(-1);
    const t = last ? exitOf(last) : undefined;
    links.push({ step: 'pods', status: 'ok', evidence: `${mine.length} pods: ${running.length} running, ${mine.filter((p) => p.status?.phase === 'Succeeded').length} succeeded, ${failed.length} failed${t ? ` (last failure: ${last!.metadata?.name} exit code ${t.exitCode}${t.reason ? ` ${t.reason}` : ''})` : ''}` });
  }
  const f = cond(job, 'Failed') ?? cond(job, 'FailureTarget');
  if (cond(job, 'Complete')) links.push({ step: 'complete', status: 'ok', evidence: `Complete at ${s.completionTime ?? '?'}` });
  else if (f) links.push({ step: 'complete', status: 'broken', evidence: `${f.type} ${f.reason}: ${f.message}`, owner: 'controller-manager (job)', hint: `mkctl logs ${failed.at(-1)?.metadata?.name ? `pod/${failed.at(-1)!.metadata!.name}` : `job/${name}`}` });
  else {
    const backoff = failed.length > 0 && running.length < Math.min(job.spec?.parallelism ?? 1, want - (s.succeeded ?? 0));
    links.push({ step: 'complete', status: 'waiting', evidence: backoff ? `${s.failed ?? 0} failures so far: re-creating pods after the back-off (10 s, doubling)` : `${want - (s.succeeded ?? 0)} completions to go`, owner: 'controller-manager (job)' });
  }
  return links;
}

export function diagnoseCronJob(cj: batch.CronJob, jobs: batch.Job[], pods: Pod[], events: Event[] = []): Link[] {
  const m = cj.metadata ?? {};
  const s = cj.status ?? {};
  const links: Link[] = [{ step: 'stored', status: 'ok', evidence: `cronjob ${m.name}: schedule "${cj.spec?.schedule}"${cj.spec?.timeZone ? ` in ${cj.spec.timeZone}` : ''}, ${cj.spec?.concurrencyPolicy ?? 'Allow'}, last schedule ${s.lastScheduleTime ?? 'never'}, last success ${s.lastSuccessfulTime ?? 'never'}, ${(s.active ?? []).length} active` }];
  if (cj.spec?.suspend) { links.push({ step: 'schedule', status: 'info', evidence: 'suspended: no new Jobs until spec.suspend is false' }); return links; }
  const warn = events.filter((e) => e.type === 'Warning').at(-1);
  const mine = owned(jobs, m.uid).sort((a, b) => (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? ''));
  const last = mine.at(-1);
  if (!last) {
    links.push(warn ? { step: 'last job', status: 'broken', evidence: `no Job: ${warn.reason}: ${warn.message}`, owner: 'controller-manager (cronjob)' }
      : { step: 'last job', status: 'waiting', evidence: 'no Job yet: waiting for the next activation', owner: 'controller-manager (cronjob)' });
    return links;
  }
  links.push({ step: 'last job', status: 'ok', evidence: `job ${last.metadata?.name}${warn ? ` (latest warning: ${warn.reason}: ${warn.message})` : ''}` });
  for (const l of diagnoseJob(last, pods)) links.push({ ...l, step: `job ${l.step}` });
  return links;
}
