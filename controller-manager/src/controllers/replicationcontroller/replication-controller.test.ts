import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ReplicationController } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import type { PodObj, RSObj } from '../replicaset/replicaset.js';
import { createReplicationManager } from './replication-controller.js';

function rc(name: string, replicas: number, statusReplicas?: number): RSObj {
  const o: ReplicationController = {
    apiVersion: 'v1', kind: 'ReplicationController',
    metadata: { name, namespace: 'default', generation: 1 },
    spec: { replicas, selector: { app: name }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    ...(statusReplicas === undefined ? {} : { status: { replicas: statusReplicas, fullyLabeledReplicas: statusReplicas, readyReplicas: 0, availableReplicas: 0, observedGeneration: 1 } }),
  };
  return o as unknown as RSObj;
}
function pod(name: string, labels: Record<string, string>, owner?: RSObj): PodObj {
  const p: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] }, status: { phase: 'Running' } };
  if (owner) p.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'ReplicationController', name: owner.metadata.name, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true }];
  return p as PodObj;
}
function setup(): ControllerFixture {
  const f = newControllerFixture();
  f.build((ctx) => createReplicationManager(ctx));
  return f;
}

const cases = [
  { name: 'creates missing pods', replicas: 2, pods: 0, want: ['create pods', 'create pods', 'update replicationcontrollers/status'] },
  { name: 'deletes extra pods', replicas: 1, pods: 3, statusReplicas: 3, want: ['delete pods', 'delete pods'] },
  { name: 'does nothing in sync', replicas: 1, pods: 1, statusReplicas: 1, want: [] },
];
for (const tc of cases) {
  test(`replicationcontroller: ${tc.name}`, async () => {
    const f = setup();
    const owner = f.seed(rc('web', tc.replicas, tc.statusReplicas));
    for (let i = 0; i < tc.pods; i++) f.seed(pod(`web-${i}`, { app: 'web' }, owner));
    await f.reconcile('default/web');
    assert.deepEqual(f.actions({ writesOnly: true }), tc.want);
  });
}

test('replicationcontroller: created pods are owned by the ReplicationController (core/v1)', async () => {
  const f = setup();
  const owner = f.seed(rc('web', 1));
  await f.reconcile('default/web');
  const created = f.client.actions().find((a) => a.verb === 'create')!.object as Pod;
  assert.equal(created.metadata?.generateName, 'web-');
  assert.deepEqual(created.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.match(f.recorder.events[0] ?? '', /^Normal SuccessfulCreate Created pod: web-/);
});

test('replicationcontroller: adopts a matching orphan by its label-map selector', async () => {
  const f = setup();
  f.seed(rc('web', 1, 0));
  f.seed(pod('orphan', { app: 'web', extra: 'x' }));
  await f.reconcile('default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), ['patch pods', 'update replicationcontrollers/status']);
});
