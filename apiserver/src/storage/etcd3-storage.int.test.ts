import { after, before } from 'node:test';
import { defineStorageConformance } from '../testing/storage-conformance.js';
import { startEtcdCluster, type EtcdCluster } from '../testing/etcd-cluster.js';
import { encryptionTransformer, parseEncryptionConfig } from '../auth/encryption.js';
import { Etcd3Storage } from './etcd3-storage.js';

let etcd: EtcdCluster;
before(async () => { etcd = await startEtcdCluster({ members: 3 }); });
after(async () => { await etcd?.stop(); });

defineStorageConformance('etcd3', async () => {
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints });
  return { storage, teardown: () => storage.close(), compact: (rev) => storage.compact(rev) };
});

// The same contract with every value encrypted (the suite writes pods): gets, lists, CAS updates
// and watch events (ADDED/MODIFIED/DELETED with prevObject) all see plaintext.
const ENCRYPTED = ['kind: EncryptionConfiguration', 'resources:', '- resources: [pods]', '  providers:',
  `  - aesgcm: {keys: [{name: k1, secret: "${Buffer.alloc(32, 1).toString('base64')}"}]}`, ''].join('\n');
defineStorageConformance('etcd3 encrypted (aesgcm)', async () => {
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints, transformer: encryptionTransformer(parseEncryptionConfig(ENCRYPTED)) });
  return { storage, teardown: () => storage.close(), compact: (rev) => storage.compact(rev) };
});

// secretbox as the writer, aesgcm as a read fallback: the same contract.
const SECRETBOX = ['kind: EncryptionConfiguration', 'resources:', '- resources: [pods]', '  providers:',
  `  - secretbox: {keys: [{name: s1, secret: "${Buffer.alloc(32, 2).toString('base64')}"}]}`,
  `  - aesgcm: {keys: [{name: k1, secret: "${Buffer.alloc(32, 1).toString('base64')}"}]}`, ''].join('\n');
defineStorageConformance('etcd3 encrypted (secretbox)', async () => {
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints, transformer: encryptionTransformer(parseEncryptionConfig(SECRETBOX)) });
  return { storage, teardown: () => storage.close(), compact: (rev) => storage.compact(rev) };
});
