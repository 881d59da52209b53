import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { FakeClientset } from '@mk8s/client/testing';
import { Pods, type Pod, type PodStatus } from '@mk8s/api';
import { StatusManager } from './status-manager.js';
import type { PodObj } from './objects.js';

const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
const st = (phase: string, extra: Partial<PodStatus> = {}): PodStatus => ({ phase, ...extra }) as PodStatus;
const settle = () => new Promise((r) => setImmediate(r));

function setup() {
  const client = new FakeClientset({ objects: [structuredClone(pod) as PodObj] });
  const clock = new FakeClock();
  const sm = new StatusManager({ client, logger: silentLogger(), clock, retryMs: 100 });
  const patches = () => client.actions().filter((a) => a.verb === 'patch' && a.subresource === 'status');
  return { client, clock, sm, patches };
}

describe('StatusManager', () => {
  test('queueStatus writes in the background; statuses queued during a write collapse into one more write of the newest', async () => {
    const { sm, patches } = setup();
    sm.queueStatus(pod, st('Pending'));
    sm.queueStatus(pod, st('Pending', { hostIP: '10.0.0.1' }));
    sm.queueStatus(pod, st('Running', { hostIP: '10.0.0.1' }));
    assert.equal(sm.lastWritten('u1')?.phase, 'Running');
    await sm.setStatus(pod, st('Running', { hostIP: '10.0.0.1' }));
    const bodies = patches().map((a) => (a.object as { status: PodStatus }).status.phase);
    assert.deepEqual(bodies, ['Pending', 'Running']);
    assert.deepEqual((patches()[0]!.object as { metadata: { uid: string } }).metadata, { uid: 'u1' });
  });

  test("a status someone else wrote since (the node controller's Ready False) is written again at the next sync", async () => {
    const { client, sm, patches } = setup();
    const ready = st('Running', { conditions: [{ type: 'Ready', status: 'True' }] });
    assert.equal(await sm.setStatus(pod, ready), true);
    const cur = await client.resource<PodObj>(Pods, 'default').get('p');
    sm.queueStatus(cur, ready);
    await settle();
    assert.equal(patches().length, 1, 'our own write seen back: nothing to do');
    const changed = await client.resource<PodObj>(Pods, 'default').updateStatus({ ...cur, status: st('Running', { conditions: [{ type: 'Ready', status: 'False' }] }) });
    sm.queueStatus(changed, ready);
    await settle(); await settle();
    assert.equal(patches().length, 2, 'written again');
    assert.equal((await client.resource<PodObj>(Pods, 'default').get('p')).status?.conditions?.[0]?.status, 'True');
    sm.queueStatus(changed, ready);
    await settle();
    assert.equal(patches().length, 2, 'the stale pod object (older than our write) does not make it write again');
  });

  test('an unchanged status is not written again', async () => {
    const { sm, patches } = setup();
    assert.equal(await sm.setStatus(pod, st('Running')), true);
    assert.equal(await sm.setStatus(pod, st('Running')), true);
    sm.queueStatus(pod, st('Running'));
    await settle();
    assert.equal(patches().length, 1);
  });

  test('a failed write is retried with the newest status; a gone pod resolves false', async () => {
    const { client, clock, sm, patches } = setup();
    let fail = 1;
    client.prependReactor('patch', 'pods', () => (fail-- > 0 ? { handled: true, error: new Error('boom') } : undefined));
    await assert.rejects(sm.setStatus(pod, st('Pending')), /boom/);
    sm.queueStatus(pod, st('Running'));
    await settle();
    assert.equal(patches().length, 1);
    clock.step(100);
    await settle(); await settle();
    assert.equal(patches().length, 2);
    assert.equal((patches()[1]!.object as { status: PodStatus }).status.phase, 'Running');

    await client.resource<PodObj>(Pods, 'default').delete('p');
    assert.equal(await sm.setStatus(pod, st('Succeeded')), false);
  });

  test('failed writes back off (client rate limiter: 100 ms doubling to the cap), a success resets it', async () => {
    const client = new FakeClientset({ objects: [structuredClone(pod) as PodObj] });
    const clock = new FakeClock();
    const sm = new StatusManager({ client, logger: silentLogger(), clock, retryMs: 100, maxRetryMs: 400 });
    const t0 = clock.now();
    const at: number[] = [];
    let fail = 4;
    client.prependReactor('patch', 'pods', () => { at.push(clock.now() - t0); return fail-- > 0 ? { handled: true, error: new Error('boom') } : undefined; });
    sm.queueStatus(pod, st('Pending'));
    for (let t = 0; t < 2000; t += 50) { await settle(); await settle(); clock.step(50); }
    // Tries at 0, then 100, 200, 400 (capped), 400 ms after each failure; the fifth succeeds.
    assert.deepEqual(at, [0, 100, 300, 700, 1100]);
    fail = 1;
    sm.queueStatus(pod, st('Running'));
    const t1 = clock.now() - t0;
    for (let t = 0; t < 500; t += 50) { await settle(); await settle(); clock.step(50); }
    assert.deepEqual(at.slice(5).map((x) => x - t1), [0, 100], 'the first retry after a success waits the base delay again');
  });
});
