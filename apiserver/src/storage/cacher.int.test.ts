import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { isAlreadyExists, isResourceExpired, type KubeObject } from '@mk8s/api';
import { startEtcdCluster, type EtcdCluster } from '../testing/etcd-cluster.js';
import { take } from '../testing/storage-conformance.js';
import { Etcd3Storage } from './etcd3-storage.js';
import { Cacher } from './cacher.js';
import type { StorageEvent } from './interfaces.js';
import { realClock, type Clock } from '@mk8s/component-base';

let etcd: EtcdCluster;
before(async () => { etcd = await startEtcdCluster({ members: 3 }); });
after(async () => { await etcd?.stop(); });

const pod = (name: string, ns: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns } });
const describeEv = (e: StorageEvent) => `${e.type} ${e.object.metadata.name}`;

/** etcd's own count of registered watchers on each member (etcd_debugging_mvcc_watcher_total). */
async function etcdWatchers(): Promise<number[]> {
  return Promise.all(etcd.endpoints.map(async (ep) => {
    try {
      const text = await (await fetch(`${ep}/metrics`)).text();
      const m = /^etcd_debugging_mvcc_watcher_total (\d+)/m.exec(text);
      return m ? Number(m[1]) : 0;
    } catch { return 0; }                                              // a killed member
  }));
}
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

