/**
 * CronJob schedule arithmetic, pure (upstream pkg/controller/cronjob/utils.go:
 * mostRecentScheduleTime, nextScheduleTimeDuration, getJobName, the scheduled-timestamp format).
 */
import type { CronSchedule } from '@mk8s/api';

/** Upstream requeues 100 ms after the next schedule time so the sync lands past it. */
export const NEXT_SCHEDULE_DELTA_MS = 100;
/** More missed starts than this: event TooManyMissedTimes (still starting the latest). */
export const MAX_MISSED_SCHEDULES = 100;

export type Missed = 'none' | 'few' | 'many';

/**
 * mostRecentScheduleTime: the latest activation at or before now that has not been started,
 * counting from lastScheduleTime (else creation) and, when asked, no earlier than
 * now - startingDeadlineSeconds.
 */
export function mostRecentScheduleTime(o: { creationMs: number; lastScheduleMs?: number; startingDeadlineSeconds?: number | null },
  nowMs: number, schedule: CronSchedule, includeStartingDeadline: boolean): { earliestMs: number; mostRecentMs?: number; missed: Missed } {
  let earliest = o.lastScheduleMs ?? o.creationMs;
  if (includeStartingDeadline && o.startingDeadlineSeconds != null) {
    const deadline = nowMs - o.startingDeadlineSeconds * 1000;
    if (deadline > earliest) earliest = deadline;
  }
  const t1 = schedule.next(earliest);
  const t2 = schedule.next(t1);
  if (nowMs < t1) return { earliestMs: earliest, missed: 'none' };
  if (nowMs < t2) return { earliestMs: earliest, mostRecentMs: t1, missed: 'few' };
  const between = Math.round((t2 - t1) / 1000);
  if (between < 1) throw new Error('time difference between two schedules is less than 1 second');
  const elapsed = Math.floor((nowMs - t1) / 1000);
  const missedCount = Math.floor(elapsed / between) + 1;
  // Start a little before the estimate and let the schedule find the exact last activation
  // (irregular schedules such as "30 6-16/4 * * 1-5").
  let t = schedule.next(t1 + (missedCount - 2) * between * 1000 - 1);
  let mostRecent = t1;
  for (; t <= nowMs; t = schedule.next(t)) mostRecent = t;
  return { earliestMs: earliest, mostRecentMs: mostRecent, missed: missedCount > MAX_MISSED_SCHEDULES ? 'many' : 'few' };
}

/** nextScheduleTimeDuration: how long until the activation after the most recent one (+100 ms). */
export function nextScheduleDelayMs(o: { creationMs: number; lastScheduleMs?: number }, nowMs: number, schedule: CronSchedule): number {
  const { earliestMs, mostRecentMs } = mostRecentScheduleTime(o, nowMs, schedule, false);
  const base = mostRecentMs === undefined || mostRecentMs < earliestMs ? earliestMs : mostRecentMs;
  return schedule.next(base) + NEXT_SCHEDULE_DELTA_MS - nowMs;
}

/** getJobName: "<cronjob>-<scheduled time in minutes since the epoch>". */
export function jobNameFor(cronJobName: string, scheduledMs: number): string {
  return `${cronJobName}-${Math.floor(scheduledMs / 60_000)}`;
}

/** RFC 3339 of ms in an IANA zone, as Go's t.In(loc).Format(time.RFC3339): "Z" for UTC, else "+01:00". */
export function rfc3339InZone(ms: number, timeZone?: string): string {
  const tz = timeZone ?? 'UTC';
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', {
    timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const local = `${parts['year']}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:${parts['second']}`;
  const offsetMin = Math.round((Date.parse(`${local}Z`) - Math.floor(ms / 1000) * 1000) / 60_000);
  if (offsetMin === 0) return `${local}Z`;
  const sign = offsetMin > 0 ? '+' : '-';
  const a = Math.abs(offsetMin);
  return `${local}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}
