import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_RESTART_POLICY, restartDelayMs } from './restart-backoff.js';

const MIN = 60_000;
for (const tc of [
  { name: 'first exit waits 1s', prev: undefined, upMs: 100, want: 1_000 },
  { name: 'second quick exit doubles to 2s', prev: 1_000, upMs: 500, want: 2_000 },
  { name: 'doubles again to 4s', prev: 2_000, upMs: 3_000, want: 4_000 },
  { name: '16s doubles to the 30s cap', prev: 16_000, upMs: 1_000, want: 30_000 },
  { name: 'stays at the cap', prev: 30_000, upMs: 1_000, want: 30_000 },
  { name: 'a run just under 5 min keeps doubling', prev: 8_000, upMs: 5 * MIN - 1, want: 16_000 },
  { name: 'a run of 5 min resets to 1s', prev: 30_000, upMs: 5 * MIN, want: 1_000 },
  { name: 'a long run resets to 1s', prev: 16_000, upMs: 60 * MIN, want: 1_000 },
  { name: 'a zero previous delay is a first exit', prev: 0, upMs: 10, want: 1_000 },
]) test(tc.name, () => assert.equal(restartDelayMs(tc.prev, tc.upMs), tc.want));

test('the policy is 1s doubling to 30s, reset after 5 min up', () => {
  assert.deepEqual(DEFAULT_RESTART_POLICY, { initialMs: 1_000, maxMs: 30_000, resetAfterUpMs: 5 * MIN });
  const seq: number[] = [];
  let d: number | undefined;
  for (let i = 0; i < 7; i++) { d = restartDelayMs(d, 0); seq.push(d); }
  assert.deepEqual(seq, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
});
