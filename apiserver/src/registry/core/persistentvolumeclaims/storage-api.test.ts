/**
 * The storage API through the whole request pipeline (fastify inject): PV/PVC/StorageClass
 * defaulting, validation, the storage admission plugins and the server-side Tables.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../../../testing/memory-storage.js';
import { buildApiServer } from '../../../server.js';

async function server(t: { after(fn: () => unknown): void }) {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')) });
  t.after(() => app.close());
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method, url, ...(payload !== undefined ? { payload: payload as object } : {}), headers: { ...(method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}), ...headers } });
    return { code: res.statusCode, body: res.json() };
  };
  return call;
}

const sc = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'mk8s.io/local-path', ...extra });
const pvc = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } });
const pv = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '2Gi' }, hostPath: { path: '/tmp/x' }, ...spec } });
const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';

test('a claim without a class gets the default one, the protection finalizer, Pending and Filesystem', async (t) => {
  const call = await server(t);
  assert.equal((await call('POST', '/apis/storage.k8s.io/v1/storageclasses', sc('slow'))).code, 201);
  const def = await call('POST', '/apis/storage.k8s.io/v1/storageclasses', sc('standard', { metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, volumeBindingMode: 'WaitForFirstConsumer' }));
  assert.equal(def.code, 201);
  assert.equal(def.body.reclaimPolicy, 'Delete');
  const c = await call('POST', PVCS, pvc('data'));
  assert.equal(c.code, 201);
  assert.equal(c.body.spec.storageClassName, 'standard');
  assert.equal(c.body.spec.volumeMode, 'Filesystem');
  assert.deepEqual(c.body.metadata.finalizers, ['kubernetes.io/pvc-protection']);
  assert.equal(c.body.status.phase, 'Pending');
  const none = await call('POST', PVCS, pvc('static', { storageClassName: '' }));
  assert.equal(none.body.spec.storageClassName, '', 'an explicit "" means no class');
});

test('a PV defaults to Retain, Filesystem, Pending and gets pv-protection', async (t) => {
  const call = await server(t);
  const r = await call('POST', '/api/v1/persistentvolumes', pv('pv1'));
  assert.equal(r.code, 201);
  assert.equal(r.body.spec.persistentVolumeReclaimPolicy, 'Retain');
  assert.equal(r.body.spec.volumeMode, 'Filesystem');
  assert.equal(r.body.status.phase, 'Pending');
  assert.deepEqual(r.body.metadata.finalizers, ['kubernetes.io/pv-protection']);
});

for (const tc of [
  { name: 'claim without access modes', url: PVCS, body: pvc('a', { accessModes: [] }), field: 'spec.accessModes' },
  { name: 'claim without a storage request', url: PVCS, body: pvc('a', { resources: {} }), field: 'spec.resources[storage]' },
  { name: 'claim with an unknown access mode', url: PVCS, body: pvc('a', { accessModes: ['ReadWriteSometimes'] }), field: 'spec.accessModes' },
  { name: 'claim with a bad volumeMode', url: PVCS, body: pvc('a', { volumeMode: 'Tape' }), field: 'spec.volumeMode' },
  { name: 'PV without capacity', url: '/api/v1/persistentvolumes', body: pv('a', { capacity: {} }), field: 'spec.capacity' },
  { name: 'PV without a source', url: '/api/v1/persistentvolumes', body: pv('a', { hostPath: undefined }), field: 'spec' },
  { name: 'local PV without node affinity', url: '/api/v1/persistentvolumes', body: pv('a', { hostPath: undefined, local: { path: '/d' } }), field: 'spec.nodeAffinity' },
  { name: 'class without provisioner', url: '/apis/storage.k8s.io/v1/storageclasses', body: sc('a', { provisioner: '' }), field: 'provisioner' },
  { name: 'class with a bad binding mode', url: '/apis/storage.k8s.io/v1/storageclasses', body: sc('a', { volumeBindingMode: 'Later' }), field: 'volumeBindingMode' },
]) {
  test(`422 Invalid: ${tc.name}`, async (t) => {
    const call = await server(t);
    const r = await call('POST', tc.url, tc.body);
    assert.equal(r.code, 422);
    assert.equal(r.body.reason, 'Invalid');
    assert.ok(r.body.details.causes.some((c: { field: string }) => c.field === tc.field), JSON.stringify(r.body.details.causes));
  });
}

test('claim spec is immutable except volumeName once and a Bound claim growing in a class that allows expansion', async (t) => {
  const call = await server(t);
  await call('POST', '/apis/storage.k8s.io/v1/storageclasses', sc('grow', { allowVolumeExpansion: true }));
  await call('POST', '/apis/storage.k8s.io/v1/storageclasses', sc('fixed'));
  await call('POST', PVCS, pvc('g', { storageClassName: 'grow' }));
  await call('POST', PVCS, pvc('f', { storageClassName: 'fixed' }));
  const modes = await call('PATCH', `${PVCS}/g`, { spec: { accessModes: ['ReadWriteMany'] } });
  assert.equal(modes.code, 422);
  assert.equal(modes.body.details.causes[0].field, 'spec');
  assert.equal((await call('PATCH', `${PVCS}/g`, { spec: { volumeName: 'pv1' } })).code, 200);
  assert.equal((await call('PATCH', `${PVCS}/g`, { spec: { volumeName: 'pv2' } })).code, 422, 'volumeName is set once');
  const unbound = await call('PATCH', `${PVCS}/g`, { spec: { resources: { requests: { storage: '2Gi' } } } });
  assert.equal(unbound.code, 422, 'an unbound claim cannot grow (spec immutable)');
  for (const n of ['g', 'f']) assert.equal((await call('PATCH', `${PVCS}/${n}/status`, { status: { phase: 'Bound' } })).code, 200);
  const grown = await call('PATCH', `${PVCS}/g`, { spec: { resources: { requests: { storage: '2Gi' } } } });
  assert.equal(grown.code, 200);
  assert.equal(grown.body.spec.resources.requests.storage, '2Gi');
  const refused = await call('PATCH', `${PVCS}/f`, { spec: { resources: { requests: { storage: '2Gi' } } } });
  assert.equal(refused.code, 403);
  assert.equal(refused.body.reason, 'Forbidden');
  const shrink = await call('PATCH', `${PVCS}/g`, { spec: { resources: { requests: { storage: '1Gi' } } } });
  assert.equal(shrink.code, 422);
});

test('StorageClass parameters, provisioner and reclaimPolicy are fixed', async (t) => {
  const call = await server(t);
  await call('POST', '/apis/storage.k8s.io/v1/storageclasses', sc('a'));
  for (const patch of [{ parameters: { x: 'y' } }, { provisioner: 'other.io/p' }, { reclaimPolicy: 'Retain' }, { volumeBindingMode: 'WaitForFirstConsumer' }]) {
    const r = await call('PATCH', '/apis/storage.k8s.io/v1/storageclasses/a', patch);
    assert.equal(r.code, 422, JSON.stringify(patch));
  }
  assert.equal((await call('PATCH', '/apis/storage.k8s.io/v1/storageclasses/a', { allowVolumeExpansion: true })).code, 200);
});

test('PV volume source is immutable; status only through /status', async (t) => {
  const call = await server(t);
  await call('POST', '/api/v1/persistentvolumes', pv('pv1'));
  assert.equal((await call('PATCH', '/api/v1/persistentvolumes/pv1', { spec: { hostPath: { path: '/elsewhere' } } })).code, 422);
  const main = await call('PATCH', '/api/v1/persistentvolumes/pv1', { status: { phase: 'Bound' } });
  assert.equal(main.body.status.phase, 'Pending');
  const st = await call('PATCH', '/api/v1/persistentvolumes/pv1/status', { status: { phase: 'Available' } });
  assert.equal(st.body.status.phase, 'Available');
});

const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
test('Tables: kubectl get pv, pvc, sc columns', async (t) => {
  const call = await server(t);
  await call('POST', '/apis/storage.k8s.io/v1/storageclasses', sc('standard', { metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, volumeBindingMode: 'WaitForFirstConsumer', allowVolumeExpansion: true }));
  await call('POST', '/api/v1/persistentvolumes', pv('pv1', { accessModes: ['ReadWriteMany', 'ReadWriteOnce'], claimRef: { namespace: 'default', name: 'data' }, storageClassName: 'standard' }));
  await call('POST', PVCS, pvc('data', { volumeName: 'pv1' }));
  await call('PATCH', `${PVCS}/data/status`, { status: { phase: 'Bound', capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'] } });
  const cols = (b: { columnDefinitions: { name: string }[] }) => b.columnDefinitions.map((c) => c.name);
  const pvs = (await call('GET', '/api/v1/persistentvolumes', undefined, TABLE)).body;
  assert.deepEqual(cols(pvs), ['Name', 'Capacity', 'Access Modes', 'Reclaim Policy', 'Status', 'Claim', 'StorageClass', 'VolumeAttributesClass', 'Reason', 'Age', 'VolumeMode']);
  assert.deepEqual(pvs.rows[0].cells.slice(0, 9), ['pv1', '2Gi', 'RWO,RWX', 'Retain', 'Pending', 'default/data', 'standard', '<unset>', '']);
  const claims = (await call('GET', PVCS, undefined, TABLE)).body;
  assert.deepEqual(cols(claims), ['Name', 'Status', 'Volume', 'Capacity', 'Access Modes', 'StorageClass', 'VolumeAttributesClass', 'Age', 'VolumeMode']);
  assert.deepEqual(claims.rows[0].cells.slice(0, 7), ['data', 'Bound', 'pv1', '2Gi', 'RWO', 'standard', '<unset>']);
  const scs = (await call('GET', '/apis/storage.k8s.io/v1/storageclasses', undefined, TABLE)).body;
  assert.deepEqual(cols(scs), ['Name', 'Provisioner', 'ReclaimPolicy', 'VolumeBindingMode', 'AllowVolumeExpansion', 'Age']);
  assert.deepEqual(scs.rows[0].cells.slice(0, 5), ['standard (default)', 'mk8s.io/local-path', 'Delete', 'WaitForFirstConsumer', true]);
});
