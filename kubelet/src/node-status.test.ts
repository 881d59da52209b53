import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { FakeClientset, FakeEventRecorder } from '@mk8s/client/testing';
import { FakeRuntimeService } from '@mk8s/proto/testing';
import { NodeStatusManager } from './node-status.js';

const machine = { cpu: 2, memoryKi: 1024, ephemeralKi: 2048, osImage: 'Test', kernelVersion: '6.0', arch: 'amd64', machineID: 'm', bootID: 'b', hostname: 'h' };

function fixture() {
  const clock = new FakeClock();
  const client = new FakeClientset({ clock });
  const runtime = new FakeRuntimeService({ now: () => clock.now() });
  const manager = new NodeStatusManager({
    client, runtime, recorder: new FakeEventRecorder(), clock, logger: silentLogger(),
    nodeName: 'node-1', nodeIP: '10.240.0.11', rootDir: '/nonexistent', machine,
  });
  const settle = async () => { for (let i = 0; i < 30; i++) await new Promise((r) => setImmediate(r)); };
  /** When (fake ms after t0) each write of kind happened. */
  const writes = (t0: number, times: Map<number, number>, match: (a: ReturnType<FakeClientset['actions']>[number]) => boolean) =>
    client.actions().map((a, i) => ({ a, i })).filter(({ a }) => match(a)).map(({ i }) => times.get(i)! - t0);
  return { clock, client, runtime, manager, settle, writes };
}

/** Steps the clock by stepMs up to totalMs, recording the fake time of every action. */
async function advance(f: ReturnType<typeof fixture>, totalMs: number, stepMs: number, times: Map<number, number>): Promise<void> {
  const stamp = () => { f.client.actions().forEach((_a, i) => { if (!times.has(i)) times.set(i, f.clock.now()); }); };
  await f.settle(); stamp();
  for (let t = 0; t < totalMs; t += stepMs) { f.clock.step(stepMs); await f.settle(); stamp(); }
}

test('registration retries with back-off (500 ms doubling), then the Lease every 10 s and status on change or every minute', async () => {
  const f = fixture();
  let failures = 3;
  f.client.prependReactor('create', 'nodes', () => (failures-- > 0 ? { handled: true, error: new Error('connection refused') } : undefined));
  const t0 = f.clock.now();
  let leaseFailures = 1;
  f.client.prependReactor('get', 'leases', () => (f.clock.now() - t0 >= 20_000 && leaseFailures-- > 0 ? { handled: true, error: new Error('timeout') } : undefined));
  const ctl = new AbortController();
  const times = new Map<number, number>();
  const running = f.manager.run(ctl.signal);
  await advance(f, 75_000, 100, times);
  ctl.abort();
  await running;

  const creates = f.writes(t0, times, (a) => a.verb === 'create' && a.resource === 'nodes');
  // Three refused creates, retried 500, 1000, 2000 ms apart (upstream registerWithAPIServer doubles to 7 s).
  assert.deepEqual(creates, [0, 500, 1500, 3500]);
  assert.equal(f.manager.isRegistered(), true);
  const registeredAt = 3500;
  // The Lease is created at once, then renewed every 10 s; the one failed renewal did not end the loop.
  const leaseWrites = f.writes(t0, times, (a) => a.resource === 'leases' && (a.verb === 'create' || a.verb === 'update'));
  assert.deepEqual(leaseWrites, [0, 10_000, 30_000, 40_000, 50_000, 60_000, 70_000].map((t) => t + registeredAt), `lease writes at ${leaseWrites.join(', ')}`);
  // Status: posted with the registration, then unchanged until the minute's report (checked every 10 s).
  const statusWrites = f.writes(t0, times, (a) => a.verb === 'patch' && a.resource === 'nodes' && a.subresource === 'status');
  assert.deepEqual(statusWrites, [registeredAt, registeredAt + 60_000], `status writes at ${statusWrites.join(', ')}`);
});

test('a changed status is posted at the next 10 s check; abort ends the loops', async () => {
  const f = fixture();
  const ctl = new AbortController();
  const t0 = f.clock.now();
  const times = new Map<number, number>();
  const running = f.manager.run(ctl.signal);
  await advance(f, 5_000, 100, times);
  const status = f.runtime.status.bind(f.runtime);
  f.runtime.status = async () => ({ conditions: (await status()).conditions.map((c) => (c.type === 'NetworkReady' ? { ...c, status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' } : c)) });
  await advance(f, 6_000, 100, times);
  const patches = f.client.actions().filter((a) => a.verb === 'patch' && a.subresource === 'status');
  assert.equal(patches.length, 2);
  const ready = (patches[1]!.object as { status: { conditions: { type: string; status: string; message: string }[] } }).status.conditions.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'False');
  assert.match(ready?.message ?? '', /NetworkReady=false reason:NetworkPluginNotReady/);
  assert.equal(times.get(f.client.actions().indexOf(patches[1]!))! - t0, 10_000);
  ctl.abort();
  await running;
  const n = f.client.actions().length;
  f.clock.step(60_000); await f.settle();
  assert.equal(f.client.actions().length, n, 'no writes after abort');
});
