import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterExit, decide, type ProcessStatus, type SupervisedSpec } from './supervisor.js';

const spec = (hold?: boolean): SupervisedSpec => ({ name: 'etcd-1', command: 'etcd', args: [], ...(hold ? { hold } : {}) });
const T = Date.parse('2026-12-02T04:00:00Z');
const st = (s: Partial<ProcessStatus>): ProcessStatus => ({ name: 'etcd-1', state: 'running', restarts: 0, ...s });

for (const tc of [
  { name: 'a new spec starts', spec: spec(), status: undefined, alive: false, want: 'start' },
  { name: 'a new spec whose process runs is adopted', spec: spec(), status: undefined, alive: true, want: 'adopt' },
  { name: 'a new spec on hold is only recorded', spec: spec(true), status: undefined, alive: false, want: 'hold' },
  { name: 'a running process is left alone', spec: spec(), status: st({}), alive: true, want: 'none' },
  { name: 'a running process put on hold is stopped', spec: spec(true), status: st({}), alive: true, want: 'stop' },
  { name: 'a stopping process is waited for', spec: spec(true), status: st({ state: 'stopping' }), alive: true, want: 'none' },
  { name: 'a held process stays stopped', spec: spec(true), status: st({ state: 'held' }), alive: false, want: 'none' },
  { name: 'a released process starts', spec: spec(), status: st({ state: 'held' }), alive: false, want: 'start' },
  { name: 'in back-off before its time: waits', spec: spec(), status: st({ state: 'backoff', nextStartAt: new Date(T + 1).toISOString() }), alive: false, want: 'none' },
  { name: 'in back-off at its time: starts', spec: spec(), status: st({ state: 'backoff', nextStartAt: new Date(T).toISOString() }), alive: false, want: 'start' },
  { name: 'in back-off and put on hold: held', spec: spec(true), status: st({ state: 'backoff', nextStartAt: new Date(T).toISOString() }), alive: false, want: 'hold' },
] as const) test(`decide: ${tc.name}`, () => assert.equal(decide(tc.spec, tc.status, tc.alive, T), tc.want));

test('afterExit: a quick exit backs off 1s, then 2s, recording the signal', () => {
  const first = afterExit(st({ pid: 7, startedAt: new Date(T - 500).toISOString() }), { code: null, signal: 'SIGKILL' }, T, false);
  assert.deepEqual(first, {
    name: 'etcd-1', state: 'backoff', restarts: 0, startedAt: new Date(T - 500).toISOString(),
    lastExit: { code: null, signal: 'SIGKILL', at: new Date(T).toISOString() }, delayMs: 1000, nextStartAt: new Date(T + 1000).toISOString(),
  });
  const second = afterExit({ ...first, state: 'running', restarts: 1, startedAt: new Date(T + 1000).toISOString() }, { code: 1, signal: null }, T + 2000, false);
  assert.equal(second.delayMs, 2000);
  assert.equal(second.nextStartAt, new Date(T + 4000).toISOString());
  assert.deepEqual(second.lastExit, { code: 1, signal: null, at: new Date(T + 2000).toISOString() });
});

test('afterExit: 5 min up resets the back-off', () => {
  const s = afterExit(st({ delayMs: 30_000, startedAt: new Date(T - 5 * 60_000).toISOString() }), { code: 0, signal: null }, T, false);
  assert.equal(s.delayMs, 1000);
});

test('afterExit: a stop on hold ends held, without a restart time', () => {
  const s = afterExit(st({ state: 'stopping', pid: 9, startedAt: new Date(T - 1).toISOString() }), { code: 0, signal: null }, T, true);
  assert.equal(s.state, 'held');
  assert.equal(s.pid, undefined);
  assert.equal(s.nextStartAt, undefined);
});
