import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Leases, Nodes, Pods, type KubeObject, type Lease, type Node, type Pod, type ResourceDescriptor } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import type { Obj } from '../../util/meta.js';
import { NodeLifecycleController } from './nodelifecycle.js';

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const node = (name: string, now: number, zone = 'z1'): Node => ({
  apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'topology.kubernetes.io/zone': zone } }, spec: {},
  status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: iso(now), lastTransitionTime: iso(now) }] },
});
const lease = (name: string, now: number): Lease => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'kube-node-lease' }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date(now).toISOString() } });
const pod = (name: string, nodeName: string, tolerationSeconds?: number): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: { nodeName, containers: [{ name: 'c' }], ...(tolerationSeconds !== undefined ? { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds }] } : {}) },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

/** Copies the fake server's objects into the fake informers (what the watch would do). */
async function syncCache(f: ControllerFixture, r: ResourceDescriptor, namespace?: string): Promise<void> {
  const inf = f.informers.informerFor(r, namespace ? { namespace } : {});
  const items = (await f.client.resource<KubeObject>(r, namespace).list()).items;
  for (const o of items) inf.update(o);
  for (const o of inf.lister.list()) if (!items.some((x) => x.metadata.uid === o.metadata.uid)) inf.delete(o);
}

function setup(nodes: string[], zoneOf: (n: string) => string = () => 'z1') {
  const f = newControllerFixture();
  const c = f.build((ctx) => new NodeLifecycleController(ctx, { nodeMonitorGracePeriodMs: 40_000, defaultTolerationSeconds: 300 }));
  const t0 = f.clock.now();
  for (const n of nodes) { f.seed(node(n, t0, zoneOf(n))); f.seed(lease(n, t0)); }
  return { f, c, t0 };
}
const sig = () => AbortSignal.timeout(5000);
async function getNode(f: ControllerFixture, name: string) { return f.client.resource<Obj<Node>>(Nodes).get(name); }

test('nodelifecycle: a node whose lease stops is marked Unknown, tainted, and its pods evicted after their toleration', async () => {
  const { f, c } = setup(['a', 'b']);
  f.seed(pod('default-tol', 'b'), pod('short-tol', 'b', 5), pod('on-a', 'a'));
  await c.monitorNodeHealth(sig());
  f.clock.step(30_000);
  // a keeps renewing its lease; b does not
  await f.client.resource<Obj<Lease>>(Leases, 'kube-node-lease').update({ ...(lease('a', f.clock.now()) as Obj<Lease>), metadata: { ...(await f.client.resource<Obj<Lease>>(Leases, 'kube-node-lease').get('a')).metadata } });
  await syncCache(f, Leases, 'kube-node-lease');
  await c.monitorNodeHealth(sig());
  f.clock.step(15_000);
  await c.monitorNodeHealth(sig());
  const b = await getNode(f, 'b');
  const ready = b.status?.conditions?.find((x) => x.type === 'Ready');
  assert.deepEqual([ready?.status, ready?.reason, ready?.message], ['Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.']);
  assert.equal((await getNode(f, 'a')).status?.conditions?.[0]?.status, 'True');
  const podB = await f.client.resource<Obj<Pod>>(Pods, 'default').get('default-tol');
  assert.equal(podB.status?.conditions?.find((x) => x.type === 'Ready')?.status, 'False', 'pods on the node marked not ready');

  await syncCache(f, Nodes); await syncCache(f, Pods);
  await c.monitorNodeHealth(sig()); // recompute zone state from the Unknown node
  const first = await f.reconcile('b');
  const tainted = await getNode(f, 'b');
  assert.deepEqual(tainted.spec?.taints?.map((t) => `${t.key}:${t.effect}`), ['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute']);
  assert.deepEqual(f.actions({ writesOnly: true }).filter((a) => a.startsWith('delete')), []);
  assert.equal(first.result && first.result.requeueAfterMs, 5000);

  await syncCache(f, Nodes);
  f.clock.step(5000);
  await f.reconcile('b');
  assert.deepEqual(f.client.actions().filter((a) => a.verb === 'delete').map((a) => a.name), ['short-tol']);
  f.clock.step(300_000);
  await syncCache(f, Pods);
  await f.reconcile('b');
  assert.deepEqual(f.client.actions().filter((a) => a.verb === 'delete').map((a) => a.name), ['short-tol', 'default-tol']);
  assert.ok(f.recorder.events.some((e) => e.startsWith('Normal TaintManagerEviction Marking for deletion Pod default/short-tol')));
});

