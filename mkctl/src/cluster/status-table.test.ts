import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatStatusTable, shortDuration } from './status-table.js';

const T = Date.parse('2026-12-02T04:10:00Z');
const ago = (ms: number) => new Date(T - ms).toISOString();

for (const tc of [
  { ms: 0, want: '0s' }, { ms: 59_999, want: '59s' }, { ms: 61_000, want: '1m01s' }, { ms: 3 * 3600_000 + 5 * 60_000, want: '3h05m' }, { ms: -5, want: '0s' },
]) test(`shortDuration(${tc.ms}) = ${tc.want}`, () => assert.equal(shortDuration(tc.ms), tc.want));

test('the table shows restarts, the last exit and back-off', () => {
  const lines = formatStatusTable([
    { name: 'apiserver', alive: true, pid: 42, status: { name: 'apiserver', state: 'running', pid: 42, startedAt: ago(125_000), restarts: 0 } },
    { name: 'etcd-2', alive: true, pid: 77, status: { name: 'etcd-2', state: 'running', pid: 77, startedAt: ago(10_000), restarts: 2, lastExit: { code: null, signal: 'SIGKILL', at: ago(11_000) } } },
    { name: 'node-1-kubelet', alive: false, status: { name: 'node-1-kubelet', state: 'backoff', restarts: 3, lastExit: { code: 1, signal: null, at: ago(1_000) }, nextStartAt: new Date(T + 3_000).toISOString() } },
    { name: 'scheduler', alive: false },
  ], T);
  assert.deepEqual(lines, [
    'NAME             STATE                      PID   UPTIME   RESTARTS   LAST EXIT',
    'apiserver        running                    42    2m05s    0          -',
    'etcd-2           running                    77    10s      2          signal SIGKILL, 11s ago (04:09:49Z)',
    'node-1-kubelet   BACK-OFF (restart in 3s)   -     -        3          code 1, 1s ago (04:09:59Z)',
    'scheduler        NOT RUNNING                -     -        -          -',
  ]);
});
