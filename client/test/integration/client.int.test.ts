/**
 * client/ against the real apiserver on a real etcd: CRUD and errors, watch resume, an informer
 * that sees every change across an apiserver restart, and leader election between two electors.
 * Lives outside src/ so the client project does not reference the apiserver project (no cycle).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, Events, Leases, Namespaces, Pods, isConflict, isNotFound, isInvalid, type KubeObject, type WatchEvent } from '@mk8s/api';
import { startEtcdCluster, startTestApiServer, type EtcdCluster, type TestApiServer } from '@mk8s/apiserver/testing';
import { createLogger } from '@mk8s/component-base';
import { createClientset, createEventRecorder, createSharedInformer, runLeaderElection, waitFor, type RestClientset } from '@mk8s/client';
import { defineClientsetConformance } from '@mk8s/client/testing';

const cm = (name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels }, data });
type CM = KubeObject & { data?: Record<string, string> };

let etcd: EtcdCluster;
let server: TestApiServer;
let client: RestClientset;

before(async () => {
  etcd = await startEtcdCluster({ members: 3 });
  server = await startTestApiServer({ etcdEndpoints: etcd.endpoints });
  client = createClientset({ kubeconfig: server.kubeconfigPath, userAgent: 'client-int-test' });
});
after(async () => {
  await client?.close();
  await server?.stop();
  await etcd?.stop();
});

let nsSeq = 0;
defineClientsetConformance('RestClientset on the real apiserver', async () => {
  const namespace = `conformance-${++nsSeq}`;
  await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  return { client, namespace };
});

describe('RestClientset against the apiserver', () => {
  test('CRUD, CAS conflict, patch types, selectors, errors', async () => {
    const cms = client.resource<CM>(ConfigMaps, 'default');
    const a = await cms.create(cm('crud-a', { k: 'v' }, { app: 'crud' }));
    assert.match(a.metadata.resourceVersion!, /^\d+$/);
    assert.equal((await cms.get('crud-a')).data?.['k'], 'v');
    const u = await cms.update({ ...a, data: { k: 'v2' } });
    await assert.rejects(cms.update({ ...a, data: { k: 'stale' } }), isConflict);
    const m = await cms.patch('crud-a', 'merge', { data: { m: '1' } });
    assert.deepEqual(m.data, { k: 'v2', m: '1' });
    const j = await cms.patch('crud-a', 'json', [{ op: 'add', path: '/data/j', value: '2' }]);
    assert.equal(j.data?.['j'], '2');
    const s = await cms.patch('crud-a', 'strategic', { metadata: { labels: { s: '3' } } });
    assert.equal(s.metadata.labels?.['s'], '3');
    assert.ok(Number(s.metadata.resourceVersion) > Number(u.metadata.resourceVersion));
    await cms.create(cm('crud-b', {}, { app: 'other' }));
    const l = await cms.list({ labelSelector: 'app=crud' });
    assert.deepEqual(l.items.map((x) => x.metadata.name), ['crud-a']);
    assert.match(l.metadata.resourceVersion!, /^\d+$/);
    await cms.delete('crud-a');
    await assert.rejects(cms.get('crud-a'), isNotFound);
    await assert.rejects(client.resource(Pods, 'default').create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' }, spec: { containers: [] } } as KubeObject), isInvalid);
    assert.equal((await client.getRaw('/healthz')).trim(), 'ok');
  });

  test('watch from a resourceVersion replays later changes in order', async () => {
    const cms = client.resource<CM>(ConfigMaps, 'default');
    // The apiserver's watch cache for a resource starts with its first watch; writes before that
    // are "too old" for it (410), so open one first, as an informer would have.
    const warm = new AbortController();
    const l0 = await cms.list();
    const it = cms.watch({ resourceVersion: l0.metadata.resourceVersion!, signal: warm.signal })[Symbol.asyncIterator]();
    void it.next().catch(() => undefined);
    const first = await cms.create(cm('w-0'));
    await cms.create(cm('w-1'));
    await cms.patch('w-1', 'merge', { data: { x: '1' } });
    await cms.delete('w-0');
    const ac = new AbortController();
    const got: string[] = [];
    for await (const ev of cms.watch({ resourceVersion: first.metadata.resourceVersion!, signal: ac.signal }) as AsyncIterable<WatchEvent<CM>>) {
      if (ev.type === 'BOOKMARK' || !ev.object.metadata.name.startsWith('w-')) continue;
      got.push(`${ev.type} ${ev.object.metadata.name}`);
      if (got.length === 3) ac.abort();
    }
    warm.abort();
    assert.deepEqual(got, ['ADDED w-1', 'MODIFIED w-1', 'DELETED w-0']);
  });
});

describe('SharedInformer against the apiserver', () => {
  test('sees every add/update/delete in order, across an apiserver restart', async () => {
    const ns = 'default';
    const inf = createSharedInformer<CM>({ client, resource: ConfigMaps, namespace: ns, labelSelector: 'suite=informer', initialBackoffMs: 100, maxBackoffMs: 1000, logger: createLogger({ level: process.env['INF_LOG'] ?? 'silent' }) });
    const events: string[] = [];
    inf.addEventHandler({
      onAdd: (o) => events.push(`add ${o.metadata.name}`),
      onUpdate: (o, n) => { if (o.metadata.resourceVersion !== n.metadata.resourceVersion) events.push(`update ${n.metadata.name} ${n.data?.['v'] ?? ''}`); },
      onDelete: (o) => events.push(`delete ${o.metadata.name}`),
    });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    try {
      await waitFor(() => inf.hasSynced(), { timeoutMs: 10_000 });
      const cms = client.resource<CM>(ConfigMaps, ns);
      const L = { suite: 'informer' };
      await cms.create(cm('i-a', { v: '1' }, L));
      await cms.create(cm('i-b', { v: '1' }, L));
      await cms.patch('i-a', 'merge', { data: { v: '2' } });
      await cms.delete('i-b');
      await waitFor(() => events.length >= 4, { timeoutMs: 10_000, message: 'events before restart' });
      assert.deepEqual(events, ['add i-a', 'add i-b', 'update i-a 2', 'delete i-b']);

      // Restart: stop the apiserver, change things through a second apiserver on the same etcd
      // while the informer's server is down, then bring the first one back on the same port.
      const port = Number(new URL(server.url).port);
      await server.stop();
      const other = await startTestApiServer({ etcdEndpoints: etcd.endpoints });
      const oc = createClientset({ server: other.url, userAgent: 'client-int-test' });
      const ocms = oc.resource<CM>(ConfigMaps, ns);
      await ocms.create(cm('i-c', { v: '1' }, L));
      await ocms.patch('i-a', 'merge', { data: { v: '3' } });
      await ocms.delete('i-a');
      await ocms.create(cm('i-d', { v: '1' }, L));
      await oc.close();
      await other.stop();
      server = await startTestApiServer({ etcdEndpoints: etcd.endpoints, port });

      await waitFor(() => inf.lister.get('default/i-d') && !inf.lister.get('default/i-a'), { timeoutMs: 20_000, message: 'caught up after restart' })
        .catch((e) => { console.log('EVENTS', events, 'RV', inf.lastSyncResourceVersion()); throw e; });
      const after = events.slice(4);
      // Whether the informer re-watched (exact history) or relisted (a diff), nothing is lost:
      assert.ok(after.includes('add i-c'), after.join(', '));
      assert.ok(after.includes('delete i-a'), after.join(', '));
      assert.ok(after.includes('add i-d'), after.join(', '));
      // And it is watching again.
      await cms.patch('i-d', 'merge', { data: { v: '2' } });
      await waitFor(() => events.includes('update i-d 2'), { timeoutMs: 20_000, message: 'watch resumed' })
        .catch((e) => { console.log('EVENTS', events, 'RV', inf.lastSyncResourceVersion()); throw e; });
      const live = (await cms.list({ labelSelector: 'suite=informer' })).items.map((x) => x.metadata.name).sort();
      assert.deepEqual(inf.lister.list(ns).map((x) => x.metadata.name).sort(), live);
      assert.deepEqual(live, ['i-c', 'i-d']);
    } finally {
      ac.abort();
      await run;
    }
  });
});

describe('event recorder against the apiserver', () => {
  test('writes events and aggregates repeats into count', async () => {
    const pods = client.resource(Pods, 'default');
    const p = await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ev-pod' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } as KubeObject);
    const rec = createEventRecorder({ client, component: 'client-int-test', host: 'h1' });
    rec.event(p, 'Warning', 'BackOff', 'Back-off restarting failed container %s', 'c');
    rec.event(p, 'Warning', 'BackOff', 'Back-off restarting failed container %s', 'c');
    rec.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n-ev', uid: 'u' } }, 'Normal', 'Starting', 'Starting kubelet.');
    await rec.flush();
    const evs = (await client.resource<KubeObject & { count: number; message: string; involvedObject: { uid: string } }>(Events, 'default')
      .list({ fieldSelector: 'involvedObject.name=ev-pod' })).items;
    assert.equal(evs.length, 1);
    assert.equal(evs[0]!.count, 2);
    assert.equal(evs[0]!.message, 'Back-off restarting failed container c');
    assert.equal(evs[0]!.involvedObject.uid, p.metadata.uid);
    const nodeEvs = (await client.resource(Events, 'default').list({ fieldSelector: 'involvedObject.kind=Node,involvedObject.name=n-ev' })).items;
    assert.equal(nodeEvs.length, 1);
  });
});

describe('leader election against the apiserver', () => {
  test('one of two electors leads; when it dies the other takes over within the lease duration', async () => {
    const leaseDurationMs = 3_000;
    const mk = (identity: string) => {
      const ac = new AbortController();
      const st = { leading: false, lost: false };
      const done = runLeaderElection({
        client, identity, lock: { namespace: 'default', name: 'int-lock' }, signal: ac.signal,
        leaseDurationMs, renewDeadlineMs: 2_000, retryPeriodMs: 300, releaseOnCancel: false,
        onStartedLeading: (s) => { st.leading = true; s.addEventListener('abort', () => { st.leading = false; st.lost = true; }); },
      });
      return { ac, st, done, identity };
    };
    const a = mk('elector-a');
    await waitFor(() => a.st.leading, { timeoutMs: 10_000, message: 'a leads' });
    const b = mk('elector-b');
    try {
      // b must not lead while a renews.
      await new Promise((r) => setTimeout(r, leaseDurationMs + 500));
      assert.equal(b.st.leading, false);
      const killedAt = Date.now();
      a.ac.abort(); // a "dies": no release, its lease must expire
      await a.done;
      await waitFor(() => b.st.leading, { timeoutMs: 15_000, message: 'b takes over' });
      // Generous bound: takeover needs the lease to expire from b's observation (≤ duration + a retry or two).
      assert.ok(Date.now() - killedAt < leaseDurationMs * 3, `took ${Date.now() - killedAt}ms`);
      const lease = await client.resource<KubeObject & { spec: { holderIdentity: string; leaseTransitions: number } }>(Leases, 'default').get('int-lock');
      assert.equal(lease.spec.holderIdentity, 'elector-b');
      assert.equal(lease.spec.leaseTransitions, 1);
    } finally {
      b.ac.abort();
      await b.done;
    }
  });
});

void Pods;
