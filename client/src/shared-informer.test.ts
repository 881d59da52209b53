import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Pods, errors, type KubeObject } from '@mk8s/api';
import { FakeClock } from '@mk8s/component-base/testing';
import { FakeClientset } from './testing/fake-clientset.js';
import { createSharedInformer, newInformerFactory } from './shared-informer.js';

const pod = (name: string, labels: Record<string, string> = {}, ns = 'default'): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels } });

/** Lets pending promise chains run (no timers involved). */
async function until(cond: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 1000; i++) { if (cond()) return; await new Promise((r) => setImmediate(r)); }
  assert.fail(`${what} never became true`);
}

function recorder() {
  const events: string[] = [];
  return {
    events,
    handler: {
      onAdd: (o: KubeObject) => events.push(`add ${o.metadata.name}`),
      onUpdate: (_: KubeObject, n: KubeObject) => events.push(`update ${n.metadata.name}`),
      onDelete: (o: KubeObject) => events.push(`delete ${o.metadata.name}`),
    },
  };
}

describe('SharedInformer', () => {
  test('lists, syncs, then delivers watch events in order', async () => {
    const c = new FakeClientset({ objects: [pod('a'), pod('b', {}, 'other')] });
    const inf = createSharedInformer({ client: c, resource: Pods, clock: new FakeClock() });
    const r = recorder();
    inf.addEventHandler(r.handler);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await inf.whenSynced();
    assert.ok(inf.hasSynced());
    assert.deepEqual(r.events.sort(), ['add a', 'add b']);
    assert.deepEqual(inf.lister.list('other').map((p) => p.metadata.name), ['b']);
    assert.equal(inf.lister.get('default/a')?.metadata.name, 'a');
    r.events.length = 0;
    const pods = c.resource(Pods, 'default');
    await until(() => c.actions().some((a) => a.verb === 'watch'), 'watch opened');
    await pods.create(pod('c'));
    await pods.patch('c', 'merge', { metadata: { labels: { x: '1' } } });
    await pods.delete('a');
    await until(() => r.events.length === 3);
    assert.deepEqual(r.events, ['add c', 'update c', 'delete a']);
    assert.equal(inf.lister.get('default/a'), undefined);
    ac.abort();
    await run;
  });

  test('re-watches from the last resourceVersion when a watch ends, without relisting', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ objects: [pod('a')] });
    const inf = createSharedInformer({ client: c, resource: Pods, clock });
    const r = recorder();
    inf.addEventHandler(r.handler);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await until(() => c.actions().filter((a) => a.verb === 'watch').length === 1);
    const b = await c.resource(Pods, 'default').create(pod('b'));
    await until(() => r.events.includes('add b'));
    c.tracker.closeWatches();
    await c.resource(Pods, 'default').create(pod('c')); // happens while disconnected
    await until(() => clock.pending() > 0 || c.actions().filter((a) => a.verb === 'watch').length === 2);
    clock.step(1000);
    await until(() => r.events.includes('add c'), 'event made while disconnected delivered');
    const watches = c.actions().filter((a) => a.verb === 'watch');
    assert.equal(c.actions().filter((a) => a.verb === 'list').length, 1);
    assert.equal((watches[1]!.listOptions as { resourceVersion: string }).resourceVersion, b.metadata.resourceVersion);
    ac.abort();
    await run;
  });

  test('relists after 410 and delivers the difference (add, update, delete)', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ objects: [pod('keep'), pod('change'), pod('gone')] });
    const inf = createSharedInformer({ client: c, resource: Pods, clock });
    const r = recorder();
    inf.addEventHandler(r.handler);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await until(() => c.actions().some((a) => a.verb === 'watch'));
    r.events.length = 0;
    // The "apiserver" goes away: watches fail; changes happen meanwhile; history is compacted.
    let down = true;
    c.prependReactor('watch', 'pods', () => (down ? { handled: true, error: errors.internal('connection refused') } : undefined));
    c.tracker.closeWatches();
    const pods = c.resource(Pods, 'default');
    await pods.create(pod('new'));
    await pods.patch('change', 'merge', { metadata: { labels: { v: '2' } } });
    await pods.delete('gone');
    c.tracker.compact();
    await until(() => clock.pending() > 0, 'backoff scheduled');
    down = false;
    clock.step(60_000);
    await until(() => r.events.length === 3, 'diff delivered');
    assert.deepEqual(r.events.sort(), ['add new', 'delete gone', 'update change']);
    assert.deepEqual(inf.lister.list().map((p) => p.metadata.name).sort(), ['change', 'keep', 'new']);
    ac.abort();
    await run;
  });

  test('watch 410 Expired relists at once', async () => {
    const c = new FakeClientset({ objects: [pod('a')] });
    const inf = createSharedInformer({ client: c, resource: Pods, clock: new FakeClock() });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await until(() => c.actions().some((a) => a.verb === 'watch'));
    c.tracker.failWatches(errors.expired('too old resource version'));
    await until(() => c.actions().filter((a) => a.verb === 'list').length === 2, 'relisted');
    ac.abort();
    await run;
  });

  test('label selector informer sees objects entering and leaving the selection', async () => {
    const c = new FakeClientset({ objects: [pod('a', { app: 'x' }), pod('b', { app: 'y' })] });
    const inf = createSharedInformer({ client: c, resource: Pods, labelSelector: 'app=x', clock: new FakeClock() });
    const r = recorder();
    inf.addEventHandler(r.handler);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await until(() => c.actions().some((a) => a.verb === 'watch'));
    await c.resource(Pods, 'default').patch('b', 'merge', { metadata: { labels: { app: 'x' } } });
    await c.resource(Pods, 'default').patch('a', 'merge', { metadata: { labels: { app: 'z' } } });
    await until(() => r.events.length === 3);
    assert.deepEqual(r.events, ['add a', 'add b', 'delete a']);
    ac.abort();
    await run;
  });

  test('resync redelivers cached objects as updates; late handlers get adds', async () => {
    const clock = new FakeClock();
    const c = new FakeClientset({ objects: [pod('a')] });
    const inf = createSharedInformer({ client: c, resource: Pods, clock, resyncPeriodMs: 10_000 });
    const r = recorder();
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await inf.whenSynced();
    inf.addEventHandler(r.handler);
    assert.deepEqual(r.events, ['add a']);
    clock.step(10_000);
    assert.deepEqual(r.events, ['add a', 'update a']);
    ac.abort();
    await run;
  });

  test('custom indexers and a throwing handler does not stop others', async () => {
    const c = new FakeClientset({ objects: [pod('a', { app: 'x' }), pod('b', { app: 'x' }), pod('c', { app: 'y' })] });
    const inf = createSharedInformer({ client: c, resource: Pods, clock: new FakeClock() });
    inf.addIndexer('app', (p) => [p.metadata.labels?.['app'] ?? '']);
    inf.addEventHandler({ onAdd: () => { throw new Error('bad handler'); } });
    const r = recorder();
    inf.addEventHandler(r.handler);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await inf.whenSynced();
    assert.deepEqual(inf.lister.byIndex('app', 'x').map((p) => p.metadata.name).sort(), ['a', 'b']);
    assert.equal(r.events.length, 3);
    ac.abort();
    await run;
  });
});

describe('SharedInformerFactory', () => {
  test('shares one informer per resource+options and waits for all to sync', async () => {
    const c = new FakeClientset({ objects: [pod('a')] });
    const f = newInformerFactory({ client: c, clock: new FakeClock() });
    const i1 = f.informerFor(Pods);
    assert.equal(f.informerFor(Pods), i1);
    assert.notEqual(f.informerFor(Pods, { namespace: 'default' }), i1);
    const ac = new AbortController();
    f.start(ac.signal);
    assert.equal(await f.waitForCacheSync(ac.signal), true);
    const late = f.informerFor(Pods, { labelSelector: 'x=y' });
    assert.equal(await f.waitForCacheSync(ac.signal), true);
    assert.ok(late.hasSynced());
    ac.abort();
  });
});
