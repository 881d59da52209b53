/**
 * The apiserver against a real 3-member etcd: semantics that need real storage, real HTTP and
 * real timing (watch flushing, compaction, two servers on one etcd, concurrent writers).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { silentLogger } from '@mk8s/component-base';
import { createApiServer } from './apiserver.js';
import { startTestApiServer, type TestApiServer } from './testing/index.js';

interface Json { [k: string]: any }

async function call(base: string, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: Json }> {
  const init: RequestInit = { method, headers: body === undefined ? {} : { 'content-type': contentType } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(base + path, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as Json : {} };
}

/** Opens a watch and collects events line by line. */
function openWatch(base: string, path: string) {
  const ac = new AbortController();
  const events: Json[] = [];
  let ended = false;
  const headers = fetch(base + path, { signal: ac.signal }).then(async (res) => {
    const result = { status: res.status, contentType: res.headers.get('content-type'), body: undefined as Json | undefined };
    if (res.status !== 200) { result.body = await res.json() as Json; ended = true; return result; }
    void (async () => {
      const decoder = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true });
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i); buf = buf.slice(i + 1);
            if (line.trim()) events.push(JSON.parse(line) as Json);
          }
        }
      } catch { /* aborted */ }
      ended = true;
    })();
    return result;
  });
  return { headers, events, get ended() { return ended; }, close: () => ac.abort() };
}

