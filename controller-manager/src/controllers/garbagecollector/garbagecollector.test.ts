import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Deployments, Pods, ReplicaSets, type KubeObject } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import { GarbageCollector } from './garbagecollector.js';

const deployment = (name: string, o: { finalizers?: string[]; deleting?: boolean } = {}): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment',
  metadata: { name, namespace: 'default', ...(o.finalizers ? { finalizers: o.finalizers } : {}), ...(o.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
});
const rs = (name: string, owners: { name: string; uid: string; block?: boolean }[]): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'ReplicaSet',
  metadata: { name, namespace: 'default', ownerReferences: owners.map((o) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name: o.name, uid: o.uid, controller: true, ...(o.block ? { blockOwnerDeletion: true } : {}) })) },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
});
function setup(): ControllerFixture {
  const f = newControllerFixture();
  f.build((ctx) => new GarbageCollector(ctx, { resources: [Deployments, ReplicaSets] }));
  return f;
}

test('gc: a dependent whose owner is gone is deleted in the background', async () => {
  const f = setup();
  f.seed(rs('web-1', [{ name: 'web', uid: 'gone' }]));
  await f.reconcile('replicasets.apps|default/web-1');
  const del = f.client.actions().find((a) => a.verb === 'delete');
  assert.equal(del?.name, 'web-1');
  assert.equal(del?.deleteOptions?.propagationPolicy, 'Background');
});

test('gc: a dependent whose owner exists (even if only on the server) stays', async () => {
  const f = setup();
  const d = f.seed(deployment('web'));
  f.seed(rs('web-1', [{ name: 'web', uid: d.metadata.uid! }]));
  await f.reconcile('replicasets.apps|default/web-1');
  const [live] = f.client.seed(deployment('api'));
  f.seed(rs('api-1', [{ name: 'api', uid: live!.metadata.uid! }]));
  await f.reconcile('replicasets.apps|default/api-1');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
});

test('gc: references to a gone owner are dropped when another owner remains', async () => {
  const f = setup();
  const d = f.seed(deployment('web'));
  f.seed(rs('web-1', [{ name: 'web', uid: d.metadata.uid! }, { name: 'old', uid: 'gone' }]));
  await f.reconcile('replicasets.apps|default/web-1');
  assert.deepEqual(f.actions({ writesOnly: true }), ['patch replicasets']);
  const got = await f.client.resource(ReplicaSets, 'default').get('web-1');
  assert.deepEqual(got.metadata.ownerReferences?.map((r) => r.name), ['web']);
});

test('gc: orphan propagation removes the owner reference, then the orphan finalizer', async () => {
  const f = setup();
  const d = f.seed(deployment('web', { finalizers: ['orphan'], deleting: true }));
  f.seed(rs('web-1', [{ name: 'web', uid: d.metadata.uid! }]));
  await f.reconcile('deployments.apps|default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), ['patch replicasets', 'patch deployments']);
  assert.deepEqual((await f.client.resource(ReplicaSets, 'default').get('web-1')).metadata.ownerReferences, []);
});

test('gc: foreground propagation deletes blocking dependents first, then releases the owner', async () => {
  const f = setup();
  const d = f.seed(deployment('web', { finalizers: ['foregroundDeletion'], deleting: true }));
  const dep = f.seed(rs('web-1', [{ name: 'web', uid: d.metadata.uid!, block: true }]));
  await f.reconcile('deployments.apps|default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), [], 'waits for the dependent');
  await f.reconcile('replicasets.apps|default/web-1');
  assert.deepEqual(f.actions({ writesOnly: true }), ['delete replicasets']);
  f.informers.informerFor(ReplicaSets).delete(dep);
  await f.reconcile('deployments.apps|default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), ['delete replicasets', 'patch deployments']);
  const patch = f.client.actions().at(-1)?.object as { metadata: { finalizers: string[] } };
  assert.deepEqual(patch.metadata.finalizers, []);
});

test('gc: a dependent that blocks a foreground deletion and has its own dependents is deleted in the foreground', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new GarbageCollector(ctx, { resources: [Deployments, ReplicaSets, Pods] }));
  const d = f.seed(deployment('web', { finalizers: ['foregroundDeletion'], deleting: true }));
  const owned = f.seed(rs('web-1', [{ name: 'web', uid: d.metadata.uid!, block: true }]));
  f.seed({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: owned.metadata.uid!, controller: true, blockOwnerDeletion: true }] }, spec: { containers: [] } } as KubeObject);
  await f.reconcile('replicasets.apps|default/web-1');
  const del = f.client.actions().find((a) => a.verb === 'delete');
  assert.equal(del?.deleteOptions?.propagationPolicy, 'Foreground');
});
