/**
 * One conformance suite for Clientset implementations (STYLE rule 6): the same tests run against
 * FakeClientset (unit) and RestClientset on the real apiserver (integration), which is what keeps
 * the fake honest.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, Deployments, Pods, isAlreadyExists, isBadRequest, isConflict, isNotFound, type KubeObject, type WatchEvent } from '@mk8s/api';
import type { Clientset } from '../interfaces.js';

export interface ClientsetConformanceFixture {
  client: Clientset;
  /** A namespace that exists and is empty of this suite's objects. */
  namespace: string;
  teardown?(): Promise<void>;
}

type CM = KubeObject & { data?: Record<string, string> };
const cm = (name: string, ns: string, o: { data?: Record<string, string>; labels?: Record<string, string>; finalizers?: string[] } = {}): CM =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(o.labels ? { labels: o.labels } : {}), ...(o.finalizers ? { finalizers: o.finalizers } : {}) }, ...(o.data ? { data: o.data } : {}) });
const pod = (name: string, ns: string): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

async function collect<T extends KubeObject>(it: AsyncIterable<WatchEvent<T>>, n: number, ac: AbortController, keep: (e: WatchEvent<T>) => boolean): Promise<string[]> {
  const out: string[] = [];
  for await (const ev of it) {
    if (ev.type === 'BOOKMARK' || !keep(ev)) continue;
    out.push(`${ev.type} ${ev.object.metadata.name}`);
    if (out.length >= n) { ac.abort(); break; }
  }
  return out;
}

