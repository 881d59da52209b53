import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, Namespaces, Pods, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import { GroupDiscoveryFailedError, StaticDiscovery, type DiscoveryClient } from '@mk8s/client';
import { newControllerFixture } from '@mk8s/client/testing';
import { deletableNamespaced, NamespaceController } from './namespace.js';

const CronTabs: ResourceDescriptor = { group: 'stable.example.com', version: 'v1', kind: 'CronTab', listKind: 'CronTabList', resource: 'crontabs', singular: 'crontab', namespaced: true, shortNames: [], categories: [], verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], subresources: [] };
const ns = (): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['example.com/hold'] }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } });

test('namespace: deletableNamespaced keeps namespaced resources with list and delete', () => {
  const cluster = { ...CronTabs, resource: 'clustertabs', namespaced: false };
  const noDelete = { ...CronTabs, resource: 'readonly', verbs: ['get', 'list'] as const };
  assert.deepEqual(deletableNamespaced([CronTabs, cluster, noDelete, ConfigMaps]).map((r) => r.resource), ['crontabs', 'configmaps']);
});

test('namespace: custom resources found by discovery are deleted before the namespace is finalized', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new NamespaceController({ ...ctx, discovery: new StaticDiscovery([Pods, ConfigMaps, CronTabs]) }));
  f.seed(ns());
  await f.client.resource(CronTabs, 'team').create({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'ct', namespace: 'team' } } as KubeObject);
  f.client.clearActions();
  const first = await f.reconcile('team');
  assert.equal(first.result && first.result.requeueAfterMs, 1000);
  assert.deepEqual(f.client.actions().filter((a) => a.verb === 'delete').map((a) => `${a.resource}/${a.name}`), ['crontabs/ct']);
  const live = await f.client.resource(Namespaces).get('team');
  const remaining = (live.status as { conditions?: { type: string; status: string; message?: string }[] }).conditions?.find((c) => c.type === 'NamespaceContentRemaining');
  assert.equal(remaining?.status, 'True');
  assert.match(remaining?.message ?? '', /crontabs\.stable\.example\.com has 1 resource instances/);
  await f.reconcile('team');
  assert.deepEqual((await f.client.resource(Namespaces).get('team')).spec && ((await f.client.resource(Namespaces).get('team')).spec as { finalizers?: string[] }).finalizers, []);
});

test('namespace: a discovery failure sets NamespaceDeletionDiscoveryFailure and keeps the finalizer', async () => {
  const f = newControllerFixture();
  const failing: DiscoveryClient = { serverPreferredResources: async () => { throw new Error('the server is currently unable to handle the request'); } };
  f.build((ctx) => new NamespaceController({ ...ctx, discovery: failing }));
  f.seed(ns());
  await assert.rejects(f.reconcile('team'), /unable to handle/);
  const live = await f.client.resource(Namespaces).get('team');
  assert.deepEqual((live.spec as { finalizers?: string[] }).finalizers, ['kubernetes']);
  const cond = (live.status as { conditions?: { type: string; status: string; reason?: string }[] }).conditions?.find((c) => c.type === 'NamespaceDeletionDiscoveryFailure');
  assert.equal(cond?.status, 'True');
  assert.equal(cond?.reason, 'DiscoveryFailed');
});

test('namespace: partial discovery deletes what was found, but the namespace waits for whole discovery', async () => {
  const f = newControllerFixture();
  const partial: DiscoveryClient = { serverPreferredResources: async () => { throw new GroupDiscoveryFailedError(new Map([['metrics.example.com/v1', new Error('503')]]), [ConfigMaps]); } };
  f.build((ctx) => new NamespaceController({ ...ctx, discovery: partial }));
  f.seed(ns());
  f.seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'team' } } as KubeObject);
  await assert.rejects(f.reconcile('team'), /complete list of server APIs/);
  assert.deepEqual(f.client.actions().filter((a) => a.verb === 'delete').map((a) => `${a.resource}/${a.name}`), ['configmaps/cm']);
  assert.deepEqual(((await f.client.resource(Namespaces).get('team')).spec as { finalizers?: string[] }).finalizers, ['kubernetes']);
});
