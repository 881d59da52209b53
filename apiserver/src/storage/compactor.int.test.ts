import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isResourceExpired } from '@mk8s/api';
import { startEtcdCluster, type EtcdCluster } from '../testing/etcd-cluster.js';
import { take } from '../testing/storage-conformance.js';
import { Etcd3Storage } from './etcd3-storage.js';
import { startCompactor } from './compactor.js';

let etcd: EtcdCluster;
before(async () => { etcd = await startEtcdCluster({ members: 1 }); });
after(async () => { await etcd?.stop(); });

test('the compactor compacts to the revision of the previous round, so old watches expire', async () => {
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints });
  const ctl = new AbortController();
  try {
    const first = await storage.create('/registry/pods/c/a', { metadata: { name: 'a', namespace: 'c' } });
    startCompactor({ client: storage.client, intervalMs: 100, signal: ctl.signal });
    startCompactor({ client: storage.client, intervalMs: 100, signal: ctl.signal });   // a second apiserver
    const deadline = Date.now() + 20_000;
    for (;;) {
      const w = storage.watch('/registry/pods/c/', { resourceVersion: first.metadata.resourceVersion!, signal: ctl.signal });
      await storage.guaranteedUpdate('/registry/pods/c/a', (o) => ({ ...o!, spec: { t: Date.now() } }));
      try {
        await take(w, 1);
      } catch (err) {
        assert.ok(isResourceExpired(err), String(err));
        break;
      }
      assert.ok(Date.now() < deadline, 'etcd was never compacted');
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    ctl.abort();
    await storage.close();
  }
});
