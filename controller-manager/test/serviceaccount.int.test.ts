/**
 * The serviceaccount controller and root-ca-cert-publisher against the real apiserver (with the
 * ServiceAccount admission plugin on) and a 3-member etcd.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, Pods, ServiceAccounts, isNotFound, type ConfigMap, type Pod, type ServiceAccount } from '@mk8s/api';
import { createClientset, type Clientset } from '@mk8s/client';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { createControllerManager } from '../src/index.js';
import type { Obj } from '../src/util/meta.js';
import { createNamespace, waitFor } from './helpers.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n';
let server: TestApiServer;
let client: Clientset;
const ac = new AbortController();
let running: Promise<void>;

before(async () => {
  server = await startTestApiServer({ enableAdmissionPlugins: ['ServiceAccount'] });
  client = createClientset({ server: server.url, qps: 0 });
  const cm = createControllerManager({ client, healthPort: -1, leaderElect: false, controllers: ['serviceaccount', 'root-ca-cert-publisher'], rootCA: CA });
  running = cm.run(ac.signal);
  await cm.ready;
});
after(async () => {
  ac.abort();
  await running?.catch(() => undefined);
  await server?.stop();
});

const getOr = async <T>(fn: () => Promise<T>): Promise<T | undefined> => { try { return await fn(); } catch (err) { if (isNotFound(err)) return undefined; throw err; } };

test('a new namespace gets the default ServiceAccount and kube-root-ca.crt; pods then get the token volume', async () => {
  await createNamespace(client, 'sa-one');
  const sas = client.resource<Obj<ServiceAccount>>(ServiceAccounts, 'sa-one');
  const cms = client.resource<Obj<ConfigMap>>(ConfigMaps, 'sa-one');
  const sa = await waitFor('default SA', () => getOr(() => sas.get('default')));
  const cm = await waitFor('kube-root-ca.crt', () => getOr(() => cms.get('kube-root-ca.crt')));
  assert.deepEqual(cm.data, { 'ca.crt': CA });

  const pod = await client.resource<Obj<Pod>>(Pods, 'sa-one').create({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] },
  });
  assert.equal(pod.spec?.serviceAccountName, 'default');
  assert.match(pod.spec?.volumes?.[0]?.name ?? '', /^kube-api-access-/);

  await sas.delete('default');
  const again = await waitFor('default SA recreated', async () => {
    const x = await getOr(() => sas.get('default'));
    return x && x.metadata.uid !== sa.metadata.uid ? x : undefined;
  });
  assert.equal(again.metadata.name, 'default');

  await cms.update({ ...cm, data: { 'ca.crt': 'tampered' } });
  await waitFor('kube-root-ca.crt restored', async () => (await cms.get('kube-root-ca.crt')).data?.['ca.crt'] === CA);
});

test('a pod naming a missing ServiceAccount is refused', async () => {
  await createNamespace(client, 'sa-two');
  await assert.rejects(client.resource<Obj<Pod>>(Pods, 'sa-two').create({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { serviceAccountName: 'ghost', containers: [{ name: 'c', image: 'busybox' }] },
  }), (err: Error) => /error looking up service account sa-two\/ghost: serviceaccount "ghost" not found/.test(err.message));
});
