import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './testing/fake-clock.js';
import { runEvery } from './run-every.js';

const flush = async () => { for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); };

test('runs at once, then every period; a failing run does not end the loop; abort ends it', async () => {
  const clock = new FakeClock();
  const ac = new AbortController();
  const runs: number[] = [];
  const done = runEvery(1000, () => { runs.push(clock.now()); if (runs.length === 2) throw new Error('boom'); }, { clock, signal: ac.signal });
  await flush();
  for (let i = 0; i < 3; i++) { clock.step(1000); await flush(); }
  assert.equal(runs.length, 4);
  assert.deepEqual(runs.map((t) => t - runs[0]!), [0, 1000, 2000, 3000]);
  ac.abort();
  await done;
});

test('immediate: false waits one period first', async () => {
  const clock = new FakeClock();
  const ac = new AbortController();
  let n = 0;
  const done = runEvery(500, () => { n++; }, { clock, signal: ac.signal, immediate: false });
  await flush();
  assert.equal(n, 0);
  clock.step(500); await flush();
  assert.equal(n, 1);
  ac.abort();
  await done;
});
