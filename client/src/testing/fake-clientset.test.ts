import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, Nodes, Pods, errors, isAlreadyExists, isConflict, isNotFound, isResourceExpired, type KubeObject, type WatchEvent } from '@mk8s/api';
import { FakeClientset, formatAction } from './fake-clientset.js';
import { newControllerFixture } from './controller-fixture.js';
import type { Reconciler, SharedInformer } from '../interfaces.js';
import type { FakeClientset as FC } from './fake-clientset.js';
import { objectKey } from '../helpers.js';

const pod = (name: string, labels: Record<string, string> = {}, ns = 'default'): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

async function take<T>(it: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) { const r = await it.next(); if (r.done) break; out.push(r.value); }
  return out;
}

describe('FakeClientset', () => {
  test('create/get/update/delete with resourceVersions and CAS', async () => {
    const c = new FakeClientset();
    const pods = c.resource(Pods, 'default');
    const p = await pods.create(pod('a'));
    assert.match(p.metadata.resourceVersion!, /^\d+$/);
    assert.ok(p.metadata.uid);
    await assert.rejects(pods.create(pod('a')), isAlreadyExists);
    const u = await pods.update({ ...p, metadata: { ...p.metadata, labels: { x: 'y' } } });
    assert.ok(Number(u.metadata.resourceVersion) > Number(p.metadata.resourceVersion));
    await assert.rejects(pods.update(p), isConflict);
    await pods.delete('a');
    await assert.rejects(pods.get('a'), isNotFound);
    assert.deepEqual(c.actions().map(formatAction), ['create pods', 'create pods', 'update pods', 'update pods', 'delete pods', 'get pods']);
  });

  test('generateName, label and field selectors', async () => {
    const c = new FakeClientset();
    const pods = c.resource(Pods, 'default');
    const g = await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: '', generateName: 'web-' } } as KubeObject);
    assert.match(g.metadata.name, /^web-[a-z0-9]{5}$/);
    await pods.create(pod('a', { app: 'x', tier: 'fe' }));
    await pods.create(pod('b', { app: 'y' }));
    await c.resource(Pods, 'other').create(pod('c', { app: 'x' }, 'other'));
    const names = async (o: { labelSelector?: string; fieldSelector?: string }, ns?: string) =>
      (await c.resource(Pods, ns).list(o)).items.map((p) => p.metadata.name).sort();
    assert.deepEqual(await names({ labelSelector: 'app=x' }), ['a', 'c']);
    assert.deepEqual(await names({ labelSelector: 'app=x' }, 'default'), ['a']);
    assert.deepEqual(await names({ labelSelector: 'app in (x,y),!tier' }), ['b', 'c']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.name=b' }), ['b']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.namespace!=default' }), ['c']);
  });

  test('updateStatus keeps only status; patch types', async () => {
    const c = new FakeClientset();
    const pods = c.resource(Pods, 'default');
    const p = await pods.create(pod('a'));
    const s = await pods.updateStatus({ ...p, metadata: { ...p.metadata, labels: { changed: 'yes' } }, status: { phase: 'Running' } });
    assert.deepEqual(s['status'], { phase: 'Running' });
    assert.deepEqual(s.metadata.labels, {});
    const m = await pods.patch('a', 'merge', { metadata: { labels: { a: '1' } } });
    assert.deepEqual(m.metadata.labels, { a: '1' });
    const j = await pods.patch('a', 'json', [{ op: 'add', path: '/metadata/labels/b', value: '2' }]);
    assert.deepEqual(j.metadata.labels, { a: '1', b: '2' });
    const sm = await pods.patch('a', 'strategic', { spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    assert.deepEqual((sm['spec'] as { containers: unknown[] }).containers, [{ name: 'c', image: 'nginx' }]);
    assert.equal(c.actions().at(-1)?.patchType, 'strategic');
  });

  test('finalizers defer deletion until removed', async () => {
    const c = new FakeClientset();
    const cms = c.resource(ConfigMaps, 'default');
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f', finalizers: ['x/y'] } } as KubeObject);
    await cms.delete('f');
    const d = await cms.get('f');
    assert.ok(d.metadata.deletionTimestamp);
    await cms.update({ ...d, metadata: { ...d.metadata, finalizers: [] } });
    await assert.rejects(cms.get('f'), isNotFound);
  });

  test('reactors inject errors and results', async () => {
    const c = new FakeClientset();
    c.prependReactor('create', 'pods', () => { throw errors.internal('boom'); });
    await assert.rejects(c.resource(Pods, 'default').create(pod('a')), /boom/);
    c.prependReactor('get', '*', (a) => ({ handled: true, result: { metadata: { name: a.name! } } }));
    assert.equal((await c.resource(Nodes).get('n1')).metadata.name, 'n1');
  });

  test('watch: initial ADDED, live events, selector transitions, resume and 410', async () => {
    const c = new FakeClientset();
    const pods = c.resource(Pods, 'default');
    await pods.create(pod('a', { app: 'x' }));
    const ac = new AbortController();
    const it = pods.watch({ labelSelector: 'app=x', signal: ac.signal })[Symbol.asyncIterator]();
    const first = await take(it, 1);
    assert.deepEqual(first.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED a']);
    const b = await pods.create(pod('b', { app: 'y' }));
    await pods.patch('b', 'merge', { metadata: { labels: { app: 'x' } } });
    await pods.patch('a', 'merge', { metadata: { labels: { app: 'z' } } });
    const ev = await take(it, 2);
    assert.deepEqual(ev.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED b', 'DELETED a']);
    ac.abort();
    assert.equal((await it.next()).done, true);

    const resumed = pods.watch({ resourceVersion: b.metadata.resourceVersion! })[Symbol.asyncIterator]();
    const r = await take(resumed, 2);
    assert.deepEqual(r.map((e: WatchEvent) => `${e.type} ${e.object.metadata.name}`), ['MODIFIED b', 'MODIFIED a']);
    c.tracker.closeWatches();
    c.tracker.compact();
    const old = pods.watch({ resourceVersion: '1' })[Symbol.asyncIterator]();
    await assert.rejects(old.next(), isResourceExpired);
  });

  test('binding sets nodeName once', async () => {
    const c = new FakeClientset();
    const pods = c.resource(Pods, 'default');
    await pods.create(pod('a'));
    await pods.createSubresource('a', 'binding', { target: { kind: 'Node', name: 'n1' } });
    assert.equal(((await pods.get('a'))['spec'] as { nodeName: string }).nodeName, 'n1');
    await assert.rejects(pods.createSubresource('a', 'binding', { target: { kind: 'Node', name: 'n2' } }), isConflict);
    assert.equal(formatAction(c.actions()[1]!), 'create pods/binding');
  });
});

describe('newControllerFixture', () => {
  class LabelCopier implements Reconciler {
    constructor(private readonly d: { client: FC; pods: SharedInformer }) {}
    async reconcile(key: string): Promise<void> {
      const p = this.d.pods.lister.get(key);
      if (!p || p.metadata.labels?.['copied']) return;
      await this.d.client.resource(Pods, p.metadata.namespace).patch(p.metadata.name, 'merge', { metadata: { labels: { copied: 'true' } } });
    }
  }
  const cases = [
    { name: 'patches a pod without the label', labels: {}, want: ['patch pods'] },
    { name: 'does nothing when already labelled', labels: { copied: 'true' }, want: [] },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const f = newControllerFixture();
      const p = f.seed(pod('web', tc.labels));
      f.build(LabelCopier);
      const { actions } = await f.reconcile(objectKey(p));
      assert.deepEqual(actions.map(formatAction), tc.want);
      assert.equal(f.informers.informerFor(Pods).hasSynced(), true);
    });
  }

  test('objects seeded after build reach the informer cache', async () => {
    const f = newControllerFixture();
    const c = f.build((ctx) => new LabelCopier({ client: ctx.client, pods: ctx.informers.informerFor(Pods) }));
    f.seed(pod('late'));
    await f.reconcile('default/late');
    assert.deepEqual(f.actions(), ['patch pods']);
    assert.ok(c);
  });
});
