import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findMatchingVolume, type PV, type PVC, type StorageClass } from '@mk8s/api';
import { decideClaim, decideVolume, externalProvisioningMsg, NO_VOLUMES_NO_CLASS_MSG, WAIT_FOR_FIRST_CONSUMER_MSG } from './decisions.js';

const pv = (name: string, o: { size?: string; modes?: string[]; cls?: string; phase?: string; ref?: { name: string; namespace?: string; uid?: string }; labels?: Record<string, string>; policy?: string; ann?: Record<string, string>; mode?: string } = {}): PV => ({
  apiVersion: 'v1', kind: 'PersistentVolume',
  metadata: { name, ...(o.labels ? { labels: o.labels } : {}), ...(o.ann ? { annotations: o.ann } : {}) },
  spec: { capacity: { storage: o.size ?? '1Gi' }, accessModes: o.modes ?? ['ReadWriteOnce'], hostPath: { path: `/d/${name}` }, storageClassName: o.cls ?? '',
    persistentVolumeReclaimPolicy: o.policy ?? 'Retain', volumeMode: o.mode ?? 'Filesystem',
    ...(o.ref ? { claimRef: { namespace: o.ref.namespace ?? 'default', name: o.ref.name, ...(o.ref.uid ? { uid: o.ref.uid } : {}) } } : {}) },
  status: { phase: o.phase ?? 'Available' },
});
const pvc = (name: string, o: { size?: string; modes?: string[]; cls?: string; volumeName?: string; selector?: Record<string, string>; ann?: Record<string, string>; uid?: string; mode?: string } = {}): PVC => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', uid: o.uid ?? `uid-${name}`, ...(o.ann ? { annotations: o.ann } : {}) },
  spec: { accessModes: o.modes ?? ['ReadWriteOnce'], resources: { requests: { storage: o.size ?? '1Gi' } }, storageClassName: o.cls ?? '', volumeMode: o.mode ?? 'Filesystem',
    ...(o.volumeName ? { volumeName: o.volumeName } : {}), ...(o.selector ? { selector: { matchLabels: o.selector } } : {}) },
  status: { phase: 'Pending' },
});
const sc = (name: string, mode = 'Immediate'): StorageClass => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'mk8s.io/local-path', volumeBindingMode: mode });
const classes = new Map([['standard', sc('standard', 'WaitForFirstConsumer')], ['fast', sc('fast')]]);
const BOUND = { 'pv.kubernetes.io/bind-completed': 'yes' };

test('findMatchingVolume: table', () => {
  const cases: { name: string; claim: PVC; volumes: PV[]; want: string | undefined; delay?: boolean }[] = [
    { name: 'smallest that is large enough', claim: pvc('c', { size: '2Gi' }), volumes: [pv('big', { size: '10Gi' }), pv('small', { size: '1Gi' }), pv('fit', { size: '3Gi' })], want: 'fit' },
    { name: 'too small: none', claim: pvc('c', { size: '5Gi' }), volumes: [pv('a', { size: '1Gi' })], want: undefined },
    { name: 'access modes must all be offered', claim: pvc('c', { modes: ['ReadWriteMany'] }), volumes: [pv('rwo'), pv('rwx', { modes: ['ReadWriteOnce', 'ReadWriteMany'] })], want: 'rwx' },
    { name: 'class must be equal', claim: pvc('c', { cls: 'fast' }), volumes: [pv('none'), pv('fast', { cls: 'fast' })], want: 'fast' },
    { name: 'selector filters by labels', claim: pvc('c', { selector: { tier: 'db' } }), volumes: [pv('a'), pv('b', { labels: { tier: 'db' } })], want: 'b' },
    { name: 'not Available: skipped', claim: pvc('c'), volumes: [pv('a', { phase: 'Released' }), pv('b', { phase: 'Pending' })], want: undefined },
    { name: 'claimed by another: skipped', claim: pvc('c'), volumes: [pv('a', { ref: { name: 'other' } })], want: undefined },
    { name: 'pre-bound to the claim wins even if larger', claim: pvc('c'), volumes: [pv('small'), pv('mine', { size: '9Gi', ref: { name: 'c' } })], want: 'mine' },
    { name: 'pre-bound with another uid: not this claim', claim: pvc('c'), volumes: [pv('mine', { ref: { name: 'c', uid: 'old' } })], want: undefined },
    { name: 'volume mode must match', claim: pvc('c', { mode: 'Block' }), volumes: [pv('fs')], want: undefined },
    { name: 'delayed binding: only a pre-bound volume', claim: pvc('c'), volumes: [pv('a')], want: undefined, delay: true },
  ];
  for (const tc of cases) assert.equal(findMatchingVolume(tc.claim, tc.volumes, { delayBinding: !!tc.delay })?.metadata.name, tc.want, tc.name);
});

