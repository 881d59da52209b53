import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerRevisions, PersistentVolumeClaims, Pods, StatefulSets, type Pod, type ResourceDescriptor, type StatefulSet } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import { FeatureGate } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { objectKey } from '@mk8s/client';
import { StatefulSetController } from './statefulset.js';
import type { PodObj, STSObj } from './util.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function statefulSet(name: string, replicas: number, o: { parallel?: boolean; partition?: number; image?: string; claims?: boolean; onDelete?: boolean; whenDeleted?: string; whenScaled?: string } = {}): StatefulSet {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: 'default', generation: 1 },
    spec: {
      replicas, serviceName: name, podManagementPolicy: o.parallel ? 'Parallel' : 'OrderedReady', revisionHistoryLimit: 10,
      selector: { matchLabels: { app: name } },
      updateStrategy: o.onDelete ? { type: 'OnDelete' } : { type: 'RollingUpdate', rollingUpdate: { partition: o.partition ?? 0 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: o.whenDeleted ?? 'Retain', whenScaled: o.whenScaled ?? 'Retain' },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: o.image ?? 'busybox' }] } },
      ...(o.claims ? { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] } : {}),
    },
  };
}

async function syncCaches(f: ControllerFixture, resources: ResourceDescriptor[] = [Pods, StatefulSets, ControllerRevisions, PersistentVolumeClaims]): Promise<void> {
  for (const r of resources) {
    const inf = f.informers.informerFor(r);
    const items = (await f.client.resource(r).list()).items;
    const keys = new Set(items.map(objectKey));
    for (const o of inf.lister.list()) if (!keys.has(objectKey(o))) inf.delete(o);
    for (const o of items) inf.add(o);
  }
  f.client.clearActions();
}
/** Kubelet of the test: the named pods (all when none named) become Running and Ready. */
async function ready(f: ControllerFixture, ...names: string[]): Promise<void> {
  const pods = f.client.resource<PodObj>(Pods, 'default');
  for (const p of (await pods.list()).items) {
    if (names.length && !names.includes(p.metadata.name)) continue;
    if (p.status?.phase === 'Running') continue;
    await pods.updateStatus({ ...p, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(T0).toISOString() }] } });
  }
  await syncCaches(f);
}
function setup(featureGates?: FeatureGate): { f: ControllerFixture; c: StatefulSetController } {
  const f = newControllerFixture({ clock: new FakeClock(T0 + 3600_000) });
  const c = f.build((ctx) => new StatefulSetController(featureGates ? { ...ctx, featureGates } : ctx));
  return { f, c };
}
const podNames = async (f: ControllerFixture) => (await f.client.resource<PodObj>(Pods, 'default').list()).items.map((p) => p.metadata.name).sort();
const created = (f: ControllerFixture) => f.client.actions().filter((a) => a.verb === 'create' && a.resource === 'pods').map((a) => (a.object as Pod).metadata!.name);
const deleted = (f: ControllerFixture) => f.client.actions().filter((a) => a.verb === 'delete' && a.resource === 'pods').map((a) => a.name ?? '');
const stsStatus = async (f: ControllerFixture) => (await f.client.resource<STSObj>(StatefulSets, 'default').get('web')).status!;

