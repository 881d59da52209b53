// The supervisor against real processes (sleep, sh) in a temporary state folder: no network, no root.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isAlive, readPid } from './processes.js';
import { readSupervisorStatus, setHold, Supervisor, superviseSpec, supervisorPaths, type ProcessStatus } from './supervisor.js';

const state = mkdtempSync(join(tmpdir(), 'mk8s-supervisor-'));
const sp = supervisorPaths({ state, run: join(state, 'run'), logs: join(state, 'logs') });
mkdirSync(sp.logs, { recursive: true });
const ac = new AbortController();
const sup = new Supervisor({ paths: sp, tickMs: 50, log: () => {}, policy: { initialMs: 100, maxMs: 400, resetAfterUpMs: 60_000 } });
const running = sup.run(ac.signal);
after(async () => {
  ac.abort();
  await running;
  for (const n of ['sleeper', 'crasher']) { const pid = readPid(sp.run, n); if (isAlive(pid)) process.kill(-pid!, 'SIGKILL'); }
  rmSync(state, { recursive: true, force: true });
});

async function until<T>(f: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const status = (n: string): ProcessStatus | undefined => readSupervisorStatus(sp)?.processes[n];

test('a process killed with SIGKILL is started again, its exit recorded', async () => {
  superviseSpec(sp, { name: 'sleeper', command: 'sleep', args: ['300'] });
  const first = await until(() => status('sleeper')?.state === 'running' && status('sleeper')!.pid, 'sleeper running');
  assert.equal(readPid(sp.run, 'sleeper'), first);
  process.kill(first, 'SIGKILL');
  const second = await until(() => { const s = status('sleeper'); return s?.state === 'running' && s.pid !== first && s.pid; }, 'a new sleeper');
  assert.ok(isAlive(second));
  assert.equal(readPid(sp.run, 'sleeper'), second);
  const s = status('sleeper')!;
  assert.equal(s.restarts, 1);
  assert.equal(s.lastExit?.signal, 'SIGKILL');
  assert.match(readFileSync(join(sp.logs, 'sleeper.log'), 'utf8'), /mk8s-supervisor: sleeper exited \(signal SIGKILL\), restart 1/);
});

test('a process that keeps failing backs off, doubling to the cap', async () => {
  superviseSpec(sp, { name: 'crasher', command: 'sh', args: ['-c', 'exit 3'] });
  await until(() => (status('crasher')?.restarts ?? 0) >= 4 && status('crasher')?.state === 'backoff', 'four restarts');
  const s = status('crasher')!;
  assert.deepEqual({ code: s.lastExit?.code, signal: s.lastExit?.signal }, { code: 3, signal: null });
  assert.equal(s.delayMs, 400, 'capped at the policy maximum');
});

test('hold stops a process and keeps it stopped; release starts it again', async () => {
  const pid = status('sleeper')!.pid!;
  await setHold(sp, ['sleeper'], true, 10_000);
  assert.ok(!isAlive(pid));
  assert.equal(status('sleeper')?.state, 'held');
  await setHold(sp, ['sleeper'], false, 10_000);
  const s = status('sleeper')!;
  assert.notEqual(s.pid, pid);
  assert.equal(s.restarts, 1, 'a release is not a restart');
  await setHold(sp, ['crasher'], true, 10_000);
});

test('a supervisor started again adopts the running process, keeps its record, and restarts it when it dies', async () => {
  // A second state folder, its own supervisor, which is then ended (its child runs on).
  const st2 = mkdtempSync(join(tmpdir(), 'mk8s-supervisor-adopt-'));
  const sp2 = supervisorPaths({ state: st2, run: join(st2, 'run'), logs: join(st2, 'logs') });
  mkdirSync(sp2.logs, { recursive: true });
  const opts = { paths: sp2, tickMs: 50, log: () => {}, policy: { initialMs: 100, maxMs: 400, resetAfterUpMs: 60_000 } };
  const s2 = (n: string) => readSupervisorStatus(sp2)?.processes[n];
  try {
    const ac1 = new AbortController();
    const first = new Supervisor(opts).run(ac1.signal);
    superviseSpec(sp2, { name: 'orphan', command: 'sleep', args: ['300'] });
    const pid = await until(() => s2('orphan')?.state === 'running' && s2('orphan')!.pid, 'orphan running');
    process.kill(pid, 'SIGKILL');
    const pid2 = await until(() => { const s = s2('orphan'); return s?.state === 'running' && s.pid !== pid && s.pid; }, 'orphan restarted once');
    ac1.abort();
    await first;
    assert.ok(isAlive(pid2), 'the process outlives its supervisor');
    const ac2 = new AbortController();
    const second = new Supervisor(opts).run(ac2.signal);
    try {
      const adopted = await until(() => s2('orphan')?.adopted && s2('orphan'), 'adopted');
      assert.equal(adopted.pid, pid2);
      assert.equal(adopted.restarts, 1, 'the record carries over');
      // Not its child: the exit is noticed by polling, its code unknown.
      process.kill(pid2, 'SIGKILL');
      const pid3 = await until(() => { const s = s2('orphan'); return s?.state === 'running' && s.pid !== pid2 && !s.adopted && s.pid; }, 'orphan restarted by the new supervisor');
      assert.ok(isAlive(pid3));
      assert.equal(s2('orphan')!.restarts, 2);
      assert.deepEqual({ code: s2('orphan')!.lastExit?.code, signal: s2('orphan')!.lastExit?.signal }, { code: null, signal: null });
    } finally {
      await setHold(sp2, ['orphan'], true, 10_000);
      ac2.abort();
      await second;
    }
  } finally {
    const left = readPid(sp2.run, 'orphan');
    if (isAlive(left)) process.kill(left!, 'SIGKILL');
    rmSync(st2, { recursive: true, force: true });
  }
});
