import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import { MemoryStorage } from '../testing/memory-storage.js';
import { EncryptingStorage, ENCRYPTED_FIELD, parseEncryptionConfig } from './encryption.js';

const CONFIG = `
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: ${Buffer.alloc(32, 7).toString('base64')}
      - identity: {}
`;
const secret = (name: string, v: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, data: { pw: Buffer.from(v).toString('base64') }, type: 'Opaque' } as KubeObject);

test('secrets are sealed at rest (k8s:enc:aesgcm:v1:key1: prefix) and transparent through the wrapper', async () => {
  const inner = new MemoryStorage();
  const s = new EncryptingStorage(inner, parseEncryptionConfig(CONFIG));
  const key = '/registry/secrets/default/db';
  const created = await s.create(key, secret('db', 'hunter2'));
  assert.deepEqual(created['data'], { pw: Buffer.from('hunter2').toString('base64') });
  const raw = await inner.get(key);
  assert.match(String(raw[ENCRYPTED_FIELD]), /^k8s:enc:aesgcm:v1:key1:/);
  assert.equal(raw['data'], undefined);
  assert.ok(!JSON.stringify(raw).includes(Buffer.from('hunter2').toString('base64')));
  assert.equal((await s.get(key))['type'], 'Opaque');
  const listed = await s.list('/registry/secrets/', { predicate: (o) => (o['data'] as Record<string, string> | undefined)?.['pw'] !== undefined });
  assert.equal(listed.items.length, 1);
  assert.deepEqual(listed.items[0]!['data'], created['data']);
  // A namespace's list (its prefix already ends in <ns>/) opens items with their own keys.
  const inNs = await s.list('/registry/secrets/default/');
  assert.deepEqual(inNs.items.map((o) => o['data']), [created['data']]);
  // An unchanged update writes nothing (same resourceVersion); a change re-seals.
  const same = await s.guaranteedUpdate(key, (cur) => ({ ...cur! }));
  assert.equal(same.metadata.resourceVersion, created.metadata.resourceVersion);
  const upd = await s.guaranteedUpdate(key, (cur) => ({ ...cur!, data: { pw: 'eA==' } } as KubeObject));
  assert.deepEqual(upd['data'], { pw: 'eA==' });
  assert.equal((await inner.get(key))['data'], undefined);
  // Other resources pass through untouched.
  await s.create('/registry/configmaps/default/c', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: 'b' } } as KubeObject);
  assert.deepEqual((await inner.get('/registry/configmaps/default/c'))['data'], { a: 'b' });
  // A value moved to another key does not decrypt (the key is authenticated data).
  await inner.create('/registry/secrets/default/copy', { ...raw, metadata: { name: 'copy', namespace: 'default' } } as KubeObject);
  await assert.rejects(s.get('/registry/secrets/default/copy'));
  const deleted = await s.delete(key);
  assert.deepEqual(deleted['data'], { pw: 'eA==' });
});

test('encryption config errors are refused', () => {
  assert.throws(() => parseEncryptionConfig('kind: Other'));
  assert.throws(() => parseEncryptionConfig('kind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n      - name: k\n        secret: c2hvcnQ=\n'));
  assert.throws(() => parseEncryptionConfig('kind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - kms: {}\n'));
});
