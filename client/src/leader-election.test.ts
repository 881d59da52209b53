import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Leases, errors, type KubeObject } from '@mk8s/api';
import { FakeClock } from '@mk8s/component-base/testing';
import { FakeClientset } from './testing/fake-clientset.js';
import { formatMicroTime, LeaderElector, runLeaderElection, type LeaderElectionOptions } from './leader-election.js';
import type { Clock } from '@mk8s/component-base';

const flush = async (n = 20) => { for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r)); };
/** Advances the fake clock in steps, letting async continuations run between them. */
async function advance(clock: FakeClock, ms: number, stepMs = 100): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) { clock.step(Math.min(stepMs, ms - t)); await flush(3); }
}
type LeaseSpec = { holderIdentity?: string; leaseTransitions?: number; renewTime?: string; acquireTime?: string; leaseDurationSeconds?: number };
const spec = async (c: FakeClientset) => ((await c.resource(Leases, 'kube-system').get('lock')) as KubeObject & { spec: LeaseSpec }).spec;

function elector(c: FakeClientset, clock: FakeClock, identity: string, extra: Partial<LeaderElectionOptions> = {}) {
  const ac = new AbortController();
  const state = { leading: false, stopped: false, leadingSignal: undefined as AbortSignal | undefined };
  const done = runLeaderElection({
    client: c, clock, identity, lock: { namespace: 'kube-system', name: 'lock' }, signal: ac.signal,
    onStartedLeading: (s) => { state.leading = true; state.leadingSignal = s; },
    onStoppedLeading: () => { state.stopped = true; },
    ...extra,
  });
  return { ac, state, done };
}

describe('leader election', () => {
  test('formats MicroTime with microseconds', () => {
    assert.equal(formatMicroTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), '2024-01-02T03:04:05.678000Z');
  });

  test('creates a free lease, leads, and renews it', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ clock });
    const e = elector(c, clock, 'a');
    await flush();
    assert.equal(e.state.leading, true);
    const s1 = await spec(c);
    assert.equal(s1.holderIdentity, 'a');
    assert.equal(s1.leaseTransitions, 0);
    assert.equal(s1.leaseDurationSeconds, 15);
    assert.match(s1.renewTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    await advance(clock, 2_100);
    const s2 = await spec(c);
    assert.notEqual(s2.renewTime, s1.renewTime);
    assert.equal(s2.acquireTime, s1.acquireTime);
    e.ac.abort();
    await e.done;
    assert.equal(e.state.stopped, true);
    assert.equal(e.state.leadingSignal?.aborted, true);
    assert.equal((await spec(c)).holderIdentity, '', 'released on cancel');
  });

  test('a second candidate waits, then takes over an expired lease with leaseTransitions+1', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ clock });
    const a = elector(c, clock, 'a', { releaseOnCancel: false });
    await flush();
    assert.equal(a.state.leading, true);
    const b = elector(c, clock, 'b');
    await advance(clock, 6_000);
    assert.equal(b.state.leading, false, 'lease is live');
    // a dies without releasing: it stops renewing.
    a.ac.abort();
    await a.done;
    await advance(clock, 10_000);
    assert.equal(b.state.leading, false, 'not before the lease duration has passed since last seen renewal');
    await advance(clock, 8_000);
    assert.equal(b.state.leading, true);
    const s = await spec(c);
    assert.equal(s.holderIdentity, 'b');
    assert.equal(s.leaseTransitions, 1);
    b.ac.abort();
    await b.done;
  });

  test('acquireRetryDelayMs: the jittered retry period, shortened to the observed expiry', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ clock });
    const le = new LeaderElector({ client: c, clock, identity: 'b', lock: { namespace: 'kube-system', name: 'lock' }, signal: new AbortController().signal, onStartedLeading: () => undefined });
    const d0 = le.acquireRetryDelayMs(clock.now());
    assert.ok(d0 >= 2000 && d0 <= 2400, `nothing observed: ${d0}`);
    await c.resource(Leases, 'kube-system').create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lock', namespace: 'kube-system' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: formatMicroTime(clock.now()) } } as KubeObject);
    assert.equal(await le.tryAcquireOrRenew(), false, 'a holds it');
    const far = le.acquireRetryDelayMs(clock.now() + 5_000);
    assert.ok(far >= 2000 && far <= 2400, `expiry 10 s away: the retry period (${far})`);
    assert.equal(le.acquireRetryDelayMs(clock.now() + 14_000), 1001, 'expiry 1 s away: then, plus 1 ms');
  });

  test('steps down when renewals fail past the renew deadline', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ clock });
    const a = elector(c, clock, 'a');
    await flush();
    assert.equal(a.state.leading, true);
    c.prependReactor('update', 'leases', () => ({ handled: true, error: errors.internal('etcd down') }));
    await advance(clock, 8_000);
    assert.equal(a.state.stopped, false);
    await advance(clock, 4_000);
    await a.done;
    assert.equal(a.state.stopped, true);
    assert.equal(a.state.leadingSignal?.aborted, true);
  });

  test('a conflicting concurrent write means not acquired this round', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ clock });
    await c.resource(Leases, 'kube-system').create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lock', namespace: 'kube-system' }, spec: { holderIdentity: '', leaseDurationSeconds: 1 } } as KubeObject);
    let first = true;
    c.prependReactor('update', 'leases', () => { if (first) { first = false; return { handled: true, error: errors.conflict('leases.coordination.k8s.io', 'lock') }; } return undefined; });
    const a = elector(c, clock, 'a');
    await flush();
    assert.equal(a.state.leading, false);
    await advance(clock, 2_500);
    assert.equal(a.state.leading, true);
    a.ac.abort();
    await a.done;
  });

  test('a leader frozen past the renew deadline holds no lease on resume and steps down without renewing', async () => {
    const fake = new FakeClock();
    // A SIGSTOP: the wall clock moves on while none of the process' timers run.
    let frozenMs = 0;
    const clock: Clock = { now: () => fake.now() + frozenMs, setTimeout: (fn, ms) => fake.setTimeout(fn, ms), sleep: (ms, sig) => fake.sleep(ms, sig) } as Clock;
    const c = new FakeClientset({ clock: fake });
    const ac = new AbortController();
    let stopped = false;
    let leading: AbortSignal | undefined;
    const e = new LeaderElector({ client: c, clock, identity: 'a', lock: { namespace: 'kube-system', name: 'lock' }, signal: ac.signal, releaseOnCancel: false,
      onStartedLeading: (s) => { leading = s; }, onStoppedLeading: () => { stopped = true; } });
    const done = e.run();
    await flush();
    assert.equal(e.holdsLease(), true);
    await advance(fake, 2_100);
    assert.equal(e.holdsLease(), true, 'renewed');
    const renewed = (await spec(c)).renewTime;
    frozenMs = 20_000;
    assert.equal(e.isLeader(), true, 'its renew loop has not run yet');
    assert.equal(e.holdsLease(), false, 'but it may not write: the lease may have passed on');
    await advance(fake, 2_100);
    await done;
    assert.equal(stopped, true);
    assert.equal(leading?.aborted, true);
    assert.equal((await spec(c)).renewTime, renewed, 'stepped down without renewing');
  });
});
