import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Events, errors, type KubeObject } from '@mk8s/api';
import { FakeClock } from '@mk8s/component-base/testing';
import { FakeClientset, formatAction } from './testing/fake-clientset.js';
import { createEventRecorder } from './event-recorder.js';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'ns1', uid: 'u1', resourceVersion: '5' } };
const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', uid: 'u2' } };
type Ev = KubeObject & { count: number; reason: string; message: string; type: string; firstTimestamp: string; lastTimestamp: string; involvedObject: Record<string, string>; source: Record<string, string>; reportingComponent: string };

describe('event recorder', () => {
  test('writes an Event in the object namespace with involvedObject and source', async () => {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const c = new FakeClientset({ clock });
    const r = createEventRecorder({ client: c, component: 'default-scheduler', host: 'h', clock });
    r.event(pod, 'Normal', 'Scheduled', 'Successfully assigned %s/%s to %s', 'ns1', 'web-1', 'n1');
    await r.flush();
    const [ev] = (await c.resource(Events, 'ns1').list()).items as Ev[];
    assert.ok(ev);
    assert.equal(ev.message, 'Successfully assigned ns1/web-1 to n1');
    assert.equal(ev.type, 'Normal');
    assert.equal(ev.count, 1);
    assert.deepEqual(ev.involvedObject, { kind: 'Pod', namespace: 'ns1', name: 'web-1', uid: 'u1', apiVersion: 'v1', resourceVersion: '5' });
    assert.deepEqual(ev.source, { component: 'default-scheduler', host: 'h' });
    assert.equal(ev.reportingComponent, 'default-scheduler');
    assert.equal(ev.firstTimestamp, '2024-01-01T00:00:00Z');
    assert.match(ev.metadata.name, /^web-1\.[0-9a-f]+$/);
  });

  test('cluster-scoped objects get events in default', async () => {
    const c = new FakeClientset();
    const r = createEventRecorder({ client: c, component: 'node-controller' });
    r.event(node, 'Warning', 'NodeNotReady', 'Node n1 status is now: NodeNotReady');
    await r.flush();
    assert.equal((await c.resource(Events, 'default').list()).items.length, 1);
  });

  test('identical events within 10 minutes bump count via patch; later ones are new', async () => {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const c = new FakeClientset({ clock });
    const r = createEventRecorder({ client: c, component: 'kubelet', clock });
    r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
    clock.step(60_000);
    r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
    r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
    await r.flush();
    assert.deepEqual(c.actions().map(formatAction), ['create events', 'patch events', 'patch events']);
    const items = (await c.resource(Events, 'ns1').list()).items as Ev[];
    assert.equal(items.length, 1);
    assert.equal(items[0]!.count, 3);
    assert.equal(items[0]!.lastTimestamp, '2024-01-01T00:01:00Z');
    clock.step(11 * 60_000);
    r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
    await r.flush();
    assert.equal((await c.resource(Events, 'ns1').list()).items.length, 2);
  });

  test('never throws to the caller; failed writes are logged and skipped', async () => {
    const c = new FakeClientset();
    c.prependReactor('create', 'events', () => ({ handled: true, error: errors.internal('down') }));
    const r = createEventRecorder({ client: c, component: 'x' });
    assert.doesNotThrow(() => r.event(pod, 'Normal', 'A', 'b'));
    await r.flush();
    assert.doesNotThrow(() => r.event({} as never, 'Normal', 'A', 'b'));
    await r.flush();
  });
});

describe('event recorder correlation', () => {
  test('many distinct messages for one reason collapse into one combined event', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ clock });
    const r = createEventRecorder({ client: c, component: 'kubelet', clock });
    for (let i = 0; i < 12; i++) r.event(pod, 'Warning', 'Failed', `failure ${i}`);
    await r.flush();
    const items = (await c.resource(Events, 'ns1').list()).items as Ev[];
    assert.equal(items.length, 10, '9 distinct + 1 combined');
    const combined = items.find((e) => e.message.startsWith('(combined from similar events): '));
    assert.ok(combined);
    assert.equal(combined.count, 3);
    assert.equal(combined.message, '(combined from similar events): failure 11');
  });

  test('spam filter: 25 events per object, then one per 5 minutes', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ clock });
    const r = createEventRecorder({ client: c, component: 'kubelet', clock });
    for (let i = 0; i < 30; i++) r.event(pod, 'Normal', `R${i}`, 'm');
    await r.flush();
    assert.equal(c.actions().length, 25);
    clock.step(300_000);
    r.event(pod, 'Normal', 'Later', 'm');
    r.event(pod, 'Normal', 'Later2', 'm');
    await r.flush();
    assert.equal(c.actions().length, 26);
  });
});