async function waitFor(cond: () => Promise<boolean> | boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Creates, retrying through elections; an AlreadyExists after a retry means the first attempt landed. */
async function createRetrying(s: Etcd3Storage, key: string, obj: KubeObject): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (let attempt = 0; ; attempt++) {
    try { await s.create(key, obj); return; } catch (err) {
      if (attempt > 0 && isAlreadyExists(err)) return;
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('Cacher on etcd', () => {
  test('100 watchers on one prefix share one etcd watch and all get every event', async () => {
    const storage = new Etcd3Storage({ endpoints: etcd.endpoints });
    const cacher = new Cacher({ storage, progressIntervalMs: 0 });
    const ctl = new AbortController();
    setMaxListeners(0, ctl.signal);
    try {
      const before = sum(await etcdWatchers());
      const ns = `w${Date.now()}`;
      await cacher.warm(`/registry/pods/${ns}/`);
      const rv = await cacher.currentResourceVersion();
      const watchers = Array.from({ length: 100 }, () => cacher.watch(`/registry/pods/${ns}/`, { resourceVersion: rv, signal: ctl.signal }));
      const n = 20;
      for (let i = 0; i < n; i++) await cacher.create(`/registry/pods/${ns}/p${i}`, pod(`p${i}`, ns));
      const want = Array.from({ length: n }, (_, i) => `ADDED p${i}`);
      for (const w of watchers) assert.deepEqual((await take(w, n)).map(describeEv), want);
      assert.equal(storage.stats.watchesStarted, 1);
      assert.equal(cacher.stats().watchers, 100);
      await waitFor(async () => sum(await etcdWatchers()) === before + 1, 'etcd to report exactly one more watcher');
    } finally {
      ctl.abort();
      await cacher.close();
    }
  });

  test('the etcd watch resumes after its member is killed, without gaps or duplicates', async () => {
    const storage = new Etcd3Storage({ endpoints: etcd.endpoints, watchBackoffMs: [50, 500] });
    const writer = new Etcd3Storage({ endpoints: etcd.endpoints });
    const ctl = new AbortController();
    const ns = `k${Date.now()}`;
    let killed = -1;
    try {
      // The previous test's watch is cancelled asynchronously; start from a quiet cluster.
      await waitFor(async () => sum(await etcdWatchers()) === 0, 'earlier watchers to go away');
      const before = await etcdWatchers();
      const w = storage.watch(`/registry/pods/${ns}/`, { resourceVersion: await writer.currentResourceVersion(), signal: ctl.signal });
      await createRetrying(writer, `/registry/pods/${ns}/first`, pod('first', ns));
      assert.deepEqual((await take(w, 1)).map(describeEv), ['ADDED first']);
      const now = await etcdWatchers();
      killed = now.findIndex((c, i) => c > before[i]!);
      assert.ok(killed >= 0, `no member gained a watcher: ${before} -> ${now}`);
      await etcd.kill(killed);
      const n = 30;
      const rest = take(w, n, 60_000);
      for (let i = 0; i < n; i++) await createRetrying(writer, `/registry/pods/${ns}/p${i}`, pod(`p${i}`, ns));
      const evs = await rest;
      assert.deepEqual(evs.map(describeEv), Array.from({ length: n }, (_, i) => `ADDED p${i}`));
      const rvs = evs.map((e) => Number(e.resourceVersion));
      assert.deepEqual(rvs, [...rvs].sort((a, b) => a - b));
      assert.ok(storage.stats.watchReconnects >= 1);
    } finally {
      ctl.abort();
      await storage.close();
      await writer.close();
      if (killed >= 0) await etcd.restart(killed);
    }
  });

  test('API watchers keep receiving every event when the member under the cache is killed', async () => {
    await waitFor(async () => sum(await etcdWatchers()) === 0, 'earlier watchers to go away');
    const storage = new Etcd3Storage({ endpoints: etcd.endpoints, watchBackoffMs: [50, 500] });
    const writer = new Etcd3Storage({ endpoints: etcd.endpoints });
    const cacher = new Cacher({ storage, progressIntervalMs: 0 });
    const ctl = new AbortController();
    const ns = `c${Date.now()}`;
    let killed = -1;
    try {
      await cacher.warm(`/registry/pods/${ns}/`);
      const rv = await writer.currentResourceVersion();
      const watchers = Array.from({ length: 5 }, () => cacher.watch(`/registry/pods/${ns}/`, { resourceVersion: rv, signal: ctl.signal }));
      await waitFor(async () => sum(await etcdWatchers()) === 1, 'the cache watch to register');
      killed = (await etcdWatchers()).findIndex((c) => c === 1);
      await etcd.kill(killed);
      const n = 20;
      for (let i = 0; i < n; i++) await createRetrying(writer, `/registry/pods/${ns}/p${i}`, pod(`p${i}`, ns));
      const want = Array.from({ length: n }, (_, i) => `ADDED p${i}`);
      for (const w of watchers) assert.deepEqual((await take(w, n, 60_000)).map(describeEv), want);
      assert.equal(storage.stats.watchesStarted, 1, 'one logical watch, reconnected inside Etcd3Storage');
    } finally {
      ctl.abort();
      await cacher.close();
      await writer.close();
      if (killed >= 0) await etcd.restart(killed);
    }
  });

  test('when etcd compacted past the cache while its watch was down, the cache relists and watchers get Expired', async () => {
    await waitFor(async () => sum(await etcdWatchers()) === 0, 'earlier watchers to go away');
    // The watch's reconnect sleeps are held on a gate, so the writes and the compaction land while
    // the watch is down however slow the machine is (a fixed long backoff raced them under CI load).
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const clock: Clock = { ...realClock, sleep: async (ms, signal) => { await gate; await realClock.sleep(ms, signal); } };
    const storage = new Etcd3Storage({ endpoints: etcd.endpoints, watchBackoffMs: [50, 500], clock });
    const writer = new Etcd3Storage({ endpoints: etcd.endpoints });
    const cacher = new Cacher({ storage, progressIntervalMs: 0, retryBackoffMs: [50, 500] });
    const ctl = new AbortController();
    const ns = `x${Date.now()}`;
    let killed = -1;
    try {
      await cacher.warm(`/registry/pods/${ns}/`);
      await createRetrying(writer, `/registry/pods/${ns}/before`, pod('before', ns));
      const w = cacher.watch(`/registry/pods/${ns}/`, { signal: ctl.signal });
      assert.deepEqual((await take(w, 1)).map(describeEv), ['ADDED before']);
      await waitFor(async () => sum(await etcdWatchers()) === 1, 'the cache watch to register');
      killed = (await etcdWatchers()).findIndex((c) => c === 1);
      await etcd.kill(killed);
      await waitFor(() => storage.stats.watchReconnects >= 1, 'the cache watch to notice its member is gone');
      for (let i = 0; i < 3; i++) await createRetrying(writer, `/registry/pods/${ns}/p${i}`, pod(`p${i}`, ns));
      await writer.compact(await writer.currentResourceVersion());
      release();
      await assert.rejects(take(w, 10, 60_000), isResourceExpired);
      const fresh = cacher.watch(`/registry/pods/${ns}/`, { signal: ctl.signal });
      assert.deepEqual((await take(fresh, 4, 60_000)).map(describeEv).sort(), ['ADDED before', 'ADDED p0', 'ADDED p1', 'ADDED p2']);
    } finally {
      release();
      ctl.abort();
      await cacher.close();
      await writer.close();
      if (killed >= 0) await etcd.restart(killed);
    }
  });
});