async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const cm = (name: string, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

describe('apiserver on real etcd', () => {
  let srv: TestApiServer;
  before(async () => { srv = await startTestApiServer(); });
  after(async () => { await srv?.stop(); });

  test('serves health, readiness, metrics and system namespaces', async () => {
    assert.equal((await fetch(`${srv.url}/readyz`)).status, 200);
    assert.equal((await fetch(`${srv.url}/healthz`)).status, 200);
    const ns = await call(srv.url, 'GET', '/api/v1/namespaces');
    assert.deepEqual(ns.body['items'].map((n: Json) => n['metadata']['name']).sort(), ['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    const metrics = await (await fetch(`${srv.url}/metrics`)).text();
    assert.match(metrics, /apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="namespaces"/);
  });

  test('create, get, update, delete round trip with resourceVersions from etcd', async () => {
    const c = await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('rt', { a: '1' }));
    assert.equal(c.status, 201);
    const g = await call(srv.url, 'GET', '/api/v1/namespaces/default/configmaps/rt');
    assert.equal(g.body['metadata']['resourceVersion'], c.body['metadata']['resourceVersion']);
    const u = await call(srv.url, 'PUT', '/api/v1/namespaces/default/configmaps/rt', { ...g.body, data: { a: '2' } });
    assert.equal(u.status, 200);
    assert.ok(Number(u.body['metadata']['resourceVersion']) > Number(g.body['metadata']['resourceVersion']));
    const stale = await call(srv.url, 'PUT', '/api/v1/namespaces/default/configmaps/rt', { ...g.body, data: { a: '3' } });
    assert.equal(stale.status, 409);
    const d = await call(srv.url, 'DELETE', '/api/v1/namespaces/default/configmaps/rt');
    assert.equal(d.status, 200);
    assert.equal((await call(srv.url, 'GET', '/api/v1/namespaces/default/configmaps/rt')).status, 404);
  });

  test('concurrent writers lose no update', async () => {
    await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('counter', { n: '0' }));
    const increment = async () => {
      for (;;) {
        const cur = await call(srv.url, 'GET', '/api/v1/namespaces/default/configmaps/counter');
        const n = Number(cur.body['data']['n']);
        const res = await call(srv.url, 'PUT', '/api/v1/namespaces/default/configmaps/counter', { ...cur.body, data: { n: String(n + 1) } });
        if (res.status === 200) return;
        assert.equal(res.status, 409);
      }
    };
    await Promise.all(Array.from({ length: 20 }, increment));
    const final = await call(srv.url, 'GET', '/api/v1/namespaces/default/configmaps/counter');
    assert.equal(final.body['data']['n'], '20');
  });

  test('watch flushes headers at once, starts from a list rv without replay, and filters by selector', async () => {
    await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('before'));
    const list = await call(srv.url, 'GET', '/api/v1/namespaces/default/configmaps');
    const rv = list.body['metadata']['resourceVersion'] as string;
    const w = openWatch(srv.url, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}&labelSelector=w%3D1`);
    const h = await w.headers;                                         // resolves with no event sent yet
    assert.equal(h.status, 200);
    assert.equal(h.contentType, 'application/json');
    await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', { ...cm('other') });
    await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', { ...cm('after'), metadata: { name: 'after', labels: { w: '1' } } });
    await waitFor(() => w.events.length >= 1, 10_000, 'ADDED event');
    assert.equal(w.events[0]!['type'], 'ADDED');
    assert.equal(w.events[0]!['object']['metadata']['name'], 'after');
    assert.equal(w.events[0]!['object']['kind'], 'ConfigMap');
    await call(srv.url, 'PATCH', '/api/v1/namespaces/default/configmaps/after', { metadata: { labels: { w: null } } }, 'application/merge-patch+json');
    await waitFor(() => w.events.length >= 2, 10_000, 'DELETED event for leaving the selection');
    assert.equal(w.events[1]!['type'], 'DELETED');
    w.close();
  });

  test('watch with resourceVersion=0 sends synthetic ADDED first; timeoutSeconds ends the stream', async () => {
    await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('zero'));
    const w = openWatch(srv.url, '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&fieldSelector=metadata.name%3Dzero&timeoutSeconds=1');
    await w.headers;
    await waitFor(() => w.events.length >= 1, 10_000, 'synthetic ADDED');
    assert.equal(w.events[0]!['type'], 'ADDED');
    await waitFor(() => w.ended, 10_000, 'stream end after timeoutSeconds');
  });

  test('watch resumes from a resourceVersion with only later events', async () => {
    const a = await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('resume-a'));
    await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('resume-b'));
    const w = openWatch(srv.url, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${a.body['metadata']['resourceVersion']}`);
    await waitFor(() => w.events.length >= 1, 10_000, 'resumed event');
    assert.equal(w.events[0]!['object']['metadata']['name'], 'resume-b');
    w.close();
  });

  test('a compacted resourceVersion answers 410 Expired', async () => {
    const first = await call(srv.url, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'compact-0' } });
    const oldRv = first.body['metadata']['resourceVersion'] as string;
    for (let i = 1; i < 5; i++) await call(srv.url, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: `compact-${i}` } });
    const etcd = new Etcd3({ hosts: srv.etcdEndpoints });
    try {
      const rev = (await etcd.get('/registry/namespaces/default').exec()).header.revision;
      await etcd.kv.compact({ revision: rev, physical: true });
    } finally {
      etcd.close();
    }
    // An apiserver whose watch caches start after the compaction cannot serve oldRv.
    const fresh = createApiServer({ etcdServers: srv.etcdEndpoints, port: 0, logger: silentLogger() });
    const ac = new AbortController();
    const running = fresh.run(ac.signal);
    try {
      await fresh.ready;
      const w = openWatch(fresh.url, `/api/v1/namespaces/default/secrets?watch=true&resourceVersion=${oldRv}`);
      const h = await w.headers;
      assert.equal(h.status, 410);
      assert.equal(h.body!['reason'], 'Expired');
      assert.equal(h.body!['kind'], 'Status');
      w.close();
    } finally {
      ac.abort();
      await running;
    }
  });

  test('the apiserver runs the etcd compactor at --etcd-compaction-interval', async () => {
    const compacting = createApiServer({ etcdServers: srv.etcdEndpoints, port: 0, logger: silentLogger(), etcdCompactionIntervalMs: 100 });
    const ac = new AbortController();
    const running = compacting.run(ac.signal);
    const etcd = new Etcd3({ hosts: srv.etcdEndpoints });
    try {
      await compacting.ready;
      const first = await call(compacting.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('compactor-0'));
      const oldRev = first.body['metadata']['resourceVersion'] as string;
      const deadline = Date.now() + 20_000;
      for (let i = 1; ; i++) {
        // Each round compacts to the revision seen one round earlier: keep writing until oldRev is gone.
        await call(compacting.url, 'PUT', '/api/v1/namespaces/default/configmaps/compactor-0', cm('compactor-0', { i: String(i) }));
        try {
          await etcd.get('/registry/configmaps/default/compactor-0').revision(oldRev).exec();
        } catch (err) {
          assert.match(String(err), /compacted/);
          break;
        }
        assert.ok(Date.now() < deadline, 'etcd was never compacted');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      etcd.close();
      ac.abort();
      await running;
    }
  });

  test('two apiservers on one etcd serve the same data; a watch on one sees writes through the other', async () => {
    const second = createApiServer({ etcdServers: srv.etcdEndpoints, port: 0, logger: silentLogger() });
    const ac = new AbortController();
    const running = second.run(ac.signal);
    try {
      await second.ready;
      const list = await call(second.url, 'GET', '/api/v1/namespaces/default/configmaps');
      const w = openWatch(second.url, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${list.body['metadata']['resourceVersion']}`);
      await w.headers;
      await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('via-first'));
      await waitFor(() => w.events.some((e) => e['object']['metadata']['name'] === 'via-first'), 10_000, 'event on second server');
      w.close();
      const got = await call(second.url, 'GET', '/api/v1/namespaces/default/configmaps/via-first');
      assert.equal(got.status, 200);
    } finally {
      ac.abort();
      await running;
    }
  });

  test('namespace lifecycle over etcd: Terminating blocks creates; finalize removes it', async () => {
    await call(srv.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } });
    await call(srv.url, 'POST', '/api/v1/namespaces/doomed/configmaps', cm('x'));
    const del = await call(srv.url, 'DELETE', '/api/v1/namespaces/doomed');
    assert.equal(del.body['status']['phase'], 'Terminating');
    const blocked = await call(srv.url, 'POST', '/api/v1/namespaces/doomed/configmaps', cm('y'));
    assert.equal(blocked.status, 403);
    const fin = await call(srv.url, 'PUT', '/api/v1/namespaces/doomed/finalize', { ...del.body, spec: { finalizers: [] } });
    assert.equal(fin.status, 200);
    assert.equal((await call(srv.url, 'GET', '/api/v1/namespaces/doomed')).status, 404);
  });

  test('allowWatchBookmarks delivers BOOKMARK events with a resourceVersion', async () => {
    const list = await call(srv.url, 'GET', '/api/v1/namespaces/default/endpoints');
    const w = openWatch(srv.url, `/api/v1/namespaces/default/endpoints?watch=true&allowWatchBookmarks=true&resourceVersion=${list.body['metadata']['resourceVersion']}`);
    await w.headers;
    // A bookmark announces progress: the store revision must move on (a write elsewhere).
    await call(srv.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('bookmark-trigger'));
    await waitFor(() => w.events.some((e) => e['type'] === 'BOOKMARK'), 20_000, 'BOOKMARK');
    const bm = w.events.find((e) => e['type'] === 'BOOKMARK')!;
    assert.equal(bm['object']['kind'], 'Endpoints');
    assert.match(bm['object']['metadata']['resourceVersion'], /^\d+$/);
    w.close();
  });

  test('listens on several bind addresses', async () => {
    const multi = createApiServer({ etcdServers: srv.etcdEndpoints, port: 0, bindAddresses: ['127.0.0.1', '127.0.0.2'], advertiseAddress: '10.240.0.1', logger: silentLogger() });
    const ac = new AbortController();
    const running = multi.run(ac.signal);
    try {
      await multi.ready;
      assert.equal(multi.urls.length, 2);
      for (const u of multi.urls) assert.equal((await call(u, 'GET', '/api/v1/namespaces/default')).status, 200);
      assert.match(multi.urls[1]!, /^http:\/\/127\.0\.0\.2:\d+$/);
      // The advertise address is published as the default/kubernetes Service's endpoints.
      let slice = await call(srv.url, 'GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
      for (const deadline = Date.now() + 10_000; slice.status !== 200 && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 50));
        slice = await call(srv.url, 'GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
      }
      // Published in order: Service, Endpoints, EndpointSlice.
      const svc = await call(srv.url, 'GET', '/api/v1/namespaces/default/services/kubernetes');
      assert.equal(svc.body['spec']['clusterIP'], '10.96.0.1');
      const ep = await call(srv.url, 'GET', '/api/v1/namespaces/default/endpoints/kubernetes');
      assert.deepEqual(ep.body['subsets'][0]['addresses'], [{ ip: '10.240.0.1' }]);
      assert.deepEqual(slice.body['endpoints'][0]['addresses'], ['10.240.0.1']);
    } finally {
      ac.abort();
      await running;
    }
  });

  test('a watch ends cleanly when the client disconnects (watchers gauge goes back down)', async () => {
    const gauge = async () => {
      const text = await (await fetch(`${srv.url}/metrics`)).text();
      const m = /apiserver_registered_watchers\{resource="leases"\} (\d+)/.exec(text);
      return m ? Number(m[1]) : 0;
    };
    const w = openWatch(srv.url, '/apis/coordination.k8s.io/v1/namespaces/default/leases?watch=true');
    await w.headers;
    await waitFor(() => true);
    let during = 0;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (during = await gauge()) < 1) await new Promise((r) => setTimeout(r, 50));
    assert.equal(during, 1);
    w.close();
    let afterClose = 1;
    const deadline2 = Date.now() + 10_000;
    while (Date.now() < deadline2 && (afterClose = await gauge()) !== 0) await new Promise((r) => setTimeout(r, 50));
    assert.equal(afterClose, 0);
  });

  test('the first watch of a resource may start from a list resourceVersion older than later writes', async () => {
    const list = await call(srv.url, 'GET', '/apis/scheduling.k8s.io/v1/priorityclasses');
    await call(srv.url, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: 'pc-early' }, value: 10 });
    await call(srv.url, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: 'pc-late' }, value: 20 });
    const w = openWatch(srv.url, `/apis/scheduling.k8s.io/v1/priorityclasses?watch=true&resourceVersion=${list.body['metadata']['resourceVersion']}`);
    const h = await w.headers;
    assert.equal(h.status, 200, JSON.stringify(h.body));
    await waitFor(() => w.events.length >= 2, 10_000, 'both events');
    assert.deepEqual(w.events.map((e) => `${e['type']} ${e['object']['metadata']['name']}`), ['ADDED pc-early', 'ADDED pc-late']);
    w.close();
  });
});
