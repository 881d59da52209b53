import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './fake-clock.js';

test('fires due timers in time order when stepped', () => {
  const c = new FakeClock(0);
  const fired: string[] = [];
  c.setTimeout(() => fired.push('b'), 20);
  c.setTimeout(() => fired.push('a'), 10);
  c.setTimeout(() => fired.push('c'), 30);
  c.step(25);
  assert.deepEqual(fired, ['a', 'b']);
  assert.equal(c.now(), 25);
  c.step(5);
  assert.deepEqual(fired, ['a', 'b', 'c']);
});

test('a timer scheduled by a firing timer fires in the same step when due', () => {
  const c = new FakeClock(0);
  const fired: number[] = [];
  c.setTimeout(() => { fired.push(c.now()); c.setTimeout(() => fired.push(c.now()), 5); }, 5);
  c.step(10);
  assert.deepEqual(fired, [5, 10]);
});

test('sleep resolves after step and leaves no abort listener behind', async () => {
  const c = new FakeClock(0);
  const ac = new AbortController();
  for (let i = 0; i < 20; i++) {
    const p = c.sleep(1, ac.signal);
    c.step(1);
    await p;
  }
  assert.equal(c.pending(), 0);
});

test('sleep rejects when the signal aborts and cancels its timer', async () => {
  const c = new FakeClock(0);
  const ac = new AbortController();
  const p = c.sleep(100, ac.signal);
  ac.abort(new Error('stop'));
  await assert.rejects(p, /stop/);
  assert.equal(c.pending(), 0);
});
