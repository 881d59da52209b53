import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type KubeObject } from '@mk8s/api';
import { startEtcdCluster, type EtcdCluster } from '../testing/etcd-cluster.js';
import { take } from '../testing/storage-conformance.js';
import { Etcd3Storage } from './etcd3-storage.js';
import { Cacher } from './cacher.js';

let etcd: EtcdCluster;
before(async () => { etcd = await startEtcdCluster({ members: 3 }); });
after(async () => { await etcd?.stop(); });

const pod = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'q' } });

test('on quorum loss reads and writes fail with a 5xx ApiError within the request timeout; watches resume after', async () => {
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints, requestTimeoutMs: 2_000, watchBackoffMs: [50, 500] });
  const cacher = new Cacher({ storage, progressIntervalMs: 0 });
  const ctl = new AbortController();
  const killed: number[] = [];
  try {
    await cacher.warm('/registry/pods/q/');
    const w = cacher.watch('/registry/pods/q/', { resourceVersion: await cacher.currentResourceVersion(), signal: ctl.signal });
    await cacher.create('/registry/pods/q/before', pod('before'));
    assert.deepEqual((await take(w, 1)).map((e) => e.object.metadata.name), ['before']);
    for (const i of [1, 2]) { await etcd.kill(i); killed.push(i); }
    for (const op of [() => cacher.get('/registry/pods/q/before'), () => cacher.create('/registry/pods/q/during', pod('during'))]) {
      const t0 = Date.now();
      await assert.rejects(op(), (e: unknown) => e instanceof ApiError && e.code >= 500 && e.code < 600);
      assert.ok(Date.now() - t0 < 30_000, 'fails within a bounded time');
    }
    // The cached state still serves RV=0 lists while etcd has no quorum (upstream behaviour).
    assert.deepEqual((await cacher.list('/registry/pods/q/', { resourceVersion: '0' })).items.map((i) => i.metadata.name), ['before']);
    for (const i of killed.splice(0)) await etcd.restart(i);
    const deadline = Date.now() + 30_000;
    for (;;) {
      try { await cacher.create('/registry/pods/q/after', pod('after')); break; } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    // The same watch continues: no Expired, no gap. A write that timed out during the outage had an
    // unknown outcome and may surface first.
    const names: string[] = [];
    while (!names.includes('after')) names.push(...(await take(w, 1, 30_000)).map((e) => e.object.metadata.name));
    assert.ok(names.every((n) => n === 'during' || n === 'after'), names.join(','));
  } finally {
    ctl.abort();
    await cacher.close();
    for (const i of killed) await etcd.restart(i);
  }
});
