import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCronSchedule } from './cron.js';

const at = (s: string) => Date.parse(s);
const iso = (ms: number) => new Date(ms).toISOString();

for (const tc of [
  { schedule: '*/5 * * * *', after: '2026-01-01T00:05:00Z', want: '2026-01-01T00:10:00.000Z' },
  { schedule: '*/5 * * * *', after: '2026-01-01T00:04:59Z', want: '2026-01-01T00:05:00.000Z' },
  { schedule: '@hourly', after: '2026-01-01T00:05:00Z', want: '2026-01-01T01:00:00.000Z' },
  { schedule: '@midnight', after: '2026-01-01T00:05:00Z', want: '2026-01-02T00:00:00.000Z' },
  { schedule: '0 9 * * MON-FRI', tz: 'America/New_York', after: '2026-01-03T00:00:00Z', want: '2026-01-05T14:00:00.000Z' },
]) {
  test(`cron: ${tc.schedule}${tc.tz ? ` in ${tc.tz}` : ''} after ${tc.after}`, () => {
    assert.equal(iso(parseCronSchedule(tc.schedule, tc.tz).next(at(tc.after))), tc.want);
  });
}

test('cron: refuses what upstream\'s standard parser refuses', () => {
  for (const bad of ['61 * * * *', '* * * *', '0 0 * * * *', '@every 1h', '@secondly', 'x * * * *', '0 0 L * *']) {
    assert.throws(() => parseCronSchedule(bad), Error, bad);
  }
});
