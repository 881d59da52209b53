import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { TerminalError } from '@mk8s/api';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { createRateLimitingQueue } from './rate-limiting-queue.js';
import { ItemExponentialFailureRateLimiter, BucketRateLimiter, MaxOfRateLimiter } from './rate-limiter.js';
import { runWorkers } from './run-workers.js';

const flush = () => new Promise((r) => setImmediate(r));

describe('rate-limiting queue', () => {
  test('dedups keys that are waiting', async () => {
    const q = createRateLimitingQueue({ clock: new FakeClock() });
    q.add('a'); q.add('b'); q.add('a');
    assert.equal(q.len(), 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
  });

  test('a key added while processing is handed out again only after done', async () => {
    const q = createRateLimitingQueue({ clock: new FakeClock() });
    q.add('a');
    const k = await q.get();
    q.add('a');
    assert.equal(q.len(), 0, 'not queued while a worker holds it');
    let second: string | undefined;
    void q.get().then((x) => { second = x; });
    await flush();
    assert.equal(second, undefined);
    q.done(k!);
    await flush();
    assert.equal(second, 'a');
  });

  test('get waits for add', async () => {
    const q = createRateLimitingQueue({ clock: new FakeClock() });
    const p = q.get();
    q.add('x');
    assert.equal(await p, 'x');
  });

  test('shutDown drains, then get resolves undefined', async () => {
    const q = createRateLimitingQueue({ clock: new FakeClock() });
    const waiting = q.get();
    q.shutDown();
    assert.equal(await waiting, undefined);
    const q2 = createRateLimitingQueue({ clock: new FakeClock() });
    q2.add('a');
    q2.shutDown();
    q2.add('b');
    assert.equal(await q2.get(), 'a');
    assert.equal(await q2.get(), undefined);
  });

  test('addAfter fires through the clock and keeps the earliest deadline', async () => {
    const clock = new FakeClock();
    const q = createRateLimitingQueue({ clock });
    q.addAfter('a', 100);
    q.addAfter('a', 50);
    q.addAfter('a', 200);
    assert.equal(clock.pending(), 1);
    clock.step(49);
    assert.equal(q.len(), 0);
    clock.step(1);
    assert.equal(q.len(), 1);
    clock.step(500);
    assert.equal(q.len(), 1);
  });

  test('addRateLimited backs off exponentially per key and forget resets', () => {
    const clock = new FakeClock();
    const q = createRateLimitingQueue({ clock, bucket: false });
    q.addRateLimited('a'); // 5ms
    clock.step(4); assert.equal(q.len(), 0);
    clock.step(1); assert.equal(q.len(), 1);
    q.addRateLimited('b'); q.addRateLimited('b'); // 5, then 10 (earliest kept: 5)
    assert.equal(q.numRequeues('b'), 2);
    q.forget('b');
    assert.equal(q.numRequeues('b'), 0);
  });

  test('shutDown cancels delayed adds', () => {
    const clock = new FakeClock();
    const q = createRateLimitingQueue({ clock });
    q.addAfter('a', 10);
    q.shutDown();
    assert.equal(clock.pending(), 0);
  });
});

describe('rate limiters', () => {
  test('exponential: base * 2^n capped', () => {
    const l = new ItemExponentialFailureRateLimiter({ baseDelayMs: 5, maxDelayMs: 1_000_000 });
    const got = Array.from({ length: 5 }, () => l.when('k'));
    assert.deepEqual(got, [5, 10, 20, 40, 80]);
    for (let i = 0; i < 100; i++) l.when('k');
    assert.equal(l.when('k'), 1_000_000);
    assert.equal(l.when('other'), 5);
  });
  test('bucket: burst free, then spread at qps', () => {
    const clock = new FakeClock();
    const b = new BucketRateLimiter({ qps: 10, burst: 2, clock });
    assert.deepEqual([b.when('a'), b.when('a'), b.when('a'), b.when('a')], [0, 0, 100, 200]);
    clock.step(1000);
    assert.equal(b.when('a'), 0);
  });
  test('max of limiters', () => {
    const clock = new FakeClock();
    const m = new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter({ baseDelayMs: 1 }), new BucketRateLimiter({ qps: 1, burst: 1, clock }));
    assert.equal(m.when('a'), 1);
    assert.equal(m.when('a'), 1000);
  });
});

describe('runWorkers', () => {
  test('retries errors with backoff, forgets on success and on TerminalError', async () => {
    const clock = new FakeClock();
    const q = createRateLimitingQueue({ clock, bucket: false });
    const ac = new AbortController();
    const calls: string[] = [];
    let failA = 2;
    const run = runWorkers({
      name: 'test', queue: q, workers: 2, logger: silentLogger(), signal: ac.signal,
      reconciler: {
        async reconcile(key) {
          calls.push(key);
          if (key === 'a' && failA-- > 0) throw new Error('boom');
          if (key === 't') throw new TerminalError('nope');
          if (key === 'r' && calls.filter((c) => c === 'r').length === 1) return { requeueAfterMs: 1000 };
          return {};
        },
      },
    });
    q.add('a'); q.add('t'); q.add('r');
    await flush(); await flush();
    assert.deepEqual(calls.sort(), ['a', 'r', 't']);
    assert.equal(q.numRequeues('a'), 1);
    assert.equal(q.numRequeues('t'), 0);
    clock.step(5); await flush(); await flush();
    assert.equal(calls.filter((c) => c === 'a').length, 2);
    clock.step(10); await flush(); await flush();
    assert.equal(calls.filter((c) => c === 'a').length, 3);
    assert.equal(q.numRequeues('a'), 0);
    clock.step(1000); await flush(); await flush();
    assert.equal(calls.filter((c) => c === 'r').length, 2);
    assert.equal(calls.filter((c) => c === 't').length, 1);
    ac.abort();
    await run;
  });

  test('never runs one key on two workers at once', async () => {
    const q = createRateLimitingQueue({ clock: new FakeClock() });
    const ac = new AbortController();
    let active = 0; let maxActive = 0; let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const run = runWorkers({
      name: 'test', queue: q, workers: 4, logger: silentLogger(), signal: ac.signal,
      reconciler: { async reconcile() { active++; runs++; maxActive = Math.max(maxActive, active); await gate; active--; } },
    });
    q.add('k'); await flush();
    q.add('k'); q.add('k'); await flush();
    release(); await flush(); await flush(); await flush();
    assert.equal(maxActive, 1);
    assert.equal(runs, 2);
    ac.abort();
    await run;
  });
});

describe('worker metrics', () => {
  test('counts reconciles by result on a prom-client registry', async () => {
    const { Registry } = await import('prom-client');
    const { newWorkerMetrics } = await import('./worker-metrics.js');
    const reg = new Registry();
    const m = newWorkerMetrics(reg);
    assert.equal(newWorkerMetrics(reg) !== undefined, true, 'idempotent per registry');
    m.observeReconcile({ controller: 'rs', result: 'success', durationMs: 3 });
    m.observeReconcile({ controller: 'rs', result: 'terminal', durationMs: 3 });
    const text = await reg.metrics();
    assert.match(text, /controller_runtime_reconcile_total\{controller="rs",result="success"\} 1/);
    assert.match(text, /controller_runtime_terminal_reconcile_errors_total\{controller="rs"\} 1/);
  });
});
