import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PersistentVolumes, Pods, type KubeObject } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { LocalPathProvisioner } from './local-path-provisioner.js';
import { basePathFor, helperPod, parseConfig, volumeAction } from './decisions.js';

const config = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'local-path-config', namespace: 'kube-system' },
  data: { 'config.json': JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/var/lib/lp'] }, { node: 'node-2', paths: ['/data/node-2/'] }] }) } };
const sc = (mode = 'WaitForFirstConsumer', reclaimPolicy = 'Delete') => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'standard' }, provisioner: 'mk8s.io/local-path', volumeBindingMode: mode, reclaimPolicy });
const claim = (ann: Record<string, string>) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default', annotations: { 'volume.kubernetes.io/storage-provisioner': 'mk8s.io/local-path', ...ann } },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'standard', volumeMode: 'Filesystem' }, status: { phase: 'Pending' } });
const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });

test('config: a node of its own, else the default path', () => {
  const cfg = parseConfig(config.data['config.json']);
  assert.equal(basePathFor(cfg, 'node-2'), '/data/node-2/');
  assert.equal(basePathFor(cfg, 'node-1'), '/var/lib/lp');
  assert.throws(() => parseConfig(undefined), /no config.json/);
});

test('provisions a hostPath PV on the selected node, pre-bound to the claim, with node affinity', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new LocalPathProvisioner(ctx));
  f.seed(config); f.seed(sc()); f.seed(node('node-2'));
  const c = f.seed(claim({ 'volume.kubernetes.io/selected-node': 'node-2' }) as KubeObject);
  await f.reconcile('claim:default/data');
  assert.deepEqual(f.actions({ writesOnly: true }), ['create persistentvolumes']);
  const pv = await f.client.resource(PersistentVolumes).get(`pvc-${c.metadata.uid}`) as KubeObject & { spec: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.deepEqual(pv.spec['hostPath'], { path: `/data/node-2/pvc-${c.metadata.uid}_default_data`, type: 'DirectoryOrCreate' });
  assert.deepEqual(pv.spec['nodeAffinity'].required.nodeSelectorTerms[0].matchExpressions, [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-2'] }]);
  assert.equal(pv.spec['claimRef'].uid, c.metadata.uid);
  assert.equal(pv.spec['persistentVolumeReclaimPolicy'], 'Delete');
  assert.deepEqual(pv.spec['capacity'], { storage: '1Gi' });
  assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'], 'mk8s.io/local-path');
  assert.deepEqual(f.recorder.events.map((e) => e.split(' ').slice(0, 2).join(' ')), ['Normal Provisioning', 'Normal ProvisioningSucceeded']);
  (f.informers.informerFor(PersistentVolumes) as unknown as { seed(o: unknown): void }).seed(pv);
  f.client.clearActions();
  await f.reconcile('claim:default/data');
  assert.deepEqual(f.actions({ writesOnly: true }), [], 'idempotent');
});

test('waits for the scheduler: no selected node, nothing provisioned; Immediate class: ProvisioningFailed', async () => {
  for (const [mode, events] of [['WaitForFirstConsumer', 0], ['Immediate', 1]] as const) {
    const f = newControllerFixture();
    f.build((ctx) => new LocalPathProvisioner(ctx));
    f.seed(config); f.seed(sc(mode)); f.seed(claim({}));
    await f.reconcile('claim:default/data');
    assert.deepEqual(f.actions({ writesOnly: true }), []);
    assert.equal(f.recorder.events.length, events, mode);
  }
});

const released = (policy: string) => ({ apiVersion: 'v1', kind: 'PersistentVolume',
  metadata: { name: 'pvc-1', annotations: { 'pv.kubernetes.io/provisioned-by': 'mk8s.io/local-path', 'mk8s.io/local-path-node': 'node-1' } },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: policy, hostPath: { path: '/var/lib/lp/pvc-1_default_data', type: 'DirectoryOrCreate' }, claimRef: { namespace: 'default', name: 'data', uid: 'gone' } },
  status: { phase: 'Released' } });

