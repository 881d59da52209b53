import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@mk8s/component-base/testing';
import { LogBackend } from './log-backend.js';

/** A synchronous writer: these tests read the file right after a flush. */
const writeNow = (fd: number, data: Buffer, done: (err: Error | null) => void) => { writeSync(fd, data); done(null); };

test('JSON lines batched per tick; rotation past maxsize keeps maxbackup backups named as lumberjack does', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-audit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new FakeClock(Date.parse('2026-03-04T05:06:07.089Z'));
  const pending: (() => void)[] = [];
  const path = join(dir, 'audit.log');
  // 1 MB max: each batch below is ~0.4 MB, so every third batch rotates.
  const b = new LogBackend({ path, maxSizeMB: 1, maxBackups: 2, clock, schedule: (fn) => pending.push(fn), writeFile: writeNow });
  const line = (i: number) => JSON.stringify({ i, pad: 'x'.repeat(4000) });
  let n = 0;
  for (let batch = 0; batch < 9; batch++) {
    for (let k = 0; k < 100; k++) b.write(line(n++));
    assert.equal(pending.length, 1, 'one flush scheduled per batch');
    pending.shift()!();
    clock.step(1000);
  }
  b.close();
  const files = readdirSync(dir).sort();
  assert.equal(files.length, 3, files.join(' '));
  assert.ok(files.includes('audit.log'));
  for (const f of files.filter((x) => x !== 'audit.log')) assert.match(f, /^audit-2026-03-04T05-06-\d\d\.089\.log$/);
  // Every line is whole JSON, in order, and the newest lines are in the current file.
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { i: number });
  assert.equal(lines[lines.length - 1]!.i, n - 1);
  for (let i = 1; i < lines.length; i++) assert.equal(lines[i]!.i, lines[i - 1]!.i + 1);
});

test('close() writes what is queued; a reopened log appends', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-audit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'a.log');
  const clock = new FakeClock(0);
  const b = new LogBackend({ path, clock, schedule: () => undefined, writeFile: writeNow });
  b.write('{"a":1}');
  b.close();
  const b2 = new LogBackend({ path, clock, schedule: () => undefined, writeFile: writeNow });
  b2.write('{"a":2}');
  b2.close();
  assert.equal(readFileSync(path, 'utf8'), '{"a":1}\n{"a":2}\n');
});

test('asynchronous writes: one in flight, later lines batched after it, every line once and in order', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-audit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'audit.log');
  const b = new LogBackend({ path, clock: new FakeClock(0) });
  let i = 0;
  for (let round = 0; round < 50; round++) {
    for (let k = 0; k < 20; k++) b.write(JSON.stringify({ i: i++ }));
    await new Promise((r) => setImmediate(r));
  }
  // Everything lands without close(); close() then adds what is still queued, once.
  const deadline = Date.now() + 10_000;
  while (readFileSync(path, 'utf8').split('\n').length - 1 < i && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  for (let k = 0; k < 5; k++) b.write(JSON.stringify({ i: i++ }));
  b.close();
  await new Promise((r) => setTimeout(r, 50));
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => (JSON.parse(l) as { i: number }).i);
  assert.deepEqual(lines, Array.from({ length: i }, (_, k) => k));
});
