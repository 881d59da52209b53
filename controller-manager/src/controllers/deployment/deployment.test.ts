import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Deployments, ReplicaSets, type Deployment, type ReplicaSet } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import { computeHash } from '../../util/hash.js';
import { DeploymentController, type DeployObj, type RSObj } from './deployment.js';

const template = (image: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } });

function deployment(o: { replicas?: number; image?: string; strategy?: 'Recreate'; paused?: boolean; limit?: number; surge?: number; unavail?: number; status?: Deployment['status'] } = {}): DeployObj {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', generation: 1 },
    spec: {
      replicas: o.replicas ?? 3, selector: { matchLabels: { app: 'web' } }, template: template(o.image ?? 'v1'),
      strategy: o.strategy ? { type: 'Recreate' } : { type: 'RollingUpdate', rollingUpdate: { maxSurge: o.surge ?? 1, maxUnavailable: o.unavail ?? 1 } },
      revisionHistoryLimit: o.limit ?? 10, progressDeadlineSeconds: 600, ...(o.paused ? { paused: true } : {}),
    },
    ...(o.status ? { status: o.status } : {}),
  } as DeployObj;
}

function replicaSet(d: DeployObj, image: string, replicas: number, o: { available?: number; revision?: number; desired?: number; created?: number } = {}): RSObj {
  const hash = computeHash(template(image));
  const t = template(image);
  return {
    apiVersion: 'apps/v1', kind: 'ReplicaSet',
    metadata: {
      name: `web-${hash}`, namespace: 'default', labels: { app: 'web', 'pod-template-hash': hash },
      creationTimestamp: new Date(Date.UTC(2024, 0, 1) + (o.created ?? 0) * 1000).toISOString(),
      annotations: { 'deployment.kubernetes.io/revision': String(o.revision ?? 1), 'deployment.kubernetes.io/desired-replicas': String(o.desired ?? d.spec!.replicas), 'deployment.kubernetes.io/max-replicas': String((o.desired ?? d.spec!.replicas!) + 1) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: { replicas, selector: { matchLabels: { app: 'web', 'pod-template-hash': hash } }, template: { ...t, metadata: { labels: { app: 'web', 'pod-template-hash': hash } } } },
    status: { replicas, availableReplicas: o.available ?? replicas, readyReplicas: o.available ?? replicas, observedGeneration: 1 },
  } as RSObj;
}

function setup(): ControllerFixture {
  const f = newControllerFixture();
  f.build((ctx) => new DeploymentController(ctx));
  return f;
}
async function rsList(f: ControllerFixture): Promise<RSObj[]> { return (await f.client.resource<RSObj>(ReplicaSets, 'default').list()).items; }
async function getD(f: ControllerFixture): Promise<DeployObj> { return f.client.resource<DeployObj>(Deployments, 'default').get('web'); }

test('deployment: a new Deployment gets a ReplicaSet named by its pod-template-hash', async () => {
  const f = setup();
  const d = f.seed(deployment());
  await f.reconcile('default/web');
  const [rs] = await rsList(f);
  const hash = computeHash(d.spec!.template);
  assert.equal(rs?.metadata.name, `web-${hash}`);
  assert.equal(rs?.spec?.replicas, 3);
  assert.deepEqual(rs?.spec?.selector?.matchLabels, { app: 'web', 'pod-template-hash': hash });
  assert.equal(rs?.spec?.template?.metadata?.labels?.['pod-template-hash'], hash);
  assert.equal(rs?.metadata.annotations?.['deployment.kubernetes.io/revision'], '1');
  assert.equal(rs?.metadata.ownerReferences?.[0]?.uid, d.metadata.uid);
  assert.deepEqual(f.recorder.events, [`Normal ScalingReplicaSet Scaled up replica set web-${hash} from 0 to 3`]);
  const after = await getD(f);
  assert.equal(after.metadata.annotations?.['deployment.kubernetes.io/revision'], '1');
  assert.equal(after.status?.conditions?.find((c) => c.type === 'Progressing')?.reason, 'NewReplicaSetCreated');
});

test('deployment: a template change surges a new ReplicaSet, then scales the old one down within maxUnavailable', async () => {
  const f = setup();
  const d = f.seed(deployment({ replicas: 4, image: 'v2' }));
  f.seed(replicaSet(d, 'v1', 4, { revision: 1, desired: 4 }));
  await f.reconcile('default/web');
  const list = await rsList(f);
  const fresh = list.find((rs) => rs.spec?.template?.spec?.containers[0]?.image === 'v2')!;
  assert.equal(fresh.spec?.replicas, 1, 'maxSurge 1');
  assert.equal(fresh.metadata.annotations?.['deployment.kubernetes.io/revision'], '2');

  // Next pass: new RS exists in the cache with 1 unavailable pod; old RS may lose 1 (5 - 3 - 1).
  const f2 = setup();
  const d2 = f2.seed(deployment({ replicas: 4, image: 'v2' }));
  f2.seed(replicaSet(d2, 'v1', 4, { revision: 1, desired: 4 }));
  f2.seed(replicaSet(d2, 'v2', 1, { available: 0, revision: 2, desired: 4, created: 10 }));
  await f2.reconcile('default/web');
  const old = (await rsList(f2)).find((rs) => rs.spec?.template?.spec?.containers[0]?.image === 'v1')!;
  assert.equal(old.spec?.replicas, 3);
  assert.ok(f2.recorder.events.some((e) => /Scaled down replica set web-\w+ from 4 to 3/.test(e)), f2.recorder.events.join('\n'));
});

test('deployment: a finished rollout reports NewReplicaSetAvailable and prunes history beyond revisionHistoryLimit', async () => {
  const f = setup();
  const d = f.seed(deployment({ replicas: 2, image: 'v2', limit: 0 }));
  f.seed(replicaSet(d, 'v1', 0, { revision: 1, desired: 2 }));
  f.seed(replicaSet(d, 'v2', 2, { revision: 2, desired: 2, created: 10 }));
  await f.reconcile('default/web');
  // first pass writes the complete status; the cleanup happens once the Deployment's status says complete
  const after = await getD(f);
  assert.equal(after.status?.conditions?.find((c) => c.type === 'Progressing')?.reason, 'NewReplicaSetAvailable');
  assert.equal(after.status?.updatedReplicas, 2);
  assert.equal(after.status?.availableReplicas, 2);
  f.informers.informerFor<DeployObj>(Deployments).update(after);
  await f.reconcile('default/web');
  assert.deepEqual((await rsList(f)).map((rs) => rs.spec?.template?.spec?.containers[0]?.image), ['v2']);
});

test('deployment: Recreate scales old ReplicaSets to zero before creating the new one', async () => {
  const f = setup();
  const d = f.seed(deployment({ strategy: 'Recreate', image: 'v2' }));
  f.seed(replicaSet(d, 'v1', 3, { revision: 1 }));
  await f.reconcile('default/web');
  const list = await rsList(f);
  assert.equal(list.length, 1);
  assert.equal(list[0]?.spec?.replicas, 0);
});

test('deployment: paused Deployments do not roll out and say so', async () => {
  const f = setup();
  const d = f.seed(deployment({ paused: true, image: 'v2' }));
  f.seed(replicaSet(d, 'v1', 3, { revision: 1 }));
  await f.reconcile('default/web');
  assert.equal((await rsList(f)).length, 1);
  const p = (await getD(f)).status?.conditions?.find((c) => c.type === 'Progressing');
  assert.deepEqual([p?.status, p?.reason, p?.message], ['Unknown', 'DeploymentPaused', 'Deployment is paused']);
});

test('deployment: scaling resizes the active ReplicaSet', async () => {
  const f = setup();
  const d = f.seed(deployment({ replicas: 5 }));
  f.seed(replicaSet(d, 'v1', 3, { revision: 1, desired: 3 }));
  await f.reconcile('default/web');
  const [rs] = await rsList(f);
  assert.equal(rs?.spec?.replicas, 5);
  assert.equal(rs?.metadata.annotations?.['deployment.kubernetes.io/desired-replicas'], '5');
});

test('deployment: rollback reuses the old ReplicaSet with a new revision and records the old one', async () => {
  const f = setup();
  const d = f.seed(deployment({ replicas: 2, image: 'v1' }));
  f.seed(replicaSet(d, 'v1', 0, { revision: 1, desired: 2 }));
  f.seed(replicaSet(d, 'v2', 2, { revision: 2, desired: 2, created: 10 }));
  await f.reconcile('default/web');
  const v1 = (await rsList(f)).find((rs) => rs.spec?.template?.spec?.containers[0]?.image === 'v1')!;
  assert.equal(v1.metadata.annotations?.['deployment.kubernetes.io/revision'], '3');
  assert.equal(v1.metadata.annotations?.['deployment.kubernetes.io/revision-history'], '1');
  assert.equal(v1.spec?.replicas, 1, 'surges by one');
  assert.equal((await getD(f)).metadata.annotations?.['deployment.kubernetes.io/revision'], '3');
});

test('deployment: orphan ReplicaSets that match are adopted', async () => {
  const f = setup();
  const d = f.seed(deployment({ replicas: 1 }));
  const orphan = replicaSet(d, 'v1', 1, { revision: 1, desired: 1 });
  delete orphan.metadata.ownerReferences;
  f.seed(orphan);
  await f.reconcile('default/web');
  const [rs] = await rsList(f);
  assert.equal(rs?.metadata.ownerReferences?.[0]?.uid, d.metadata.uid);
  assert.equal((await rsList(f)).length, 1);
});

test('deployment: a ReplicaSet of ours left by a lost create is reused, not duplicated', async () => {
  const f = setup();
  const d = f.seed(deployment({ replicas: 1 }));
  // in the server but not yet in the informer cache
  f.client.seed(replicaSet(d, 'v1', 1, { revision: 1, desired: 1 }) as ReplicaSet);
  await f.reconcile('default/web');
  assert.equal((await rsList(f)).length, 1);
});

test('deployment: no progress within progressDeadlineSeconds sets Progressing=False ProgressDeadlineExceeded', async () => {
  const f = setup();
  const stale = new Date(f.clock.now() - 700_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const d = f.seed(deployment({ replicas: 2, image: 'v1', status: {
    observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 2,
    conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'x', lastUpdateTime: stale, lastTransitionTime: stale }],
  } }));
  f.seed(replicaSet(d, 'v1', 2, { available: 0, revision: 1, desired: 2 }));
  await f.reconcile('default/web');
  const p = (await getD(f)).status?.conditions?.find((c) => c.type === 'Progressing');
  assert.deepEqual([p?.status, p?.reason], ['False', 'ProgressDeadlineExceeded']);
  assert.match(p?.message ?? '', /^ReplicaSet "web-\w+" has timed out progressing\.$/);
});

test('deployment: a name collision with a foreign ReplicaSet bumps collisionCount and picks a new hash', async () => {
  const f = setup();
  const d = f.seed(deployment({ replicas: 1 }));
  const hash = computeHash(d.spec!.template);
  // not in the informer cache (so not a candidate), but holding the name on the server
  f.client.seed({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `web-${hash}`, namespace: 'default', labels: { other: 'x' } },
    spec: { replicas: 0, selector: { matchLabels: { other: 'x' } }, template: { metadata: { labels: { other: 'x' } }, spec: { containers: [{ name: 'c', image: 'zzz' }] } } } } as ReplicaSet);
  await assert.rejects(f.reconcile('default/web'), /hash collision/);
  const bumped = await getD(f);
  assert.equal(bumped.status?.collisionCount, 1);
  f.informers.informerFor<DeployObj>(Deployments).update(bumped);
  await f.reconcile('default/web');
  const mine = (await rsList(f)).find((rs) => rs.metadata.ownerReferences?.[0]?.uid === d.metadata.uid);
  assert.equal(mine?.metadata.name, `web-${computeHash(d.spec!.template, 1)}`);
});