test('findMatchingVolume: the scheduler path filters by node affinity', () => {
  const vols = [pv('n1'), pv('n2')];
  assert.equal(findMatchingVolume(pvc('c'), vols, { delayBinding: true, nodeMatches: (v) => v.metadata?.name === 'n2' })?.metadata.name, 'n2');
});

test('decideClaim: every unbound and bound case', () => {
  const cases: { name: string; claim: PVC; volumes: PV[]; want: unknown }[] = [
    { name: 'Pending → bind to a matching volume', claim: pvc('c'), volumes: [pv('a')], want: { kind: 'bind', volume: 'a' } },
    { name: 'no class, no volume: FailedBinding', claim: pvc('c'), volumes: [], want: { kind: 'pending', event: { type: 'Normal', reason: 'FailedBinding', message: NO_VOLUMES_NO_CLASS_MSG } } },
    { name: 'absent class: ProvisioningFailed', claim: pvc('c', { cls: 'gold' }), volumes: [], want: { kind: 'pending', event: { type: 'Warning', reason: 'ProvisioningFailed', message: 'storageclass.storage.k8s.io "gold" not found' } } },
    { name: 'Immediate class: handed to the provisioner', claim: pvc('c', { cls: 'fast' }), volumes: [], want: { kind: 'pending', provisioner: 'mk8s.io/local-path', event: { type: 'Normal', reason: 'ExternalProvisioning', message: externalProvisioningMsg('mk8s.io/local-path') } } },
    { name: 'WaitForFirstConsumer without a node: waits', claim: pvc('c', { cls: 'standard' }), volumes: [pv('a', { cls: 'standard' })], want: { kind: 'pending', event: { type: 'Normal', reason: 'WaitForFirstConsumer', message: WAIT_FOR_FIRST_CONSUMER_MSG } } },
    { name: 'WaitForFirstConsumer with a selected node: provisioner', claim: pvc('c', { cls: 'standard', ann: { 'volume.kubernetes.io/selected-node': 'node-1' } }), volumes: [], want: { kind: 'pending', provisioner: 'mk8s.io/local-path', event: { type: 'Normal', reason: 'ExternalProvisioning', message: externalProvisioningMsg('mk8s.io/local-path') } } },
    { name: 'volumeName of a missing volume: Pending', claim: pvc('c', { volumeName: 'x' }), volumes: [], want: { kind: 'pending' } },
    { name: 'volumeName of a free volume that fits: bind', claim: pvc('c', { volumeName: 'a' }), volumes: [pv('a')], want: { kind: 'bind', volume: 'a' } },
    { name: 'volumeName of a volume too small: VolumeMismatch', claim: pvc('c', { volumeName: 'a', size: '5Gi' }), volumes: [pv('a')], want: { kind: 'pending', event: { type: 'Warning', reason: 'VolumeMismatch', message: 'Cannot bind to requested volume "a": requested PV is too small' } } },
    { name: 'volumeName of a volume bound elsewhere: FailedBinding', claim: pvc('c', { volumeName: 'a' }), volumes: [pv('a', { ref: { name: 'other', uid: 'u' } })], want: { kind: 'pending', event: { type: 'Warning', reason: 'FailedBinding', message: 'volume already bound to a different claim.' } } },
    { name: 'volume half-bound to this claim: finish binding', claim: pvc('c', { volumeName: 'a' }), volumes: [pv('a', { ref: { name: 'c', uid: 'uid-c' } })], want: { kind: 'bind', volume: 'a' } },
    { name: 'Bound, both sides agree', claim: pvc('c', { volumeName: 'a', ann: BOUND }), volumes: [pv('a', { ref: { name: 'c', uid: 'uid-c' }, phase: 'Bound' })], want: { kind: 'bound', volume: 'a' } },
    { name: 'Bound, volume lost its claimRef: rebind', claim: pvc('c', { volumeName: 'a', ann: BOUND }), volumes: [pv('a')], want: { kind: 'bind', volume: 'a' } },
    { name: 'Bound, volume gone: Lost', claim: pvc('c', { volumeName: 'a', ann: BOUND }), volumes: [], want: { kind: 'lost', event: { type: 'Warning', reason: 'ClaimLost', message: 'Bound claim has lost its PersistentVolume. Data on the volume is lost!' } } },
    { name: 'Bound, no volumeName: Lost', claim: pvc('c', { ann: BOUND }), volumes: [], want: { kind: 'lost', event: { type: 'Warning', reason: 'ClaimLost', message: 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!' } } },
    { name: 'Bound, volume bound to another claim: Misbound', claim: pvc('c', { volumeName: 'a', ann: BOUND }), volumes: [pv('a', { ref: { name: 'c', uid: 'other' } })], want: { kind: 'lost', event: { type: 'Warning', reason: 'ClaimMisbound', message: 'Two claims are bound to the same volume, this one is bound incorrectly' } } },
  ];
  for (const tc of cases) {
    const d = decideClaim(tc.claim, tc.volumes, classes);
    const got = 'volume' in d ? { ...d, volume: d.volume.metadata.name } : d;
    assert.deepEqual(got, tc.want, tc.name);
  }
});

test('decideVolume: every phase transition and both reclaim policies', () => {
  const bound = { name: 'c', uid: 'uid-c' };
  const cases: { name: string; volume: PV; claim?: PVC; want: unknown }[] = [
    { name: 'Pending, no claimRef → Available', volume: pv('a', { phase: 'Pending' }), want: { kind: 'phase', phase: 'Available' } },
    { name: 'Available stays', volume: pv('a'), want: { kind: 'none' } },
    { name: 'pre-bound by name only → Available', volume: pv('a', { phase: 'Pending', ref: { name: 'c' } }), want: { kind: 'phase', phase: 'Available' } },
    { name: 'claim bound to it → Bound', volume: pv('a', { ref: bound }), claim: pvc('c', { volumeName: 'a' }), want: { kind: 'phase', phase: 'Bound' } },
    { name: 'claim not bound yet → wait', volume: pv('a', { ref: bound }), claim: pvc('c'), want: { kind: 'none' } },
    { name: 'claim gone, Retain → Released', volume: pv('a', { ref: bound, phase: 'Bound' }), want: { kind: 'phase', phase: 'Released' } },
    { name: 'claim re-created with another uid → Released', volume: pv('a', { ref: bound, phase: 'Bound' }), claim: pvc('c', { uid: 'new' }), want: { kind: 'phase', phase: 'Released' } },
    { name: 'claim gone, Delete, provisioned → Released (the provisioner deletes)', volume: pv('a', { ref: bound, phase: 'Bound', policy: 'Delete', ann: { 'pv.kubernetes.io/provisioned-by': 'mk8s.io/local-path' } }), want: { kind: 'phase', phase: 'Released' } },
    { name: 'claim gone, Delete, static → Failed', volume: pv('a', { ref: bound, phase: 'Bound', policy: 'Delete' }), want: { kind: 'failDelete', event: { type: 'Warning', reason: 'VolumeFailedDelete', message: 'error getting deleter volume plugin for volume "a": no deletable volume plugin matched' } } },
    { name: 'Failed stays', volume: pv('a', { ref: bound, phase: 'Failed', policy: 'Delete' }), want: { kind: 'none' } },
    { name: 'Released stays', volume: pv('a', { ref: bound, phase: 'Released' }), want: { kind: 'none' } },
    { name: 'claim went to another volume, bound by controller → unbind', volume: pv('a', { ref: bound, ann: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }), claim: pvc('c', { volumeName: 'b' }), want: { kind: 'unbind' } },
    { name: 'claim went to another volume, pre-bound by user → keep', volume: pv('a', { ref: bound }), claim: pvc('c', { volumeName: 'b' }), want: { kind: 'none' } },
  ];
  for (const tc of cases) assert.deepEqual(decideVolume(tc.volume, tc.claim), tc.want, tc.name);
});
