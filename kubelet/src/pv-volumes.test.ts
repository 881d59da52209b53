import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from '@mk8s/api';
import type { ConfigSource } from './env.js';
import { containerMounts, MountRetry, setupVolumes, VolumeError } from './volumes.js';
import { setOwnership } from './pv-volumes.js';

const pod = (claim: string, o: { readOnly?: boolean; fsGroup?: number } = {}): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { containers: [{ name: 'c', volumeMounts: [{ name: 'data', mountPath: '/data' }, { name: 'data', mountPath: '/sub', subPath: 'a/b' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim, ...(o.readOnly ? { readOnly: true } : {}) } }],
    ...(o.fsGroup !== undefined ? { securityContext: { fsGroup: o.fsGroup } } : {}) },
});
const claim = (phase: string, volumeName?: string): PersistentVolumeClaim => ({ metadata: { name: 'data', namespace: 'default', uid: 'c1' }, spec: { ...(volumeName ? { volumeName } : {}) }, status: { phase } });
const pvAt = (path: string, extra: Partial<PersistentVolume['spec']> = {}, ann: Record<string, string> = {}): PersistentVolume => ({
  metadata: { name: 'pv1', annotations: ann }, spec: { hostPath: { path, type: 'DirectoryOrCreate' }, claimRef: { namespace: 'default', name: 'data', uid: 'c1' }, ...extra },
});
const src = (c: PersistentVolumeClaim | undefined, pv: PersistentVolume | undefined): ConfigSource => ({
  configMap: async () => undefined, secret: async () => undefined,
  persistentVolumeClaim: async () => c, persistentVolume: async () => pv,
});

test('a Bound claim mounts its PV directory (made on first use), readOnly and subPath honoured', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'pvtest-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const dir = join(root, 'vol');
  const paths = await setupVolumes(root, pod('data', { readOnly: true }), src(claim('Bound', 'pv1'), pvAt(dir, {}, { 'pv.kubernetes.io/provisioned-by': 'mk8s.io/local-path' })));
  assert.equal(paths.get('data'), dir);
  assert.equal((await stat(dir)).mode & 0o777, 0o777, 'a provisioned directory is world-writable, as local-path makes it');
  assert.deepEqual(containerMounts(pod('data').spec!.containers[0]!, paths), [
    { containerPath: '/data', hostPath: dir, readonly: true },
    { containerPath: '/sub', hostPath: join(dir, 'a/b'), readonly: true },
  ]);
});

for (const tc of [
  { name: 'claim missing', c: undefined, pv: undefined, msg: 'error processing PVC default/data: persistentvolumeclaim "data" not found' },
  { name: 'claim Pending', c: claim('Pending'), pv: undefined, msg: 'error processing PVC default/data: PVC is not bound' },
  { name: 'claim being deleted, unprotected', c: { ...claim('Bound', 'pv1'), metadata: { ...claim('Bound').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, pv: undefined, msg: 'error processing PVC default/data: PVC is being deleted' },
  { name: 'PV missing', c: claim('Bound', 'pv1'), pv: undefined, msg: 'error processing PVC default/data: persistentvolume "pv1" not found' },
  { name: 'PV bound to another claim', c: claim('Bound', 'pv1'), pv: { ...pvAt('/x'), spec: { hostPath: { path: '/x' }, claimRef: { namespace: 'default', name: 'other' } } }, msg: 'error processing PVC default/data: PV pv1 is bound to another claim' },
  { name: 'local PV whose path is gone', c: claim('Bound', 'pv1'), pv: { metadata: { name: 'pv1' }, spec: { local: { path: '/nonexistent/mk8s' }, claimRef: { namespace: 'default', name: 'data', uid: 'c1' } } }, msg: 'path "/nonexistent/mk8s" does not exist' },
]) {
  test(`FailedMount: ${tc.name}`, async () => {
    await assert.rejects(setupVolumes('/tmp/unused', pod('data'), src(tc.c, tc.pv as PersistentVolume | undefined)), (e: Error) => e instanceof VolumeError && e.message === tc.msg);
  });
}

test('a claim being deleted but kept by pvc-protection still mounts (its pods run on)', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'pvtest-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const c = { ...claim('Bound', 'pv1'), metadata: { ...claim('Bound').metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['kubernetes.io/pvc-protection'] } };
  const paths = await setupVolumes(root, pod('data'), src(c, pvAt(join(root, 'vol'))));
  assert.equal(paths.get('data'), join(root, 'vol'));
});

test('MountRetry: a claim still binding is retried soon and quietly, backing off; the event once it lasts; other errors every 5 s', () => {
  const r = new MountRetry();
  const transient = new VolumeError('PVC is not bound', { transient: true });
  const got = [0, 300, 900, 2100, 4500, 9500, 11000].map((t) => r.failed('u', transient, t));
  assert.deepEqual(got.map((x) => x.retryAfterMs), [300, 600, 1200, 2400, 4800, 5000, 5000]);
  assert.deepEqual(got.map((x) => x.event), [false, false, false, true, false, true, false]);
  r.forget('u');
  assert.deepEqual(r.failed('u', transient, 20_000), { retryAfterMs: 300, event: false }, 'forgotten once mounted');
  assert.deepEqual(r.failed('v', new VolumeError('configmap "x" not found'), 0), { retryAfterMs: 5000, event: true });
});

test('fsGroup: the pod group owns the directory and its files (OnRootMismatch)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fsgroup-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'f'), 'x', { mode: 0o600 });
  await setOwnership(dir, 4321);
  const d = await stat(dir), f = await stat(join(dir, 'f'));
  if (process.getuid?.() === 0) {
    assert.equal(d.gid, 4321);
    assert.equal(f.gid, 4321);
  }
  assert.ok((d.mode & 0o2070) === 0o2070, 'setgid and group rwx on the directory');
  assert.ok((f.mode & 0o060) === 0o060, 'group rw on files');
});