describe('statefulset controller', () => {
  test('OrderedReady creates web-0, waits for it to be Ready, then web-1; identity, labels and claims', async () => {
    const { f, c } = setup();
    f.seed(statefulSet('web', 2, { claims: true }) as STSObj);
    await f.reconcile('default/web');
    assert.deepEqual(created(f), ['web-0']);
    const pod = f.client.actions().find((a) => a.verb === 'create' && a.resource === 'pods')!.object as Pod;
    assert.equal(pod.spec?.hostname, 'web-0');
    assert.equal(pod.spec?.subdomain, 'web');
    assert.equal(pod.metadata?.labels?.['statefulset.kubernetes.io/pod-name'], 'web-0');
    assert.equal(pod.metadata?.labels?.['apps.kubernetes.io/pod-index'], '0');
    assert.match(pod.metadata?.labels?.['controller-revision-hash'] ?? '', /^web-/);
    assert.deepEqual(pod.spec?.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } }]);
    assert.equal((await f.client.resource(PersistentVolumeClaims, 'default').get('data-web-0')).metadata.name, 'data-web-0');
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(created(f), [], 'web-1 waits for web-0');
    assert.match(c.lastPlan.get('default/web')?.blockedBy?.reason ?? '', /web-0 is not Running and Ready/);
    await ready(f, 'web-0');
    await f.reconcile('default/web');
    assert.deepEqual(created(f), ['web-1']);
    await syncCaches(f);
    await ready(f);
    await f.reconcile('default/web');
    const st = await stsStatus(f);
    assert.equal(st.readyReplicas, 2);
    assert.equal(st.currentRevision, st.updateRevision);
  });

  test('OrderedReady scale-down removes the highest ordinal first, one at a time', async () => {
    const { f } = setup();
    f.seed(statefulSet('web', 3) as STSObj);
    for (let i = 0; i < 3; i++) { await f.reconcile('default/web'); await syncCaches(f); await ready(f); }
    assert.deepEqual(await podNames(f), ['web-0', 'web-1', 'web-2']);
    const sts = f.client.resource<STSObj>(StatefulSets, 'default');
    await sts.update({ ...(await sts.get('web')), spec: { ...(await sts.get('web')).spec!, replicas: 1 } });
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(deleted(f), ['web-2']);
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(deleted(f), ['web-1']);
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(deleted(f), []);
    assert.deepEqual(await podNames(f), ['web-0']);
  });

  test('whenDeleted Delete: each claim is created controlled by the set (the garbage collector deletes it with the set)', async () => {
    const { f } = setup();
    const set = f.seed({ ...statefulSet('web', 1, { claims: true, whenDeleted: 'Delete' }), metadata: { name: 'web', namespace: 'default', uid: 'set-uid', generation: 1 } } as STSObj);
    await f.reconcile('default/web');
    const c = await f.client.resource(PersistentVolumeClaims, 'default').get('data-web-0');
    assert.deepEqual(c.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(c.metadata.labels, { app: 'web' });
  });

  test('whenScaled Delete: a pod scaled away first gets to own its claim, then is deleted (the claim goes with it); claims in range stay', async () => {
    const { f } = setup();
    f.seed(statefulSet('web', 2, { claims: true, whenScaled: 'Delete' }) as STSObj);
    for (let i = 0; i < 2; i++) { await f.reconcile('default/web'); await syncCaches(f); await ready(f); }
    const sts = f.client.resource<STSObj>(StatefulSets, 'default');
    await sts.update({ ...(await sts.get('web')), spec: { ...(await sts.get('web')).spec!, replicas: 1 } });
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(f.actions({ writesOnly: true }).filter((a) => !a.includes('events') && !a.includes('status')), ['update persistentvolumeclaims', 'delete pods']);
    const pvcs = f.client.resource(PersistentVolumeClaims, 'default');
    const web1 = (await f.client.resource<PodObj>(Pods, 'default').list()).items.find((p) => p.metadata.name === 'web-1');
    assert.equal(web1, undefined);
    assert.deepEqual((await pvcs.get('data-web-1')).metadata.ownerReferences?.map((r) => `${r.kind}/${r.name} controller=${r.controller}`), ['Pod/web-1 controller=true']);
    assert.equal((await pvcs.get('data-web-0')).metadata.ownerReferences, undefined);
  });

  test('a pod waits while its claim is stale (owned by the pod scaled away) or being deleted, and comes once the claim is gone', async () => {
    const { f } = setup();
    f.seed(statefulSet('web', 1, { claims: true, whenScaled: 'Delete' }) as STSObj);
    const stale = f.seed({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-web-0', namespace: 'default', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-0', uid: 'old-pod', controller: true }] }, spec: {} } as never);
    await f.reconcile('default/web');
    assert.deepEqual(created(f), [], 'not on a claim about to be collected');
    const pvcs = f.client.resource(PersistentVolumeClaims, 'default');
    await pvcs.update({ ...(await pvcs.get('data-web-0')), metadata: { ...(await pvcs.get('data-web-0')).metadata, ownerReferences: [], finalizers: ['kubernetes.io/pvc-protection'] } } as never);
    await pvcs.delete('data-web-0');
    await syncCaches(f);
    await assert.rejects(f.reconcile('default/web'), /pvc data-web-0 is being deleted/);
    assert.deepEqual(created(f), [], 'not on a claim being deleted');
    const claims = f.informers.informerFor(PersistentVolumeClaims) as unknown as { delete(o: unknown): void };
    await pvcs.update({ ...(await pvcs.get('data-web-0')), metadata: { ...(await pvcs.get('data-web-0')).metadata, finalizers: [] } } as never);
    claims.delete(stale);
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(created(f), ['web-0']);
    assert.equal((await pvcs.get('data-web-0')).metadata.ownerReferences, undefined, 'a new claim, no owner in range');
  });

  test('Parallel creates every ordinal at once, and not again before the watch shows them', async () => {
    const { f } = setup();
    f.seed(statefulSet('web', 3, { parallel: true }) as STSObj);
    await f.reconcile('default/web');
    assert.deepEqual(created(f).sort(), ['web-0', 'web-1', 'web-2']);
    f.client.clearActions();
    await f.reconcile('default/web');
    assert.deepEqual(created(f), []);
  });

  test('RollingUpdate with partition 2 updates only web-2; lowering the partition rolls web-1 then web-0', async () => {
    const { f } = setup();
    f.seed(statefulSet('web', 3, { partition: 2 }) as STSObj);
    for (let i = 0; i < 3; i++) { await f.reconcile('default/web'); await syncCaches(f); await ready(f); }
    await f.reconcile('default/web');
    const before = await stsStatus(f);
    const sts = f.client.resource<STSObj>(StatefulSets, 'default');
    const cur = await sts.get('web');
    const next = structuredClone(cur);
    next.spec!.template.spec!.containers[0]!.image = 'busybox:2';
    await sts.update(next);
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(deleted(f), ['web-2']);
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(created(f), ['web-2']);
    const web2 = f.client.actions().find((a) => a.verb === 'create' && a.resource === 'pods')!.object as Pod;
    assert.equal(web2.spec?.containers[0]?.image, 'busybox:2');
    await syncCaches(f);
    await ready(f);
    await f.reconcile('default/web');
    assert.deepEqual(deleted(f), [], 'ordinals below the partition keep the old revision');
    let st = await stsStatus(f);
    assert.equal(st.currentRevision, before.currentRevision);
    assert.notEqual(st.updateRevision, before.updateRevision);
    assert.equal(st.updatedReplicas, 1);
    assert.equal(st.currentReplicas, 2);
    const lowered = structuredClone(await sts.get('web'));
    lowered.spec!.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 0 } };
    await sts.update(lowered);
    const order: string[] = [];
    for (let i = 0; i < 8; i++) {
      await syncCaches(f);
      await f.reconcile('default/web');
      order.push(...deleted(f));
      await syncCaches(f);
      await ready(f);
    }
    assert.deepEqual(order, ['web-1', 'web-0']);
    await f.reconcile('default/web');
    st = await stsStatus(f);
    assert.equal(st.updatedReplicas, 3);
    assert.equal(st.currentRevision, st.updateRevision);
    assert.equal(st.currentReplicas, 3);
  });

  for (const tc of [
    { gates: undefined, want: ['web-2'] },
    { gates: 'MaxUnavailableStatefulSet=true', want: ['web-1', 'web-2'] },
  ]) {
    test(`rollingUpdate.maxUnavailable 2 with MaxUnavailableStatefulSet ${tc.gates ? 'on' : 'off (the default)'}: ${tc.want.join(', ')} taken down at once`, async () => {
      const { f } = setup(tc.gates ? FeatureGate.with(tc.gates) : undefined);
      const set = statefulSet('web', 3, { parallel: true });
      set.spec!.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 2 } };
      f.seed(set as STSObj);
      await f.reconcile('default/web'); await syncCaches(f); await ready(f);
      await f.reconcile('default/web'); await syncCaches(f);
      const sts = f.client.resource<STSObj>(StatefulSets, 'default');
      const next = structuredClone(await sts.get('web'));
      next.spec!.template.spec!.containers[0]!.image = 'busybox:2';
      await sts.update(next);
      await syncCaches(f);
      await f.reconcile('default/web');
      assert.deepEqual(deleted(f).sort(), tc.want);
    });
  }

  test('OnDelete keeps old pods; a deleted pod comes back at the update revision', async () => {
    const { f } = setup();
    f.seed(statefulSet('web', 1, { onDelete: true }) as STSObj);
    await f.reconcile('default/web'); await syncCaches(f); await ready(f);
    const sts = f.client.resource<STSObj>(StatefulSets, 'default');
    const next = structuredClone(await sts.get('web'));
    next.spec!.template.spec!.containers[0]!.image = 'busybox:2';
    await sts.update(next);
    await syncCaches(f);
    await f.reconcile('default/web');
    assert.deepEqual(deleted(f), []);
    await f.client.resource(Pods, 'default').delete('web-0');
    await syncCaches(f);
    await f.reconcile('default/web');
    const web0 = f.client.actions().find((a) => a.verb === 'create' && a.resource === 'pods')!.object as Pod;
    assert.equal(web0.spec?.containers[0]?.image, 'busybox:2');
  });
});
