import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerRevisions, DaemonSets, Nodes, Pods, type DaemonSet, type Node, type Pod, type ResourceDescriptor, type Taint } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import { objectKey } from '@mk8s/client';
import { DaemonSetController } from './daemonset.js';
import { nodeShouldRunDaemonPod, planRollingUpdate, type DSObj, type NodeObj, type PodObj } from './util.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function daemonSet(name: string, o: { image?: string; nodeSelector?: Record<string, string>; strategy?: DaemonSet['spec'] extends infer S ? S extends { updateStrategy?: infer U } ? U : never : never; tolerations?: NonNullable<Pod['spec']>['tolerations'] } = {}): DaemonSet {
  return {
    apiVersion: 'apps/v1', kind: 'DaemonSet',
    metadata: { name, namespace: 'default', generation: 1, annotations: { 'deprecated.daemonset.template.generation': '1' } },
    spec: {
      selector: { matchLabels: { app: name } },
      updateStrategy: o.strategy ?? { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      revisionHistoryLimit: 10,
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: o.image ?? 'busybox' }], ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}), ...(o.tolerations ? { tolerations: o.tolerations } : {}) } },
    },
  };
}
const node = (name: string, o: { labels?: Record<string, string>; taints?: Taint[] } = {}): Node => ({
  apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } }, spec: o.taints ? { taints: o.taints } : {},
});

/** Copies the fake clientset's state into the informer caches (what the watches would deliver), then forgets the actions. */
async function syncCaches(f: ControllerFixture, resources: ResourceDescriptor[] = [Pods, DaemonSets, ControllerRevisions, Nodes]): Promise<void> {
  for (const r of resources) {
    const inf = f.informers.informerFor(r);
    const items = (await f.client.resource(r).list()).items;
    const keys = new Set(items.map(objectKey));
    for (const o of inf.lister.list()) if (!keys.has(objectKey(o))) inf.delete(o);
    for (const o of items) inf.add(o);
  }
  f.client.clearActions();
}
/** The kubelet and scheduler of the test: every pod bound to its pinned node, Running and Ready. */
async function runPods(f: ControllerFixture, ready = true): Promise<void> {
  const pods = f.client.resource<PodObj>(Pods, 'default');
  for (const p of (await pods.list()).items) {
    if (p.status?.phase === 'Running' && (p.status.conditions?.[0]?.status === 'True') === ready) continue;
    const nodeName = p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields?.[0]?.values?.[0];
    await pods.update({ ...p, spec: { ...p.spec!, ...(nodeName ? { nodeName } : {}) } });
    const cur = await pods.get(p.metadata.name);
    await pods.updateStatus({ ...cur, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date(T0).toISOString() }] } });
  }
  await syncCaches(f);
}
function setup(): { f: ControllerFixture; c: DaemonSetController } {
  const f = newControllerFixture({ clock: new FakeClock(T0 + 3600_000) });
  const c = f.build((ctx) => new DaemonSetController(ctx));
  return { f, c };
}
const podsByNode = async (f: ControllerFixture) => {
  const items = (await f.client.resource<PodObj>(Pods, 'default').list()).items.filter((p) => !p.metadata.deletionTimestamp);
  const nodeOf = (p: PodObj) => p.spec?.nodeName ?? p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields?.[0]?.values?.[0];
  return items.map((p) => `${nodeOf(p)}:${p.metadata.labels?.['controller-revision-hash']}`).sort();
};
const dsStatus = async (f: ControllerFixture) => (await f.client.resource<DSObj>(DaemonSets, 'default').get('agent')).status;