test('nodelifecycle: no NoExecute taints when most of a zone is down at once, or every node is', async () => {
  for (const tc of [
    { name: 'partial disruption (3 of 4 down)', nodes: ['a', 'b', 'c', 'd'], alive: ['a'], want: 'PartialDisruption' },
    { name: 'all nodes down', nodes: ['a', 'b'], alive: [] as string[], want: 'FullDisruption' },
  ]) {
    const { f, c } = setup(tc.nodes);
    await c.monitorNodeHealth(sig());
    f.clock.step(45_000);
    for (const n of tc.alive) {
      const cur = await f.client.resource<Obj<Lease>>(Leases, 'kube-node-lease').get(n);
      await f.client.resource<Obj<Lease>>(Leases, 'kube-node-lease').update({ ...cur, spec: { ...cur.spec, renewTime: new Date(f.clock.now()).toISOString() } });
    }
    await syncCache(f, Leases, 'kube-node-lease');
    await c.monitorNodeHealth(sig());
    await syncCache(f, Nodes);
    await c.monitorNodeHealth(sig());
    assert.equal(c.zones().get(':\x00:z1')?.state, tc.want, tc.name);
    for (const n of tc.nodes) await f.reconcile(n);
    const noExec = (await f.client.resource<Obj<Node>>(Nodes).list()).items.flatMap((n) => n.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
    assert.deepEqual(noExec, [], tc.name);
  }
});

test('nodelifecycle: taints go away when the node is Ready again', async () => {
  const { f } = setup(['a']);
  const cur = await getNode(f, 'a');
  await f.client.resource<Obj<Node>>(Nodes).update({ ...cur, spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }, { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }, { key: 'dedicated', value: 'x', effect: 'NoSchedule' }] } });
  await syncCache(f, Nodes);
  await f.reconcile('a');
  assert.deepEqual((await getNode(f, 'a')).spec?.taints, [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }]);
});

test('nodelifecycle: 2 of 3 nodes down is a Normal zone: both tainted, paced by the eviction rate (0.1 nodes/s)', async () => {
  const { f, c } = setup(['a', 'b', 'c']);
  await c.monitorNodeHealth(sig());
  f.clock.step(45_000);
  const cur = await f.client.resource<Obj<Lease>>(Leases, 'kube-node-lease').get('a');
  await f.client.resource<Obj<Lease>>(Leases, 'kube-node-lease').update({ ...cur, spec: { ...cur.spec, renewTime: new Date(f.clock.now()).toISOString() } });
  await syncCache(f, Leases, 'kube-node-lease');
  await c.monitorNodeHealth(sig());
  await syncCache(f, Nodes);
  await c.monitorNodeHealth(sig());
  assert.equal(c.zones().get(':\x00:z1')?.state, 'Normal', 'PartialDisruption needs more than 2 not-ready nodes');
  const noExec = async (n: string) => ((await getNode(f, n)).spec?.taints ?? []).some((t) => t.effect === 'NoExecute');
  await f.reconcile('b');
  const second = await f.reconcile('c');
  assert.deepEqual([await noExec('a'), await noExec('b'), await noExec('c')], [false, true, false]);
  assert.equal(second.result && second.result.requeueAfterMs, 10_000, 'the next taint in this zone after 1/evictionQPS');
  f.clock.step(10_000);
  await syncCache(f, Nodes);
  await f.reconcile('c');
  assert.equal(await noExec('c'), true);
});

test('nodelifecycle: entering full disruption lifts NoExecute taints already added; leaving it taints the nodes still down again, its pacing started afresh', async () => {
  const { f, c, t0 } = setup(['a', 'b']);
  await c.monitorNodeHealth(sig());
  f.clock.step(45_000);
  const renew = async (n: string) => {
    const cur = await f.client.resource<Obj<Lease>>(Leases, 'kube-node-lease').get(n);
    await f.client.resource<Obj<Lease>>(Leases, 'kube-node-lease').update({ ...cur, spec: { ...cur.spec, renewTime: new Date(f.clock.now()).toISOString() } });
    await syncCache(f, Leases, 'kube-node-lease');
  };
  await renew('a');
  await c.monitorNodeHealth(sig());
  await syncCache(f, Nodes);
  await c.monitorNodeHealth(sig());
  await f.reconcile('b');
  assert.ok((await getNode(f, 'b')).spec?.taints?.some((t) => t.effect === 'NoExecute'), 'b alone down: tainted');
  // Now a stops too: every node down.
  f.clock.step(45_000);
  await c.monitorNodeHealth(sig());
  await syncCache(f, Nodes);
  await c.monitorNodeHealth(sig());
  assert.equal(c.zones().get(':\x00:z1')?.state, 'FullDisruption');
  await syncCache(f, Nodes);
  await f.reconcile('a'); await f.reconcile('b');
  assert.deepEqual((await f.client.resource<Obj<Node>>(Nodes).list()).items.flatMap((n) => n.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute'), [], 'no NoExecute taint in full disruption');
  // a's kubelet posts Ready again: out of full disruption, b (still down) is tainted again at once.
  const a = await getNode(f, 'a');
  const at = iso(f.clock.now());
  await f.client.resource<Obj<Node>>(Nodes).updateStatus({ ...a, status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: at, lastTransitionTime: at }] } });
  await renew('a');
  await syncCache(f, Nodes);
  await c.monitorNodeHealth(sig());
  assert.equal(c.zones().get(':\x00:z1')?.state, 'Normal');
  await syncCache(f, Nodes);
  await f.reconcile('b');
  assert.ok((await getNode(f, 'b')).spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute'), 'b tainted again');
  void t0;
});
