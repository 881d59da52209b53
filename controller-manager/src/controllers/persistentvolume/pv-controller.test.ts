import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PersistentVolumeClaims, PersistentVolumes, Pods, type KubeObject } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { PersistentVolumeController } from './pv-controller.js';
import { PVCProtectionController, PVProtectionController, canReleaseClaim } from './protection.js';

const pv = (name: string, extra: { spec?: Record<string, unknown>; status?: Record<string, unknown>; metadata?: Record<string, unknown> } = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name, ...(extra.metadata ?? {}) },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/d/${name}` }, persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem', ...(extra.spec ?? {}) },
  status: { phase: 'Available', ...(extra.status ?? {}) },
});
const pvc = (name: string, extra: { spec?: Record<string, unknown>; metadata?: Record<string, unknown>; status?: Record<string, unknown> } = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default', ...(extra.metadata ?? {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '', volumeMode: 'Filesystem', ...(extra.spec ?? {}) },
  status: { phase: 'Pending', ...(extra.status ?? {}) },
});
const pod = (name: string, claim: string, phase = 'Running'): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] }, status: { phase },
});

test('binder: a Pending claim and an Available volume end Bound to each other (volume first)', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new PersistentVolumeController(ctx));
  f.seed(pv('pv1', { spec: { capacity: { storage: '5Gi' } } }));
  const claim = f.seed(pvc('data'));
  await f.reconcile('claim:default/data');
  assert.deepEqual(f.actions({ writesOnly: true }), ['update persistentvolumes', 'update persistentvolumes/status', 'update persistentvolumeclaims', 'update persistentvolumeclaims/status']);
  const v = await f.client.resource(PersistentVolumes).get('pv1') as KubeObject & { spec: { claimRef: { name: string; uid: string } }; status: { phase: string } };
  assert.equal(v.spec.claimRef.name, 'data');
  assert.equal(v.spec.claimRef.uid, claim.metadata.uid);
  assert.equal(v.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.equal(v.status.phase, 'Bound');
  const c = await f.client.resource(PersistentVolumeClaims, 'default').get('data') as KubeObject & { spec: { volumeName: string }; status: { phase: string; capacity: { storage: string }; accessModes: string[] } };
  assert.equal(c.spec.volumeName, 'pv1');
  assert.equal(c.metadata.annotations?.['pv.kubernetes.io/bind-completed'], 'yes');
  assert.deepEqual(c.status, { phase: 'Bound', capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'] });
  // The caches still hold the versions before these writes: the next syncs wait for the informer
  // instead of binding (and writing status) again.
  f.client.clearActions();
  await f.reconcile('claim:default/data');
  await f.reconcile('volume:pv1');
  assert.deepEqual(f.actions({ writesOnly: true }), [], 'no second write from a stale cache');
  for (const [r, o] of [[PersistentVolumes, v], [PersistentVolumeClaims, c]] as const) (f.informers.informerFor(r) as unknown as { add(o: unknown): void }).add(o);
  await f.reconcile('claim:default/data');
  await f.reconcile('volume:pv1');
  assert.deepEqual(f.actions({ writesOnly: true }), [], 'caught up: in sync');
});

test('binder: an already Bound pair is left alone', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new PersistentVolumeController(ctx));
  const claim = f.seed(pvc('data', { spec: { volumeName: 'pv1' }, metadata: { annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } }, status: { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } }));
  f.seed(pv('pv1', { spec: { claimRef: { namespace: 'default', name: 'data', uid: claim.metadata.uid } }, status: { phase: 'Bound' } }));
  await f.reconcile('claim:default/data');
  await f.reconcile('volume:pv1');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
});

test('binder: a claim of an Immediate class is annotated for its provisioner, with an event', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new PersistentVolumeController(ctx));
  f.seed({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast' }, provisioner: 'mk8s.io/local-path', volumeBindingMode: 'Immediate' });
  f.seed(pvc('data', { spec: { storageClassName: 'fast' } }));
  await f.reconcile('claim:default/data');
  assert.deepEqual(f.actions({ writesOnly: true }), ['update persistentvolumeclaims']);
  const c = await f.client.resource(PersistentVolumeClaims, 'default').get('data');
  assert.equal(c.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'], 'mk8s.io/local-path');
  assert.match(f.recorder.events[0]!, /^Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'mk8s.io\/local-path'/);
});

test('binder: a claim of an absent class stays Pending with a ProvisioningFailed event', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new PersistentVolumeController(ctx));
  f.seed(pvc('data', { spec: { storageClassName: 'gold' } }));
  await f.reconcile('claim:default/data');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
  assert.deepEqual(f.recorder.events, ['Warning ProvisioningFailed storageclass.storage.k8s.io "gold" not found']);
});

for (const tc of [
  { name: 'Retain: the volume is Released and kept', policy: 'Retain', ann: {}, phase: 'Released', writes: ['update persistentvolumes/status'] },
  { name: 'Delete of a provisioned volume: Released, left to its provisioner', policy: 'Delete', ann: { 'pv.kubernetes.io/provisioned-by': 'mk8s.io/local-path' }, phase: 'Released', writes: ['update persistentvolumes/status'] },
  { name: 'Delete of a static volume: Failed (nothing can delete it)', policy: 'Delete', ann: {}, phase: 'Failed', writes: ['update persistentvolumes/status'] },
]) {
  test(`binder: claim deleted, ${tc.name}`, async () => {
    const f = newControllerFixture();
    f.build((ctx) => new PersistentVolumeController(ctx));
    f.seed(pv('pv1', { metadata: { annotations: tc.ann }, spec: { persistentVolumeReclaimPolicy: tc.policy, claimRef: { namespace: 'default', name: 'data', uid: 'gone' } }, status: { phase: 'Bound' } }));
    await f.reconcile('volume:pv1');
    assert.deepEqual(f.actions({ writesOnly: true }), tc.writes);
    const v = await f.client.resource(PersistentVolumes).get('pv1') as KubeObject & { status: { phase: string } };
    assert.equal(v.status.phase, tc.phase);
  });
}

test('binder: a new volume becomes Available; a volume whose claim went elsewhere is unbound', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new PersistentVolumeController(ctx));
  f.seed(pv('new', { status: { phase: 'Pending' } }));
  const claim = f.seed(pvc('data', { spec: { volumeName: 'other' } }));
  f.seed(pv('stale', { metadata: { annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }, spec: { claimRef: { namespace: 'default', name: 'data', uid: claim.metadata.uid } }, status: { phase: 'Bound' } }));
  await f.reconcile('volume:new');
  await f.reconcile('volume:stale');
  assert.deepEqual(f.actions({ writesOnly: true }), ['update persistentvolumes/status', 'update persistentvolumes', 'update persistentvolumes/status']);
  const stale = await f.client.resource(PersistentVolumes).get('stale') as KubeObject & { spec: { claimRef?: unknown }; status: { phase: string } };
  assert.equal(stale.spec.claimRef, undefined);
  assert.equal(stale.status.phase, 'Available');
});

test('binder: a Bound claim whose volume is gone is Lost', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new PersistentVolumeController(ctx));
  f.seed(pvc('data', { spec: { volumeName: 'gone' }, metadata: { annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } }, status: { phase: 'Bound' } }));
  await f.reconcile('claim:default/data');
  assert.deepEqual(f.actions({ writesOnly: true }), ['update persistentvolumeclaims/status']);
  assert.deepEqual(f.recorder.events, ['Warning ClaimLost Bound claim has lost its PersistentVolume. Data on the volume is lost!']);
});

test('pvc-protection: a deleted claim keeps its finalizer while a running pod uses it, loses it once the pod is gone or done', async () => {
  const deleting = pvc('data', { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['kubernetes.io/pvc-protection'] } });
  assert.equal(canReleaseClaim(deleting as never, [pod('p', 'data') as never]), false);
  assert.equal(canReleaseClaim(deleting as never, [pod('p', 'data', 'Succeeded') as never]), true);
  assert.equal(canReleaseClaim(deleting as never, [pod('p', 'other') as never]), true);
  const f = newControllerFixture();
  f.build((ctx) => new PVCProtectionController(ctx));
  f.seed(deleting);
  const p = f.seed(pod('p', 'data'));
  await f.reconcile('default/data');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
  await f.client.resource(Pods, 'default').delete(p.metadata.name);
  (f.informers.informerFor(Pods) as unknown as { delete(o: unknown): void }).delete(p);
  f.client.clearActions();
  await f.reconcile('default/data');
  assert.deepEqual(f.actions({ writesOnly: true }), ['update persistentvolumeclaims']);
});

test('pv-protection: a deleted volume keeps its finalizer while Bound', async () => {
  for (const [phase, writes] of [['Bound', []], ['Released', ['update persistentvolumes']]] as const) {
    const f = newControllerFixture();
    f.build((ctx) => new PVProtectionController(ctx));
    f.seed(pv('pv1', { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['kubernetes.io/pv-protection'] }, status: { phase } }));
    await f.reconcile('pv1');
    assert.deepEqual(f.actions({ writesOnly: true }), writes, phase);
  }
});