describe('daemonset controller', () => {
  test('creates one pod per node, pinned by a matchFields affinity for the scheduler, with the daemon tolerations', async () => {
    const { f } = setup();
    f.seed(node('n1') as NodeObj, node('n2') as NodeObj, node('n3') as NodeObj);
    f.seed(daemonSet('agent') as DSObj);
    await f.reconcile('default/agent');
    assert.deepEqual(f.actions({ writesOnly: true }), ['create controllerrevisions', 'create pods', 'create pods', 'create pods', 'update daemonsets/status']);
    const pods = f.client.actions().filter((a) => a.verb === 'create' && a.resource === 'pods').map((a) => a.object as Pod);
    const pinned = pods.map((p) => p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).sort();
    assert.deepEqual(pinned[0], [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }]);
    assert.equal(pods[0]!.spec?.nodeName, undefined);
    assert.deepEqual(pods[0]!.spec?.tolerations?.map((t) => `${t.key}:${t.effect}`), [
      'node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule', 'node.kubernetes.io/pid-pressure:NoSchedule', 'node.kubernetes.io/unschedulable:NoSchedule']);
    const rev = f.client.actions().find((a) => a.resource === 'controllerrevisions')!.object as { metadata: { name: string; labels: Record<string, string> }; data: unknown; revision: number };
    assert.equal(pods[0]!.metadata?.labels?.['controller-revision-hash'], rev.metadata.labels['controller-revision-hash']);
    assert.equal(pods[0]!.metadata?.labels?.['pod-template-generation'], '1');
    assert.equal(rev.revision, 1);
    assert.equal((rev.data as { spec: { template: { $patch: string } } }).spec.template.$patch, 'replace');
    assert.match(f.recorder.events[0] ?? '', /^Normal SuccessfulCreate Created pod: agent-/);
    await syncCaches(f);
    await runPods(f);
    await f.reconcile('default/agent');
    assert.deepEqual(await dsStatus(f), { currentNumberScheduled: 3, numberMisscheduled: 0, desiredNumberScheduled: 3, numberReady: 3, observedGeneration: 1, updatedNumberScheduled: 3, numberAvailable: 3 });
  });

  test('a node added gets its pod; a node removed loses it', async () => {
    const { f } = setup();
    f.seed(node('n1') as NodeObj);
    f.seed(daemonSet('agent') as DSObj);
    await f.reconcile('default/agent');
    await runPods(f);
    await f.client.resource(Nodes).create(node('n2') as NodeObj);
    await syncCaches(f);
    await f.reconcile('default/agent');
    assert.deepEqual(f.actions({ writesOnly: true }), ['create pods', 'update daemonsets/status']);
    await runPods(f);
    assert.deepEqual((await podsByNode(f)).map((s) => s.split(':')[0]), ['n1', 'n2']);
    await f.client.resource(Nodes).delete('n1');
    await syncCaches(f);
    await f.reconcile('default/agent');
    assert.deepEqual(f.actions({ writesOnly: true }), ['delete pods', 'update daemonsets/status']);
    assert.deepEqual((await podsByNode(f)).map((s) => s.split(':')[0]), ['n2']);
    assert.equal((await dsStatus(f))?.desiredNumberScheduled, 1);
  });

  test('taints: untolerated NoSchedule keeps new pods off but lets a running one stay; NoExecute removes it; not-ready is tolerated', async () => {
    const { f } = setup();
    f.seed(node('n1') as NodeObj, node('n2', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }) as NodeObj,
      node('n3', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] }) as NodeObj);
    f.seed(daemonSet('agent') as DSObj);
    await f.reconcile('default/agent');
    await runPods(f);
    assert.deepEqual((await podsByNode(f)).map((s) => s.split(':')[0]), ['n1', 'n3']);
    const nodes = f.client.resource<NodeObj>(Nodes);
    const n1 = await nodes.get('n1');
    await nodes.update({ ...n1, spec: { taints: [{ key: 'maintenance', effect: 'NoSchedule' }] } });
    await syncCaches(f);
    await f.reconcile('default/agent');
    assert.deepEqual(f.actions({ writesOnly: true }), ['update daemonsets/status'], 'a running pod stays under a new NoSchedule taint');
    assert.equal((await dsStatus(f))?.numberMisscheduled, 1);
    const n1b = await nodes.get('n1');
    await nodes.update({ ...n1b, spec: { taints: [{ key: 'maintenance', effect: 'NoExecute' }] } });
    await syncCaches(f);
    await f.reconcile('default/agent');
    assert.deepEqual(f.actions({ writesOnly: true }), ['delete pods']);
    assert.deepEqual((await podsByNode(f)).map((s) => s.split(':')[0]), ['n3']);
  });

  test('a nodeSelector limits the nodes; a pod on a node that stops matching is deleted', async () => {
    const { f } = setup();
    f.seed(node('n1', { labels: { disk: 'ssd' } }) as NodeObj, node('n2') as NodeObj);
    f.seed(daemonSet('agent', { nodeSelector: { disk: 'ssd' } }) as DSObj);
    await f.reconcile('default/agent');
    await runPods(f);
    assert.deepEqual((await podsByNode(f)).map((s) => s.split(':')[0]), ['n1']);
    const nodes = f.client.resource<NodeObj>(Nodes);
    const n1 = await nodes.get('n1');
    await nodes.update({ ...n1, metadata: { ...n1.metadata, labels: {} } });
    await syncCaches(f);
    await f.reconcile('default/agent');
    assert.deepEqual(f.actions({ writesOnly: true }), ['delete pods', 'update daemonsets/status']);
  });

  test('RollingUpdate with maxUnavailable 1 replaces one node at a time', async () => {
    const { f } = setup();
    f.seed(node('n1') as NodeObj, node('n2') as NodeObj, node('n3') as NodeObj);
    f.seed(daemonSet('agent') as DSObj);
    await f.reconcile('default/agent');
    await runPods(f);
    const dsClient = f.client.resource<DSObj>(DaemonSets, 'default');
    const cur = await dsClient.get('agent');
    const next = structuredClone(cur);
    next.spec!.template.spec!.containers[0]!.image = 'busybox:2';
    (next.metadata as { generation?: number }).generation = 2;
    next.metadata.annotations = { 'deprecated.daemonset.template.generation': '2' };
    await dsClient.update(next);
    await syncCaches(f);
    await f.reconcile('default/agent');
    assert.deepEqual(f.actions({ writesOnly: true }), ['create controllerrevisions', 'delete pods', 'update daemonsets/status']);
    for (let round = 0; round < 6; round++) {
      await syncCaches(f);
      await f.reconcile('default/agent');
      const live = (await f.client.resource<PodObj>(Pods, 'default').list()).items.length;
      assert.ok(live >= 2, `never more than one node without its pod (round ${round}: ${live} pods)`);
      await runPods(f);
    }
    const hashes = new Set((await podsByNode(f)).map((s) => s.split(':')[1]));
    assert.equal(hashes.size, 1);
    const st = await dsStatus(f);
    assert.equal(st?.updatedNumberScheduled, 3);
    assert.equal(st?.numberAvailable, 3);
    const revs = (await f.client.resource(ControllerRevisions, 'default').list()).items as unknown as { revision: number }[];
    assert.deepEqual(revs.map((r) => r.revision).sort(), [1, 2]);
  });

  test('OnDelete leaves old pods until they are deleted by hand', async () => {
    const { f } = setup();
    f.seed(node('n1') as NodeObj);
    f.seed(daemonSet('agent', { strategy: { type: 'OnDelete' } }) as DSObj);
    await f.reconcile('default/agent');
    await runPods(f);
    const dsClient = f.client.resource<DSObj>(DaemonSets, 'default');
    const next = structuredClone(await dsClient.get('agent'));
    next.spec!.template.spec!.containers[0]!.image = 'busybox:2';
    next.metadata.annotations = { 'deprecated.daemonset.template.generation': '2' };
    await dsClient.update(next);
    await syncCaches(f);
    await f.reconcile('default/agent');
    assert.deepEqual(f.actions({ writesOnly: true }), ['create controllerrevisions', 'update daemonsets/status']);
    assert.equal((await dsStatus(f))?.updatedNumberScheduled, 0);
  });
});

