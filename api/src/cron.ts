/**
 * CronJob schedules: the five-field cron syntax and the macros upstream's robfig/cron
 * ParseStandard accepts (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly),
 * evaluated in an IANA time zone. One implementation for the apiserver's validation and the
 * CronJob controller. Built on cron-parser (which also knows seconds fields and other macros;
 * those are refused here, as upstream refuses them).
 */
import { CronExpressionParser } from 'cron-parser';

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};

const NAMES = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat)\b/gi;

/** A parsed schedule: next(t) is the first activation strictly after t. */
export interface CronSchedule {
  /** First activation time strictly after `after` (ms since epoch). */
  next(afterMs: number): number;
}

/**
 * Parses schedule in timeZone (IANA name; undefined = UTC, the controller-manager's zone here).
 * Throws an Error whose message says what is wrong (validation prints it as the detail).
 */
export function parseCronSchedule(schedule: string, timeZone?: string): CronSchedule {
  const s = schedule.trim();
  let expr: string;
  if (s.startsWith('@')) {
    const m = MACROS[s];
    if (!m) throw new Error(`unrecognized descriptor: ${s}`);
    expr = m;
  } else {
    const fields = s.split(/\s+/).filter(Boolean);
    if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
    // cron-parser also knows H, L, W and #; upstream's parser does not.
    if (fields.some((f) => /[a-z#]/i.test(f.replace(NAMES, '0')))) {
      throw new Error(`unsupported cron syntax: ${s}`);
    }
    expr = fields.join(' ');
  }
  const tz = timeZone ?? 'UTC';
  // Parse once now so a bad expression fails here rather than at the first next().
  CronExpressionParser.parse(`0 ${expr}`, { tz, currentDate: 0 });
  return {
    next(afterMs: number): number {
      const it = CronExpressionParser.parse(`0 ${expr}`, { tz, currentDate: afterMs });
      return it.next().getTime();
    },
  };
}

/** True if tz is a time zone name the runtime knows (Intl / ICU tzdata). */
export function isValidTimeZone(tz: string): boolean {
  try { new Intl.DateTimeFormat('en-US', { timeZone: tz }); return true; } catch { return false; }
}
