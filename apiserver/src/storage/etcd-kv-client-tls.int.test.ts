import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki, type PkiPaths } from '@mk8s/component-base/pki';
import type { KubeObject } from '@mk8s/api';
import { startEtcdCluster, type EtcdCluster } from '../testing/etcd-cluster.js';
import { take } from '../testing/storage-conformance.js';
import { EtcdCallError, EtcdKvClient, GRPC_UNAVAILABLE } from './etcd-kv-client.js';
import { Etcd3Storage } from './etcd3-storage.js';

// etcd as `mkctl cluster up` runs it: clients over TLS, certificates of etcd's own CA required.
let dir: string;
let pki: PkiPaths;
let etcd: EtcdCluster;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk8s-etcd-tls-'));
  pki = await ensurePki(join(dir, 'pki'), { nodes: [] });
  etcd = await startEtcdCluster({
    members: 3,
    tls: { ca: pki.etcd.ca.cert, cert: pki.etcd.server.cert, key: pki.etcd.server.key, healthClient: pki.apiserverEtcdClient },
  });
});
after(async () => {
  await etcd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const pod = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'tls' } });

test('the storage creates, reads, updates, lists and watches over TLS with a client certificate on every member', async () => {
  assert.ok(etcd.endpoints.every((e) => e.startsWith('https://')));
  const credentials = {
    rootCertificate: await readFile(pki.etcd.ca.cert),
    certChain: await readFile(pki.apiserverEtcdClient.cert),
    privateKey: await readFile(pki.apiserverEtcdClient.key),
  };
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints, credentials, requestTimeoutMs: 10_000 });
  const ctl = new AbortController();
  try {
    const w = storage.watch('/registry/pods/tls/', { resourceVersion: await storage.currentResourceVersion(), signal: ctl.signal });
    // More calls than members: round-robin puts them on every member's TLS channel.
    for (let i = 0; i < 6; i++) await storage.create(`/registry/pods/tls/p${i}`, pod(`p${i}`));
    const updated = await storage.guaranteedUpdate('/registry/pods/tls/p0', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { a: 'b' } } }));
    assert.deepEqual((await storage.get('/registry/pods/tls/p0')).metadata.labels, { a: 'b' });
    const list = await storage.list('/registry/pods/tls/', { limit: 4 });
    assert.equal(list.items.length, 4);
    assert.ok(list.continue);
    const events = await take(w, 7, 30_000);
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED p0', 'ADDED p1', 'ADDED p2', 'ADDED p3', 'ADDED p4', 'ADDED p5', 'MODIFIED p0']);
    assert.equal(events[6]!.resourceVersion, updated.metadata.resourceVersion);
  } finally {
    ctl.abort();
    await storage.close();
  }
});

test('etcd refuses a client without a certificate of its CA: the call fails as unavailable, bounded', async () => {
  const noCert = new EtcdKvClient({ endpoints: etcd.endpoints, credentials: { rootCertificate: await readFile(pki.etcd.ca.cert) }, requestTimeoutMs: 10_000 });
  const otherCa = new EtcdKvClient({
    endpoints: etcd.endpoints, requestTimeoutMs: 10_000,
    credentials: { rootCertificate: await readFile(pki.ca.cert), certChain: await readFile(pki.apiserverEtcdClient.cert), privateKey: await readFile(pki.apiserverEtcdClient.key) },
  });
  try {
    for (const c of [noCert, otherCa]) {
      await assert.rejects(c.range({ key: Buffer.from('/registry/') }), (e: unknown) => e instanceof EtcdCallError && e.code === GRPC_UNAVAILABLE);
    }
  } finally {
    noCert.close();
    otherCa.close();
  }
});
