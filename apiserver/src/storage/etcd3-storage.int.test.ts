import { after, before } from 'node:test';
import { defineStorageConformance } from '../testing/storage-conformance.js';
import { startEtcdCluster, type EtcdCluster } from '../testing/etcd-cluster.js';
import { Etcd3Storage } from './etcd3-storage.js';

let etcd: EtcdCluster;
before(async () => { etcd = await startEtcdCluster({ members: 3 }); });
after(async () => { await etcd?.stop(); });

defineStorageConformance('etcd3', async () => {
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints });
  return { storage, teardown: () => storage.close(), compact: (rev) => storage.compact(rev) };
});