test('Delete: a helper pod on the node removes the directory, then the PV goes; Retain: kept', async () => {
  assert.equal(volumeAction(released('Retain') as never, undefined), 'none');
  const f = newControllerFixture();
  f.build((ctx) => new LocalPathProvisioner(ctx));
  f.seed(released('Delete'));
  const r1 = await f.reconcile('volume:pvc-1');
  assert.deepEqual(f.actions({ writesOnly: true }), ['create pods']);
  assert.ok((r1.result as { requeueAfterMs?: number }).requeueAfterMs);
  const pod = await f.client.resource(Pods, 'kube-system').get('helper-pod-delete-pvc-1') as KubeObject & { spec: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.equal(pod.spec['nodeName'], 'node-1');
  assert.deepEqual(pod.spec['volumes'][0].hostPath, { path: '/var/lib/lp', type: 'DirectoryOrCreate' });
  assert.deepEqual(pod.spec['containers'][0].env, [{ name: 'VOL_DIR', value: 'pvc-1_default_data' }]);
  (f.informers.informerFor(Pods) as unknown as { seed(o: unknown): void }).seed({ ...pod, status: { phase: 'Succeeded' } });
  f.client.clearActions();
  await f.reconcile('volume:pvc-1');
  assert.deepEqual(f.actions({ writesOnly: true }), ['delete pods', 'delete persistentvolumes']);
});

test('Delete: no more than maxHelperPods helper pods at a time; a helper that goes wakes the next volume', async () => {
  const f = newControllerFixture();
  const lp = f.build((ctx) => new LocalPathProvisioner(ctx, { maxHelperPods: 2 }));
  const vol = (n: number) => ({ ...released('Delete'), metadata: { ...released('Delete').metadata, name: `pvc-${n}` } });
  f.seed(vol(1), vol(2), vol(3));
  for (const n of [1, 2, 3]) await f.reconcile(`volume:pvc-${n}`);
  assert.deepEqual(f.actions({ writesOnly: true }), ['create pods', 'create pods'], 'the third waits for a slot');
  const pods = f.informers.informerFor(Pods) as unknown as { add(o: unknown): void; delete(o: unknown): void };
  const helper = await f.client.resource(Pods, 'kube-system').get('helper-pod-delete-pvc-1');
  pods.add(helper);
  f.client.clearActions();
  pods.delete(helper);
  assert.ok(lp.queue.len() >= 1, 'the waiting volume is enqueued again');
  await f.reconcile('volume:pvc-3');
  assert.deepEqual(f.actions({ writesOnly: true }), ['create pods']);
});

test('expansion: a grown request is recorded as the PV capacity', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new LocalPathProvisioner(ctx));
  const c = f.seed<KubeObject>({ ...claim({}), spec: { ...claim({}).spec, volumeName: 'pvc-1', resources: { requests: { storage: '3Gi' } } }, status: { phase: 'Bound' } });
  f.seed({ ...released('Delete'), spec: { ...released('Delete').spec, claimRef: { namespace: 'default', name: 'data', uid: c.metadata.uid } }, status: { phase: 'Bound' } });
  await f.reconcile('volume:pvc-1');
  assert.deepEqual(f.actions({ writesOnly: true }), ['update persistentvolumes']);
  const pv = await f.client.resource(PersistentVolumes).get('pvc-1') as KubeObject & { spec: { capacity: { storage: string } } };
  assert.equal(pv.spec.capacity.storage, '3Gi');
});

test('helper pod: parent dir mounted, only the volume dir removed', () => {
  const p = helperPod(released('Delete') as never, 'node-1');
  assert.equal(p.spec?.restartPolicy, 'Never');
  assert.deepEqual(p.spec?.containers[0]?.command, ['/bin/sh', '-c', 'rm -rf "/data/$VOL_DIR"']);
});

test('Delete: a helper pod that fails: VolumeFailedDelete, the pod goes, the PV stays, and the sync fails (queue back-off, not a fixed loop)', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new LocalPathProvisioner(ctx));
  f.seed(released('Delete'));
  await f.reconcile('volume:pvc-1');
  const pod = await f.client.resource(Pods, 'kube-system').get('helper-pod-delete-pvc-1');
  (f.informers.informerFor(Pods) as unknown as { seed(o: unknown): void }).seed({ ...pod, status: { phase: 'Failed' } });
  f.client.clearActions();
  await assert.rejects(f.reconcile('volume:pvc-1'), /helper pod helper-pod-delete-pvc-1 failed to remove the directory of pvc-1 on node node-1/);
  assert.deepEqual(f.actions({ writesOnly: true }), ['delete pods'], 'the PV is kept: its directory is still there');
  assert.deepEqual(f.recorder.events.filter((e) => e.includes('VolumeFailedDelete')).length, 1);
});
