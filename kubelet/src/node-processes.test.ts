import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeProcesses, parseProcStat, processRole } from './node-processes.js';

test('parseProcStat counts fields after the last parenthesis of the command name', () => {
  const stat = '4242 (node (kube) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 11 0 12345 1000000 2000 18446744073709551615';
  assert.deepEqual(parseProcStat(stat), { cpuTicks: 310, startTicks: 12345 });
  assert.equal(parseProcStat('garbage'), undefined);
});

test('processRole: self is the kubelet, the CRI shim is the runtime, the rest misc', () => {
  assert.equal(processRole(7, 7, 'node kubelet/dist/main.js'), 'kubelet');
  assert.equal(processRole(8, 7, 'node /x/cri-docker/dist/main.js --node-name n1'), 'runtime');
  assert.equal(processRole(9, 7, 'node kube-proxy/dist/main.js'), 'misc');
});

test('NodeProcesses reads the processes of its own network namespace, and rescans when one is gone', async (t) => {
  const proc = mkdtempSync(join(tmpdir(), 'mk8s-proc-'));
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  writeFileSync(join(proc, 'stat'), 'cpu 1 2 3\nbtime 1700000000\n');
  const add = (pid: number, ns: string, cmd: string, ticks: number) => {
    mkdirSync(join(proc, String(pid), 'ns'), { recursive: true });
    symlinkSync(`net:[${ns}]`, join(proc, String(pid), 'ns', 'net'));
    writeFileSync(join(proc, String(pid), 'cmdline'), cmd.split(' ').join('\0'));
    writeFileSync(join(proc, String(pid), 'stat'), `${pid} (node) S 1 1 1 0 -1 0 0 0 0 0 ${ticks} 0 0 0 20 0 1 0 500 0 0`);
    writeFileSync(join(proc, String(pid), 'statm'), '1000 256 10 1 0 100 0\n');
  };
  add(10, '111', 'node kubelet/dist/main.js', 100);
  add(11, '111', 'node cri-docker/dist/main.js', 50);
  add(12, '222', 'node other-node-kubelet', 999);                // another node's namespace
  let now = 0;
  const p = new NodeProcesses({ procRoot: proc, selfPid: 10, nowMs: () => now, rescanMs: 10_000 });
  const s = await p.sample();
  assert.deepEqual(s.map((x) => [x.pid, x.role, x.cpuNs, x.rssBytes, x.startTimeMs]), [
    [10, 'kubelet', 1e9, 256 * 4096, 1_700_000_005_000], [11, 'runtime', 0.5e9, 256 * 4096, 1_700_000_005_000],
  ]);
  rmSync(join(proc, '11'), { recursive: true });
  add(13, '111', 'node kube-proxy/dist/main.js', 1);
  now = 1000;
  assert.deepEqual((await p.sample()).map((x) => x.pid), [10], 'gone is left out; new ones wait for the rescan');
  assert.deepEqual((await p.sample()).map((x) => [x.pid, x.role]), [[10, 'kubelet'], [13, 'misc']], 'a member gone forces a rescan');
});
