import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, Events, Pods, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import { StaticDiscovery } from '@mk8s/client';
import { newControllerFixture } from '@mk8s/client/testing';
import { collectable, GarbageCollector } from './garbagecollector.js';

const Widgets: ResourceDescriptor = { group: 'e2e.example.com', version: 'v1', kind: 'Widget', listKind: 'WidgetList', resource: 'widgets', singular: 'widget', namespaced: true, shortNames: [], categories: [], verbs: ['create', 'delete', 'get', 'list', 'watch'], subresources: [] };

test('gc: collectable keeps list+watch+delete resources except events', () => {
  const noWatch = { ...Widgets, resource: 'nowatch', verbs: ['delete', 'list'] as const };
  const newEvents = { ...Events, group: 'events.k8s.io' };
  assert.deepEqual(collectable([Widgets, noWatch, Events, newEvents, Pods]).map((r) => r.resource), ['widgets', 'pods']);
});

test('gc: a custom resource found by discovery is monitored and its orphans collected', async () => {
  const f = newControllerFixture();
  const discovery = new StaticDiscovery([ConfigMaps]);
  const gc = f.build((ctx) => new GarbageCollector({ ...ctx, discovery }));
  assert.equal(await gc.resyncMonitors(), 0, 'nothing new yet');
  await f.client.resource(Widgets, 'default').create({ apiVersion: 'e2e.example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: 'u-gone' }] } } as KubeObject);
  await f.reconcile('widgets.e2e.example.com|default/w');
  assert.equal(f.client.actions().filter((a) => a.verb === 'delete').length, 0, 'not monitored before discovery lists it');
  discovery.resources = [ConfigMaps, Widgets];
  assert.equal(await gc.resyncMonitors(), 1);
  assert.equal(await gc.resyncMonitors(), 0, 'monitored once');
  f.client.clearActions();
  await f.reconcile('widgets.e2e.example.com|default/w');
  const del = f.client.actions().find((a) => a.verb === 'delete');
  assert.equal(`${del?.resource}/${del?.name}`, 'widgets/w');
});

test('gc: an owner of a custom kind is resolved through the monitored resources', async () => {
  const f = newControllerFixture();
  const gc = f.build((ctx) => new GarbageCollector({ ...ctx, discovery: new StaticDiscovery([ConfigMaps, Widgets]) }));
  await gc.resyncMonitors();
  const owner = await f.client.resource(Widgets, 'default').create({ apiVersion: 'e2e.example.com/v1', kind: 'Widget', metadata: { name: 'owner', namespace: 'default' } } as KubeObject);
  f.seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dep', namespace: 'default', ownerReferences: [{ apiVersion: 'e2e.example.com/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid! }] } } as KubeObject);
  f.client.clearActions();
  await f.reconcile('configmaps|default/dep');
  assert.deepEqual(f.actions({ writesOnly: true }), [], 'owner exists: dependent stays');
});
