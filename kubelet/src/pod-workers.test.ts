import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@mk8s/component-base/testing';
import { silentLogger } from '@mk8s/component-base';
import { PodWorkers } from './pod-workers.js';

test('syncs of one pod never overlap and updates during a sync collapse into one more', async () => {
  const clock = new FakeClock();
  let running = 0; let maxRunning = 0; const calls: string[] = [];
  const gates: (() => void)[] = [];
  const w = new PodWorkers({
    clock, logger: silentLogger(),
    sync: async (uid) => { running++; maxRunning = Math.max(maxRunning, running); calls.push(uid); await new Promise<void>((r) => gates.push(r)); running--; },
  });
  w.start(new AbortController().signal);
  w.enqueue('a');
  w.enqueue('a'); w.enqueue('a'); w.enqueue('a');
  w.enqueue('b');
  assert.deepEqual(calls, ['a', 'b']);
  gates.shift()!(); // finish a's first sync → exactly one more
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls, ['a', 'b', 'a']);
  while (gates.length) { gates.shift()!(); await new Promise((r) => setImmediate(r)); }
  await w.idle();
  assert.equal(calls.filter((c) => c === 'a').length, 2);
  assert.equal(maxRunning, 2); // a and b in parallel, never a twice
});

test('a failed sync is retried after a growing delay; requeueAfterMs schedules another sync', async () => {
  const clock = new FakeClock();
  const calls: number[] = [];
  let fail = 2;
  const w = new PodWorkers({
    clock, logger: silentLogger(), errorBackoffMs: 1000,
    sync: async () => { calls.push(clock.now()); if (fail-- > 0) throw new Error('boom'); return { requeueAfterMs: 5000 }; },
  });
  w.start(new AbortController().signal);
  const t0 = clock.now();
  w.enqueue('a'); await w.idle();
  clock.step(1000); await w.idle();
  clock.step(2000); await w.idle();
  clock.step(5000); await w.idle();
  assert.deepEqual(calls.map((t) => t - t0), [0, 1000, 3000, 8000]);
});
