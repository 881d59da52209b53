/** `describe` for Jobs and CronJobs, after kubectl's describe.go (describeJob, describeCronJob). */
import type * as batch from 'kubernetes-types/batch/v1.js';
import { humanDuration } from '@mk8s/api';
import { describePodTemplate } from './describers.js';
import { describeEvents, formatLabelSelector, LEVEL_0, PrefixWriter, printAnnotationsMultiline, printLabelsMultiline, rfc1123z, type EventLike } from './prefix-writer.js';

const orUnset = (v: unknown): string => (v === undefined || v === null ? '<unset>' : String(v));

export function describeJob(job: batch.Job, events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = job.metadata ?? {};
  const spec = job.spec;
  const s = job.status ?? {};
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  w.write(LEVEL_0, `Selector:\t${formatLabelSelector(spec?.selector)}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `Parallelism:\t${orUnset(spec?.parallelism)}\n`);
  w.write(LEVEL_0, `Completions:\t${orUnset(spec?.completions)}\n`);
  w.write(LEVEL_0, `Completion Mode:\t${spec?.completionMode ?? 'NonIndexed'}\n`);
  w.write(LEVEL_0, `Suspend:\t${spec?.suspend === true}\n`);
  w.write(LEVEL_0, `Backoff Limit:\t${orUnset(spec?.backoffLimit)}\n`);
  if (spec?.ttlSecondsAfterFinished != null) w.write(LEVEL_0, `TTL Seconds After Finished:\t${spec.ttlSecondsAfterFinished}\n`);
  if (s.startTime) w.write(LEVEL_0, `Start Time:\t${rfc1123z(s.startTime)}\n`);
  if (s.completionTime) w.write(LEVEL_0, `Completed At:\t${rfc1123z(s.completionTime)}\n`);
  if (s.startTime) w.write(LEVEL_0, `Duration:\t${humanDuration((s.completionTime ? Date.parse(s.completionTime) : now) - Date.parse(s.startTime))}\n`);
  if (spec?.activeDeadlineSeconds != null) w.write(LEVEL_0, `Active Deadline Seconds:\t${spec.activeDeadlineSeconds}s\n`);
  w.write(LEVEL_0, `Pods Statuses:\t${s.active ?? 0} Active (${s.ready ?? 0} Ready) / ${s.succeeded ?? 0} Succeeded / ${s.failed ?? 0} Failed\n`);
  if (spec?.completionMode === 'Indexed') w.write(LEVEL_0, `Completed Indexes:\t${s.completedIndexes || '<none>'}\n`);
  describePodTemplate(w, spec?.template);
  if (events) describeEvents(w, events, now);
  return w.toString();
}

export function describeCronJob(cj: batch.CronJob, events: EventLike[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const m = cj.metadata ?? {};
  const spec = cj.spec;
  const js = spec?.jobTemplate?.spec;
  w.write(LEVEL_0, `Name:\t${m.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${m.namespace ?? ''}\n`);
  printLabelsMultiline(w, 'Labels', m.labels);
  printAnnotationsMultiline(w, 'Annotations', m.annotations);
  w.write(LEVEL_0, `Schedule:\t${spec?.schedule ?? ''}\n`);
  if (spec?.timeZone) w.write(LEVEL_0, `Time Zone:\t${spec.timeZone}\n`);
  w.write(LEVEL_0, `Concurrency Policy:\t${spec?.concurrencyPolicy ?? ''}\n`);
  w.write(LEVEL_0, `Suspend:\t${spec?.suspend ? 'True' : 'False'}\n`);
  w.write(LEVEL_0, `Successful Job History Limit:\t${orUnset(spec?.successfulJobsHistoryLimit)}\n`);
  w.write(LEVEL_0, `Failed Job History Limit:\t${orUnset(spec?.failedJobsHistoryLimit)}\n`);
  w.write(LEVEL_0, `Starting Deadline Seconds:\t${spec?.startingDeadlineSeconds != null ? `${spec.startingDeadlineSeconds}s` : '<unset>'}\n`);
  w.write(LEVEL_0, `Selector:\t${js?.selector ? formatLabelSelector(js.selector) : '<unset>'}\n`);
  w.write(LEVEL_0, `Parallelism:\t${orUnset(js?.parallelism)}\n`);
  w.write(LEVEL_0, `Completions:\t${orUnset(js?.completions)}\n`);
  describePodTemplate(w, js?.template);
  w.write(LEVEL_0, `Last Schedule Time:\t${cj.status?.lastScheduleTime ? rfc1123z(cj.status.lastScheduleTime) : '<unset>'}\n`);
  const active = (cj.status?.active ?? []).map((r) => r.name).join(', ');
  w.write(LEVEL_0, `Active Jobs:\t${active || '<none>'}\n`);
  if (events) describeEvents(w, events, now);
  return w.toString();
}
