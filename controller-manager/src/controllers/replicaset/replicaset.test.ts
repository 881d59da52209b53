import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Pods, type Pod, type ReplicaSet } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import { ReplicaSetController, type PodObj, type RSObj } from './replicaset.js';

function replicaSet(name: string, replicas: number, statusReplicas?: number): ReplicaSet {
  const status = statusReplicas === undefined ? {} : { status: { replicas: statusReplicas, fullyLabeledReplicas: statusReplicas, readyReplicas: 0, availableReplicas: 0, observedGeneration: 1 } };
  return {
    ...status,
    apiVersion: 'apps/v1', kind: 'ReplicaSet',
    metadata: { name, namespace: 'default', generation: 1 },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
  };
}
function pod(name: string, labels: Record<string, string>, owner?: RSObj, o: { phase?: string; node?: string; ready?: boolean } = {}): Pod {
  const p: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] }, status: { phase: o.phase ?? 'Running' } };
  if (owner) p.metadata!.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner.metadata.name, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true }];
  if (o.node) p.spec!.nodeName = o.node;
  if (o.ready !== undefined) p.status!.conditions = [{ type: 'Ready', status: o.ready ? 'True' : 'False' }];
  return p;
}
function setup(): { f: ControllerFixture; c: ReplicaSetController } {
  const f = newControllerFixture();
  const c = f.build((ctx) => new ReplicaSetController(ctx));
  return { f, c };
}

const cases = [
  { name: 'creates missing pods', replicas: 2, pods: 0, want: ['create pods', 'create pods', 'update replicasets/status'] },
  { name: 'deletes extra pods (status follows the watch)', replicas: 1, pods: 3, statusReplicas: 3, want: ['delete pods', 'delete pods'] },
  { name: 'does nothing in sync', replicas: 1, pods: 1, statusReplicas: 1, want: [] },
];
for (const tc of cases) {
  test(`replicaset: ${tc.name}`, async () => {
    const { f } = setup();
    const rs = f.seed(replicaSet('web', tc.replicas, tc.statusReplicas) as RSObj);
    for (let i = 0; i < tc.pods; i++) f.seed(pod(`web-${i}`, { app: 'web' }, rs) as PodObj);
    await f.reconcile('default/web');
    assert.deepEqual(f.actions({ writesOnly: true }), tc.want);
  });
}

test('replicaset: created pods carry the template and a controller reference; events are recorded', async () => {
  const { f } = setup();
  const rs = f.seed(replicaSet('web', 1) as RSObj);
  await f.reconcile('default/web');
  const created = f.client.actions().find((a) => a.verb === 'create')!.object as Pod;
  assert.equal(created.metadata?.generateName, 'web-');
  assert.deepEqual(created.metadata?.labels, { app: 'web' });
  assert.deepEqual(created.metadata?.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.match(f.recorder.events[0] ?? '', /^Normal SuccessfulCreate Created pod: web-/);
});

test('replicaset: expectations stop a second create before the watch catches up', async () => {
  const { f, c } = setup();
  f.seed(replicaSet('web', 3) as RSObj);
  await f.reconcile('default/web');
  f.client.clearActions();
  await f.reconcile('default/web'); // informer has not seen the 3 pods yet
  assert.deepEqual(f.actions({ writesOnly: true }).filter((a) => a.startsWith('create')), []);
  assert.deepEqual(c.expectations.get('default/web'), { add: 3, del: 0 });
});

test('replicaset: deletes unscheduled, pending and not-ready pods first', async () => {
  const { f } = setup();
  const rs = f.seed(replicaSet('web', 1, 4) as RSObj);
  f.seed(pod('running', { app: 'web' }, rs, { node: 'n1', ready: true }) as PodObj);
  f.seed(pod('notready', { app: 'web' }, rs, { node: 'n1', ready: false }) as PodObj);
  f.seed(pod('pending', { app: 'web' }, rs, { node: 'n1', phase: 'Pending' }) as PodObj);
  f.seed(pod('unscheduled', { app: 'web' }, rs, { phase: 'Pending' }) as PodObj);
  await f.reconcile('default/web');
  const deleted = f.client.actions().filter((a) => a.verb === 'delete').map((a) => a.name).sort();
  assert.deepEqual(deleted, ['notready', 'pending', 'unscheduled']);
});

test('replicaset: adopts matching orphans and releases pods whose labels stopped matching', async () => {
  const { f } = setup();
  const rs = f.seed(replicaSet('web', 2, 2) as RSObj);
  f.seed(pod('orphan', { app: 'web' }) as PodObj);
  f.seed(pod('owned', { app: 'web' }, rs) as PodObj);
  f.seed(pod('relabelled', { app: 'other' }, rs) as PodObj);
  await f.reconcile('default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), ['patch pods', 'patch pods']);
  const pods = await f.client.resource<PodObj>(Pods, 'default').list();
  const refs = Object.fromEntries(pods.items.map((p) => [p.metadata.name, p.metadata.ownerReferences?.map((r) => r.uid) ?? []]));
  assert.deepEqual(refs, { orphan: [rs.metadata.uid], owned: [rs.metadata.uid], relabelled: [] });
});

test('replicaset: status counts ready and available pods', async () => {
  const { f } = setup();
  const rs = f.seed(replicaSet('web', 2) as RSObj);
  f.seed(pod('a', { app: 'web' }, rs, { ready: true }) as PodObj, pod('b', { app: 'web' }, rs, { ready: false }) as PodObj);
  await f.reconcile('default/web');
  const st = f.client.actions().find((a) => a.subresource === 'status')!.object as ReplicaSet;
  assert.deepEqual(st.status, { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 1, observedGeneration: 1 });
});

test('replicaset: a pod add event is counted against the expectations', async () => {
  const { f, c } = setup();
  const rs = f.seed(replicaSet('web', 1) as RSObj);
  await f.reconcile('default/web');
  assert.equal(c.expectations.satisfied('default/web'), false);
  const [p] = (await f.client.resource<PodObj>(Pods, 'default').list()).items;
  assert.equal(p?.metadata.ownerReferences?.[0]?.uid, rs.metadata.uid);
  f.informers.informerFor<PodObj>(Pods).add(p!);
  assert.equal(c.expectations.satisfied('default/web'), true);
});
