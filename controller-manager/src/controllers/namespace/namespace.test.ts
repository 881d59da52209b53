import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, Namespaces, Pods, type KubeObject } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { NamespaceController } from './namespace.js';

// The fake store deletes a marked object once metadata.finalizers is empty (it does not know the
// namespace's spec.finalizers), so a second finalizer keeps the namespace observable here.
const ns = (deleting: boolean): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', ...(deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['example.com/hold'] } : {}) }, spec: { finalizers: ['kubernetes'] }, status: { phase: deleting ? 'Terminating' : 'Active' } });

test('namespace: deletes the content of a terminating namespace, then finalizes it', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new NamespaceController(ctx, { resources: [Pods, ConfigMaps] }));
  f.seed(ns(true));
  f.seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'team' } } as KubeObject);
  f.seed({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team' }, spec: { containers: [] } } as KubeObject);
  f.seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep', namespace: 'other' } } as KubeObject);
  const first = await f.reconcile('team');
  assert.equal(first.result && first.result.requeueAfterMs, 1000, 'content remained when the pass began');
  assert.deepEqual(f.client.actions().filter((a) => a.verb === 'delete').map((a) => `${a.resource}/${a.name}`).sort(), ['configmaps/cm', 'pods/p']);
  f.client.clearActions();
  await f.reconcile('team');
  const writes = f.actions({ writesOnly: true });
  assert.equal(writes[0], 'update namespaces', 'finalize');
  const live = await f.client.resource(Namespaces).get('team').catch(() => undefined);
  assert.deepEqual((live?.['spec'] as { finalizers?: string[] } | undefined)?.finalizers ?? [], []);
  assert.equal((await f.client.resource(ConfigMaps, 'other').list()).items.length, 1);
});

test('namespace: active namespaces are left alone', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new NamespaceController(ctx, { resources: [Pods] }));
  f.seed(ns(false));
  await f.reconcile('team');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
});