describe('daemonset decisions', () => {
  const ds = daemonSet('agent') as DSObj;
  for (const tc of [
    { name: 'plain node', node: node('n'), want: [true, true] },
    { name: 'untolerated NoSchedule', node: node('n', { taints: [{ key: 'k', effect: 'NoSchedule' }] }), want: [false, true] },
    { name: 'untolerated NoExecute', node: node('n', { taints: [{ key: 'k', effect: 'NoExecute' }] }), want: [false, false] },
    { name: 'PreferNoSchedule is ignored', node: node('n', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] }), want: [true, true] },
    { name: 'unreachable is tolerated', node: node('n', { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] }), want: [true, true] },
    { name: 'unschedulable is tolerated', node: node('n', { taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }), want: [true, true] },
    { name: 'network-unavailable is not (no hostNetwork)', node: node('n', { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] }), want: [false, true] },
  ]) {
    test(`nodeShouldRunDaemonPod: ${tc.name}`, () => {
      const r = nodeShouldRunDaemonPod(tc.node as NodeObj, ds);
      assert.deepEqual([r.shouldRun, r.shouldContinueRunning], tc.want);
    });
  }

  test('surge: a new pod starts next to an available old one; the old one goes once the new one is available', () => {
    const surgeDs = daemonSet('agent', { strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } }) as DSObj;
    const nodes = [node('n1'), node('n2')] as NodeObj[];
    const pod = (name: string, hash: string, ready: boolean): PodObj => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { 'controller-revision-hash': hash }, creationTimestamp: new Date(T0).toISOString() },
      spec: { containers: [] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date(T0).toISOString() }] },
    });
    const now = T0 + 60_000;
    const start = new Map([['n1', [pod('a', 'old', true)]], ['n2', [pod('b', 'old', true)]]]);
    assert.deepEqual(planRollingUpdate(surgeDs, nodes, start, 'new', now), { create: ['n1'], delete: [] });
    const surging = new Map([['n1', [pod('a', 'old', true), pod('a2', 'new', false)]], ['n2', [pod('b', 'old', true)]]]);
    assert.deepEqual(planRollingUpdate(surgeDs, nodes, surging, 'new', now), { create: [], delete: [] });
    const ready = new Map([['n1', [pod('a', 'old', true), pod('a2', 'new', true)]], ['n2', [pod('b', 'old', true)]]]);
    assert.deepEqual(planRollingUpdate(surgeDs, nodes, ready, 'new', now), { create: ['n2'], delete: ['a'] });
  });
});
