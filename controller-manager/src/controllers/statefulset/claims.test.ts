import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OwnerReference } from '@mk8s/api';
import { claimsFor, desiredClaimOwners, podClaimIsStale, type PVCObj } from './claims.js';
import type { STSObj } from './util.js';

const set = (whenDeleted?: string, whenScaled?: string): STSObj => ({
  apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web', namespace: 'default', uid: 'set-uid' },
  spec: {
    replicas: 2, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } },
    ...(whenDeleted ? { persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled } } : {}),
    volumeClaimTemplates: [{ metadata: { name: 'data', labels: { tier: 'db' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  },
} as STSObj);
const pod = { metadata: { name: 'web-1', uid: 'pod-uid' } };
const setRef: OwnerReference = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'set-uid', controller: true, blockOwnerDeletion: true };
const podRef: OwnerReference = { apiVersion: 'v1', kind: 'Pod', name: 'web-1', uid: 'pod-uid', controller: true, blockOwnerDeletion: true };
const claim = (...refs: OwnerReference[]): PVCObj => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-web-1', namespace: 'default', ...(refs.length ? { ownerReferences: refs } : {}) } } as PVCObj);

test('claimsFor: <template>-<set>-<ordinal>, template labels plus the selector', () => {
  const c = claimsFor(set(), 1).get('data')!;
  assert.equal(c.metadata.name, 'data-web-1');
  assert.deepEqual(c.metadata.labels, { tier: 'db', app: 'web' });
  assert.deepEqual(c.spec?.accessModes, ['ReadWriteOnce']);
});

test('desiredClaimOwners: the retention policy table (undefined = up to date)', () => {
  const other: OwnerReference = { apiVersion: 'example.com/v1', kind: 'Backup', name: 'b', uid: 'b-uid' };
  const foreignController: OwnerReference = { ...other, controller: true };
  const cases: { name: string; set: STSObj; claim: PVCObj; scaledDown: boolean; want: OwnerReference[] | undefined }[] = [
    { name: 'no policy (Retain/Retain), no refs', set: set(), claim: claim(), scaledDown: false, want: undefined },
    { name: 'Retain/Retain drops our refs, keeps others', set: set('Retain', 'Retain'), claim: claim(setRef, other), scaledDown: false, want: [other] },
    { name: 'whenDeleted Delete: the set controls it', set: set('Delete', 'Retain'), claim: claim(), scaledDown: false, want: [setRef] },
    { name: 'whenDeleted Delete, already so', set: set('Delete', 'Retain'), claim: claim(setRef), scaledDown: false, want: undefined },
    { name: 'whenDeleted Delete: a non-controller ref to the set is fixed', set: set('Delete', 'Retain'), claim: claim({ ...setRef, controller: false }), scaledDown: true, want: [setRef] },
    { name: 'whenScaled Delete, in range: no refs', set: set('Retain', 'Delete'), claim: claim(), scaledDown: false, want: undefined },
    { name: 'whenScaled Delete, scaled away: the pod controls it', set: set('Retain', 'Delete'), claim: claim(), scaledDown: true, want: [podRef] },
    { name: 'Delete/Delete in range: the set', set: set('Delete', 'Delete'), claim: claim(podRef), scaledDown: false, want: [setRef] },
    { name: 'Delete/Delete scaled away: the pod instead of the set', set: set('Delete', 'Delete'), claim: claim(setRef), scaledDown: true, want: [podRef] },
    { name: 'another controller: ours removed, none added', set: set('Delete', 'Delete'), claim: claim(foreignController, setRef), scaledDown: false, want: [foreignController] },
    { name: 'another controller and no refs of ours: left alone', set: set('Delete', 'Delete'), claim: claim(foreignController), scaledDown: false, want: undefined },
    { name: 'a stale ref (an earlier set of that name): left to the garbage collector', set: set('Delete', 'Delete'), claim: claim({ ...setRef, uid: 'old' }), scaledDown: false, want: undefined },
  ];
  for (const tc of cases) assert.deepEqual(desiredClaimOwners(tc.claim, tc.set, pod, tc.scaledDown), tc.want, tc.name);
});

test('podClaimIsStale: whenScaled Delete and the claim still owned by an earlier pod of the ordinal', () => {
  const lookup = (c: PVCObj | undefined) => (n: string) => (c && c.metadata.name === n ? c : undefined);
  assert.equal(podClaimIsStale(set('Retain', 'Delete'), 1, undefined, lookup(claim(podRef))), true, 'owned by the old web-1');
  assert.equal(podClaimIsStale(set('Retain', 'Delete'), 1, 'pod-uid', lookup(claim(podRef))), false, 'owned by this web-1');
  assert.equal(podClaimIsStale(set('Retain', 'Delete'), 1, undefined, lookup(claim())), false, 'no owner');
  assert.equal(podClaimIsStale(set('Retain', 'Retain'), 1, undefined, lookup(claim(podRef))), false, 'Retain: claims are reused, never stale');
  assert.equal(podClaimIsStale(set('Retain', 'Delete'), 1, undefined, lookup(undefined)), false, 'missing: made with the pod');
});
