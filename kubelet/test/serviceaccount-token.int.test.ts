/**
 * Projected ServiceAccount tokens for real: the apiserver (real etcd) with ServiceAccount admission
 * and a TokenRequest signing key, the kubelet on the real cri-docker shim. The container reads a
 * pod-bound JWT, ca.crt and its namespace at /var/run/secrets/kubernetes.io/serviceaccount.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createVerify, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { ServiceAccountTokenIssuer } from '@mk8s/apiserver';
import { startTestShim, ensureImages, waitFor, type TestShim } from '@mk8s/cri-docker/testing';
import { createClientset, type RestClientset } from '@mk8s/client';
import { ConfigMaps, Pods, ServiceAccounts, type KubeObject, type Pod } from '@mk8s/api';
import { realClock, silentLogger } from '@mk8s/component-base';
import { createKubelet, type Kubelet } from '../src/index.js';

type PodObj = Pod & KubeObject;
let api: TestApiServer; let shim: TestShim; let client: RestClientset; let kubelet: Kubelet;
const ac = new AbortController();
let running: Promise<void>;
let rootDir: string;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

before(async () => {
  ensureImages();
  api = await startTestApiServer({
    enableAdmissionPlugins: ['ServiceAccount'],
    serviceAccountTokenIssuer: new ServiceAccountTokenIssuer({ privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, clock: realClock }),
  });
  shim = await startTestShim();
  client = createClientset({ server: api.url, userAgent: 'kubelet-sa-int-test' });
  rootDir = mkdtempSync(join(tmpdir(), 'mk8s-kubelet-sa-'));
  kubelet = createKubelet({
    nodeName: shim.nodeName, nodeIP: '127.0.0.1', rootDir, client, runtime: shim.runtime, images: shim.images,
    logger: silentLogger(), port: 0, address: '127.0.0.1',
  });
  running = kubelet.run(ac.signal);
  await kubelet.ready;
});

after(async () => {
  ac.abort();
  await running?.catch(() => undefined);
  await shim?.teardown();
  await api?.stop();
  if (rootDir) rmSync(rootDir, { recursive: true, force: true });
});

function execCat(pod: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${kubelet.port()}/exec/default/${pod}/c?command=cat&command=${encodeURIComponent(path)}&stdout=true&stderr=true`, ['v5.channel.k8s.io']);
    let out = '';
    ws.on('message', (d: Buffer) => { if (d[0] === 1) out += d.subarray(1).toString(); });
    ws.on('close', () => resolve(out));
    ws.on('error', reject);
  });
}

test('a pod reads its bound token, ca.crt and namespace from the kube-api-access volume', async () => {
  await client.resource<KubeObject>(ServiceAccounts, 'default').create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }).catch(() => undefined);
  await client.resource<KubeObject>(ConfigMaps, 'default').create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': 'CA-PEM' } } as KubeObject);
  const created = await client.resource<PodObj>(Pods, 'default').create({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sa-reader' },
    spec: { nodeName: shim.nodeName, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] },
  });
  assert.match(created.spec?.volumes?.[0]?.name ?? '', /^kube-api-access-/);
  await waitFor(async () => (await client.resource<PodObj>(Pods, 'default').get('sa-reader')).status?.phase === 'Running', 'pod Running', 90_000);

  const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
  const token = (await execCat('sa-reader', `${dir}/token`)).trim();
  const [h, b, s] = token.split('.');
  assert.ok(h && b && s, `a JWT, got ${JSON.stringify(token)}`);
  assert.ok(createVerify('RSA-SHA256').update(`${h}.${b}`).verify(publicKey, Buffer.from(s, 'base64url')), 'signed with the signing key');
  const claims = JSON.parse(Buffer.from(b, 'base64url').toString()) as { sub: string; iat: number; 'kubernetes.io': { pod: { name: string; uid: string }; node: { name: string }; warnafter: number } };
  assert.equal(claims.sub, 'system:serviceaccount:default:default');
  assert.equal(claims['kubernetes.io'].warnafter - claims.iat, 3607, 'the kubelet asks for 3607 s (extended, with warnafter)');
  assert.deepEqual(claims['kubernetes.io'].pod, { name: 'sa-reader', uid: created.metadata.uid });
  assert.equal(claims['kubernetes.io'].node.name, shim.nodeName);
  assert.equal(await execCat('sa-reader', `${dir}/ca.crt`), 'CA-PEM');
  assert.equal(await execCat('sa-reader', `${dir}/namespace`), 'default');
  await client.resource<PodObj>(Pods, 'default').delete('sa-reader', { gracePeriodSeconds: 0 });
});