/** Defines the suite; setup is called once per test. */
export function defineClientsetConformance(name: string, setup: () => Promise<ClientsetConformanceFixture>): void {
  describe(`Clientset conformance: ${name}`, () => {
    const withFixture = (title: string, fn: (f: ClientsetConformanceFixture) => Promise<void>) =>
      test(title, async () => { const f = await setup(); try { await fn(f); } finally { await f.teardown?.(); } });

    withFixture('create sets uid, resourceVersion, creationTimestamp; a second create is AlreadyExists', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      const a = await c.create(cm('conf-a', namespace, { data: { k: 'v' } }));
      assert.ok(a.metadata.uid);
      assert.match(a.metadata.resourceVersion ?? '', /^\d+$/);
      assert.ok(a.metadata.creationTimestamp);
      assert.equal(a.metadata.namespace, namespace);
      await assert.rejects(c.create(cm('conf-a', namespace)), isAlreadyExists);
    });

    withFixture('create with a namespace other than the request path is BadRequest', async ({ client, namespace }) => {
      await assert.rejects(client.resource<CM>(ConfigMaps, namespace).create(cm('conf-ns', `${namespace}-other`)), isBadRequest);
    });

    withFixture('generateName makes a unique name with a 5-character suffix', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      const g = await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '', generateName: 'conf-g-', namespace } } as CM);
      assert.match(g.metadata.name, /^conf-g-[a-z0-9]{5}$/);
    });

    withFixture('update is compare-and-swap on resourceVersion', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      const a = await c.create(cm('conf-u', namespace, { data: { k: '1' } }));
      const b = await c.update({ ...a, data: { k: '2' } });
      assert.ok(BigInt(b.metadata.resourceVersion!) > BigInt(a.metadata.resourceVersion!));
      await assert.rejects(c.update({ ...a, data: { k: '3' } }), isConflict);
      assert.equal((await c.get('conf-u')).data?.['k'], '2');
    });

    withFixture('get and delete of a missing object are NotFound', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      await assert.rejects(c.get('conf-missing'), isNotFound);
      await assert.rejects(c.delete('conf-missing'), isNotFound);
    });

    withFixture('merge, json and strategic patches', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      await c.create(cm('conf-p', namespace, { data: { a: '1', b: '2' } }));
      assert.deepEqual((await c.patch('conf-p', 'merge', { data: { b: null, c: '3' } })).data, { a: '1', c: '3' });
      assert.deepEqual((await c.patch('conf-p', 'json', [{ op: 'replace', path: '/data/a', value: 'x' }])).data, { a: 'x', c: '3' });
      assert.deepEqual((await c.patch('conf-p', 'strategic', { metadata: { labels: { l: 'v' } } })).metadata.labels, { l: 'v' });
      await assert.rejects(c.patch('conf-p-missing', 'merge', { data: {} }), isNotFound);
    });

    withFixture('updateStatus changes only status', async ({ client, namespace }) => {
      const c = client.resource<KubeObject>(Pods, namespace);
      const p = await c.create(pod('conf-s', namespace));
      const s = await c.updateStatus({ ...p, metadata: { ...p.metadata, labels: { ignored: 'yes' } }, status: { ...(p['status'] as object), phase: 'Running' } });
      assert.equal((s['status'] as { phase: string }).phase, 'Running');
      assert.equal(s.metadata.labels?.['ignored'], undefined);
    });

    withFixture('pods/binding sets spec.nodeName', async ({ client, namespace }) => {
      const c = client.resource<KubeObject>(Pods, namespace);
      await c.create(pod('conf-b', namespace));
      await c.createSubresource('conf-b', 'binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'conf-b', namespace }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } });
      assert.equal(((await c.get('conf-b'))['spec'] as { nodeName?: string }).nodeName, 'node-1');
    });

    withFixture('label and field selectors filter lists', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      await c.create(cm('conf-l1', namespace, { labels: { suite: 'conf', tier: 'a' } }));
      await c.create(cm('conf-l2', namespace, { labels: { suite: 'conf', tier: 'b' } }));
      await c.create(cm('conf-l3', namespace, { labels: { suite: 'other' } }));
      const names = async (o: { labelSelector?: string; fieldSelector?: string }) => (await c.list(o)).items.map((x) => x.metadata.name).sort();
      assert.deepEqual(await names({ labelSelector: 'suite=conf' }), ['conf-l1', 'conf-l2']);
      assert.deepEqual(await names({ labelSelector: 'suite=conf,tier!=a' }), ['conf-l2']);
      assert.deepEqual(await names({ labelSelector: 'tier in (a,b)' }), ['conf-l1', 'conf-l2']);
      assert.deepEqual(await names({ fieldSelector: 'metadata.name=conf-l3' }), ['conf-l3']);
    });

    withFixture('delete with a stale uid precondition is Conflict', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      await c.create(cm('conf-pre', namespace));
      await assert.rejects(c.delete('conf-pre', { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }), isConflict);
      await c.delete('conf-pre');
    });

    withFixture('metadata.generation starts at 1, moves with spec, not with status', async ({ client, namespace }) => {
      const c = client.resource<KubeObject>(Deployments, namespace);
      const labels = { app: 'conf-gen' };
      const d = await c.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'conf-gen', namespace },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } });
      assert.equal(d.metadata.generation, 1);
      const s = await c.updateStatus({ ...d, status: { observedGeneration: 1, replicas: 0 } });
      assert.equal(s.metadata.generation, 1);
      const p = await c.patch('conf-gen', 'merge', { spec: { replicas: 2 } });
      assert.equal(p.metadata.generation, 2);
      const l = await c.patch('conf-gen', 'merge', { metadata: { labels: { x: 'y' } } });
      assert.equal(l.metadata.generation, 2);
    });

    withFixture('scale: an update of the scale read sets spec.replicas; a stale resourceVersion is Conflict', async ({ client, namespace }) => {
      const c = client.resource<KubeObject>(Deployments, namespace);
      const labels = { app: 'conf-scale' };
      await c.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'conf-scale', namespace },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } });
      type Scale = KubeObject & { spec: { replicas: number }; status: { selector?: string } };
      const read = await c.getSubresource('conf-scale', 'scale') as Scale;
      assert.equal(read.kind, 'Scale');
      assert.equal(read.spec.replicas, 1);
      assert.equal(read.status.selector, 'app=conf-scale');
      const written = await c.updateSubresource('conf-scale', 'scale', { ...read, spec: { replicas: 3 } }) as Scale;
      assert.equal(written.spec.replicas, 3);
      assert.ok(Number(written.metadata.resourceVersion) > Number(read.metadata.resourceVersion));
      const d = await c.get('conf-scale') as KubeObject & { spec: { replicas: number } };
      assert.equal(d.spec.replicas, 3);
      assert.equal(d.metadata.generation, 2);
      await assert.rejects(c.updateSubresource('conf-scale', 'scale', { ...read, spec: { replicas: 5 } }), isConflict);
      assert.equal((await c.get('conf-scale') as KubeObject & { spec: { replicas: number } }).spec.replicas, 3);
    });

    withFixture('a pod bound to a node is deleted gracefully; gracePeriodSeconds 0 removes it', async ({ client, namespace }) => {
      const c = client.resource<KubeObject>(Pods, namespace);
      await c.create({ ...pod('conf-grace', namespace), spec: { nodeName: 'node-1', terminationGracePeriodSeconds: 20, containers: [{ name: 'c', image: 'busybox' }] } });
      await c.delete('conf-grace');
      const d = await c.get('conf-grace');
      assert.ok(d.metadata.deletionTimestamp);
      assert.equal(d.metadata.deletionGracePeriodSeconds, 20);
      await c.delete('conf-grace', { gracePeriodSeconds: 0 });
      await assert.rejects(c.get('conf-grace'), isNotFound);
      await c.create(pod('conf-unbound', namespace));
      await c.delete('conf-unbound');
      await assert.rejects(c.get('conf-unbound'), isNotFound);
    });

    withFixture('propagationPolicy Foreground and Orphan add their finalizers', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      await c.create(cm('conf-fg', namespace));
      await c.delete('conf-fg', { propagationPolicy: 'Foreground' });
      assert.deepEqual((await c.get('conf-fg')).metadata.finalizers, ['foregroundDeletion']);
      await c.create(cm('conf-or', namespace));
      await c.delete('conf-or', { propagationPolicy: 'Orphan' });
      assert.deepEqual((await c.get('conf-or')).metadata.finalizers, ['orphan']);
    });

    withFixture('a finalizer holds deletion until it is removed', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      await c.create(cm('conf-f', namespace, { finalizers: ['example.com/hold'] }));
      await c.delete('conf-f');
      const held = await c.get('conf-f');
      assert.ok(held.metadata.deletionTimestamp);
      await c.patch('conf-f', 'merge', { metadata: { finalizers: null } });
      await assert.rejects(c.get('conf-f'), isNotFound);
    });

    withFixture('watch from a resourceVersion replays later changes in order', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      const l0 = await c.list();
      const warm = new AbortController();
      // Open a watch first: an apiserver watch cache may only serve revisions from its start.
      const w0 = c.watch({ resourceVersion: l0.metadata.resourceVersion!, signal: warm.signal })[Symbol.asyncIterator]();
      void w0.next().catch(() => undefined);
      const a = await c.create(cm('conf-w0', namespace));
      await c.create(cm('conf-w1', namespace));
      await c.patch('conf-w1', 'merge', { data: { x: '1' } });
      await c.delete('conf-w0');
      const ac = new AbortController();
      const got = await collect(c.watch({ resourceVersion: a.metadata.resourceVersion!, signal: ac.signal }), 3, ac, (e) => e.object.metadata.name.startsWith('conf-w'));
      warm.abort();
      assert.deepEqual(got, ['ADDED conf-w1', 'MODIFIED conf-w1', 'DELETED conf-w0']);
    });

    withFixture('a selector watch turns objects entering/leaving the selection into ADDED/DELETED', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      await c.create(cm('conf-s1', namespace, { labels: { sel: 'in' } }));
      await c.create(cm('conf-s2', namespace, { labels: { sel: 'out' } }));
      const ac = new AbortController();
      const it = c.watch({ labelSelector: 'sel=in', signal: ac.signal });
      const done = collect(it, 3, ac, () => true);
      // The initial state arrives as ADDED (no resourceVersion given).
      await new Promise((r) => setTimeout(r, 50));
      await c.patch('conf-s2', 'merge', { metadata: { labels: { sel: 'in' } } });
      await c.patch('conf-s1', 'merge', { metadata: { labels: { sel: 'out' } } });
      assert.deepEqual(await done, ['ADDED conf-s1', 'ADDED conf-s2', 'DELETED conf-s1']);
    });

    withFixture('watch ends when its signal aborts', async ({ client, namespace }) => {
      const c = client.resource<CM>(ConfigMaps, namespace);
      const ac = new AbortController();
      const it = c.watch({ signal: ac.signal })[Symbol.asyncIterator]();
      const next = it.next();
      ac.abort();
      const r = await Promise.race([next.then((x) => x.done ?? false).catch(() => true), new Promise<boolean>((res) => setTimeout(() => res(false), 5000))]);
      assert.equal(r, true);
    });
  });
}
