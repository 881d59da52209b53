import { test } from 'node:test';
import assert from 'node:assert/strict';
import { humanDuration, translateTimestampSince } from './duration.js';

const S = 1000, M = 60 * S, H = 60 * M, D = 24 * H;
for (const [ms, want] of [
  [-3 * S, '<invalid>'], [-1500, '0s'], [0, '0s'], [5 * S, '5s'], [119 * S, '119s'], [2 * M, '2m'],
  [3 * M + 20 * S, '3m20s'], [9 * M + 59 * S, '9m59s'], [10 * M + 30 * S, '10m'], [179 * M, '179m'],
  [3 * H, '3h'], [7 * H + 59 * M, '7h59m'], [8 * H + 5 * M, '8h'], [47 * H, '47h'], [2 * D, '2d'],
  [2 * D + 3 * H, '2d3h'], [7 * D + 23 * H, '7d23h'], [8 * D, '8d'], [729 * D, '729d'], [730 * D, '2y'],
  [731 * D, '2y1d'], [8 * 365 * D, '8y'], [20 * 365 * D, '20y'],
] as const) {
  test(`humanDuration(${ms}) = ${want}`, () => assert.equal(humanDuration(ms), want));
}

test('translateTimestampSince', () => {
  const now = Date.parse('2026-01-01T00:10:00Z');
  assert.equal(translateTimestampSince('2026-01-01T00:00:00Z', now), '10m');
  assert.equal(translateTimestampSince(undefined, now), '<unknown>');
  assert.equal(translateTimestampSince('garbage', now), '<unknown>');
});
