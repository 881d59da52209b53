/**
 * ExecIptablesRunner's waiting iptables-restore, against a stand-in binary (a shell script that
 * logs when it started and what it read): the next restore is started before it is asked for,
 * carries exactly one input, reports failures, and close() lets it go having read nothing.
 * Needs only sh; no root.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecIptablesRunner } from '../src/iptables.js';

const dir = mkdtempSync(join(tmpdir(), 'mk8s-kp-runner-'));
const log = join(dir, 'log');
// Logs "start <pid>", then "<pid> read <input>" once stdin ends; exits 3 when the input says FAIL.
writeFileSync(join(dir, 'fake-restore'), `#!/bin/sh
echo "start $$" >> ${log}
input=$(cat)
echo "$$ read $input" >> ${log}
case "$input" in *FAIL*) echo "bad input" >&2; exit 3;; esac
exit 0
`);
chmodSync(join(dir, 'fake-restore'), 0o755);
const lines = () => { try { return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean); } catch { return []; } };
async function waitFor(cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !cond();) {
    if (Date.now() > end) throw new Error(`condition not met; log: ${lines().join(' | ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ExecIptablesRunner prespawn', { timeout: 60_000 }, () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the next restore is waiting before it is asked for; each process carries one input', async () => {
    const runner = new ExecIptablesRunner({ binary: join(dir, 'fake') });
    await runner.restore('one', { noflush: true });
    // The spare has started (and logged) with nothing asked of it yet.
    await waitFor(() => lines().filter((l) => l.startsWith('start')).length === 2);
    const sparePid = lines()[2]!.split(' ')[1];
    await runner.restore('two', { noflush: true });
    assert.ok(lines().includes(`${sparePid} read two`), lines().join(' | '));
    await assert.rejects(runner.restore('FAIL', { noflush: true }), /iptables-restore failed \(3\): bad input/);
    // A failure does not poison the next one.
    await waitFor(() => lines().filter((l) => l.startsWith('start')).length === 4);
    await runner.restore('three', { noflush: true });
    runner.close();
    // Every process started has read its input and ended (closed at once: no spare after 'three').
    await waitFor(() => lines().filter((l) => l.startsWith('start')).length === lines().filter((l) => / read/.test(l)).length);
    const reads = lines().filter((l) => / read/.test(l)).map((l) => l.split(' read')[1]!.trim());
    assert.deepEqual(reads, ['one', 'two', 'FAIL', 'three']);
  });

  test('close() lets a waiting restore go without applying anything', async () => {
    rmSync(log, { force: true });
    const runner = new ExecIptablesRunner({ binary: join(dir, 'fake') });
    await runner.restore('one', { noflush: true });
    await waitFor(() => lines().filter((l) => l.startsWith('start')).length === 2);
    runner.close();
    await waitFor(() => lines().length === 4);
    assert.match(lines()[3]!, /^\d+ read$/);      // EOF, no input: iptables-restore commits nothing
  });

  test('a dead spare is replaced by a fresh restore', async () => {
    rmSync(log, { force: true });
    const runner = new ExecIptablesRunner({ binary: join(dir, 'fake') });
    await runner.restore('one', { noflush: true });
    await waitFor(() => lines().filter((l) => l.startsWith('start')).length === 2);
    const pid = Number(lines()[2]!.split(' ')[1]);
    process.kill(pid, 'SIGKILL');
    // Gone from /proc = reaped by this process, which is when the runner learns it exited.
    await waitFor(() => !existsSync(`/proc/${pid}`));
    await runner.restore('two', { noflush: true });
    runner.close();
    assert.ok(lines().some((l) => / read two$/.test(l)), lines().join(' | '));
  });
});
