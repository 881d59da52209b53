import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@mk8s/component-base/testing';
import { Backoff } from './backoff.js';

test('doubles from the initial delay up to the max', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, initialMs: 10_000, maxMs: 300_000 });
  const seen: number[] = [];
  for (let i = 0; i < 7; i++) { b.next('k'); seen.push(b.get('k')); clock.step(1000); }
  assert.deepEqual(seen, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
});

test('isInBackOffSince is true within the delay after the event', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, initialMs: 10_000, maxMs: 300_000 });
  const t = clock.now();
  assert.equal(b.isInBackOffSince('k', t), false);
  b.next('k', t);
  clock.step(9_999);
  assert.equal(b.isInBackOffSince('k', t), true);
  assert.equal(b.remaining('k', t), 1);
  clock.step(1);
  assert.equal(b.isInBackOffSince('k', t), false);
});

test('resets after twice the max without failures (10 minutes for CrashLoopBackOff)', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, initialMs: 10_000, maxMs: 300_000 });
  b.next('k'); b.next('k'); b.next('k');
  clock.step(600_001);
  b.next('k');
  assert.equal(b.get('k'), 10_000);
});

test('seed rebuilds a delay and forgetPrefix drops a pod', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, initialMs: 10_000, maxMs: 300_000 });
  b.seed('u/c', 40_000, clock.now());
  assert.equal(b.get('u/c'), 40_000);
  b.forgetPrefix('u/');
  assert.equal(b.get('u/c'), 0);
});
