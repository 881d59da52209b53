import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ApiError, Pods, type Node, type Pod } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import type { Obj } from '../../util/meta.js';
import { failedStatusPatch, planOrphans, planPodGC, PodGCController, QUARANTINE_MS, OUT_OF_SERVICE_TAINT, type PodGCOptions } from './podgc.js';
import { FORCE_DELETE_POD_ERRORS_TOTAL, FORCE_DELETE_PODS_TOTAL } from './metrics.js';

type P = Obj<Pod>;
type N = Obj<Node>;
const pod = (name: string, o: { node?: string; phase?: string; deleting?: boolean; created?: string; namespace?: string } = {}): P => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: o.namespace ?? 'default', uid: `uid-${name}`, ...(o.created ? { creationTimestamp: o.created } : {}), ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 } : {}) },
  spec: { ...(o.node ? { nodeName: o.node } : {}), containers: [{ name: 'c', image: 'i' }] },
  status: { phase: (o.phase ?? 'Running') as NonNullable<Pod['status']>['phase'] },
} as P);
const node = (name: string, o: { ready?: boolean; outOfService?: boolean } = {}): N => ({
  apiVersion: 'v1', kind: 'Node', metadata: { name },
  spec: o.outOfService ? { taints: [{ key: OUT_OF_SERVICE_TAINT, effect: 'NoExecute' }] } : {},
  status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
} as N);

test('planPodGC: each rule as upstream gc() applies it', () => {
  const cases: { name: string; pods: P[]; nodes: N[]; threshold: number; delete: string[]; missing: string[] }[] = [
    { name: 'a healthy cluster: nothing', pods: [pod('a', { node: 'n1' })], nodes: [node('n1')], threshold: 10, delete: [], missing: [] },
    {
      name: 'terminated beyond the threshold: the oldest go',
      pods: [pod('new', { node: 'n1', phase: 'Succeeded', created: '2026-01-03T00:00:00Z' }), pod('old', { node: 'n1', phase: 'Failed', created: '2026-01-01T00:00:00Z' }),
        pod('mid', { node: 'n1', phase: 'Succeeded', created: '2026-01-02T00:00:00Z' }), pod('run', { node: 'n1' })],
      nodes: [node('n1')], threshold: 1, delete: ['default/old:terminated', 'default/mid:terminated'], missing: [],
    },
    { name: 'threshold 0 keeps every terminated pod', pods: [pod('a', { node: 'n1', phase: 'Failed' })], nodes: [node('n1')], threshold: 0, delete: [], missing: [] },
    { name: 'a pod on an unknown node: the node is quarantined, not the pod deleted', pods: [pod('a', { node: 'gone' }), pod('b', { node: 'gone' })], nodes: [], threshold: 10, delete: [], missing: ['gone'] },
    { name: 'unscheduled and being deleted', pods: [pod('a', { deleting: true }), pod('b')], nodes: [], threshold: 10, delete: ['default/a:unscheduled'], missing: [] },
    {
      name: 'terminating on a NotReady out-of-service node; not on a Ready one or an untainted one',
      pods: [pod('a', { node: 'oos', deleting: true }), pod('b', { node: 'oos' }), pod('c', { node: 'oos-ready', deleting: true }), pod('d', { node: 'down', deleting: true })],
      nodes: [node('oos', { ready: false, outOfService: true }), node('oos-ready', { outOfService: true }), node('down', { ready: false })], threshold: 10,
      delete: ['default/a:out-of-service'], missing: [],
    },
  ];
  for (const c of cases) {
    const plan = planPodGC(c.pods, c.nodes, c.threshold);
    assert.deepEqual(plan.delete.map((d) => `${d.key}:${d.reason}`), c.delete, c.name);
    assert.deepEqual(plan.missingNodes, c.missing, c.name);
  }
  assert.deepEqual(planOrphans([pod('x', { node: 'gone' }), pod('y', { node: 'n1' }), pod('a', { node: 'gone' })], 'gone'), ['default/a', 'default/x']);
});

test('failedStatusPatch: Failed with the condition; nothing for a pod already terminal', () => {
  const cond = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' };
  assert.deepEqual(failedStatusPatch(pod('a'), cond, '2026-01-01T00:00:00.000Z'), { status: { phase: 'Failed', conditions: [{ ...cond, lastTransitionTime: '2026-01-01T00:00:00.000Z' }] } });
  assert.deepEqual(failedStatusPatch(pod('a'), undefined, 'x'), { status: { phase: 'Failed' } });
  assert.equal(failedStatusPatch(pod('a', { phase: 'Succeeded' }), cond, 'x'), undefined);
});

test('pod GC: pods of a deleted node are marked Failed (DeletionByPodGC) and force-deleted after the quarantine', async () => {
  const f = newControllerFixture();
  const c = f.build((ctx) => new PodGCController(ctx));
  f.seed(pod('orphan', { node: 'gone' }), pod('kept', { node: 'n1' }));
  f.seed(node('n1'));
  await c.gc(AbortSignal.timeout(5_000));
  assert.deepEqual(f.actions({ writesOnly: true }), [], 'nothing before the quarantine');
  assert.equal(c.queue.len(), 0);
  f.clock.step(QUARANTINE_MS);
  assert.equal(c.queue.len(), 1);
  await f.reconcile('gone');
  assert.deepEqual(f.actions({ writesOnly: true }), ['patch pods/status', 'delete pods']);
  const del = f.client.actions().find((a) => a.verb === 'delete');
  assert.equal(del?.deleteOptions?.gracePeriodSeconds, 0);
  assert.equal(del?.deleteOptions?.preconditions?.uid, 'uid-orphan');
  const patch = f.client.actions().find((a) => a.verb === 'patch')?.object as { status: { phase: string; conditions: { reason: string }[] } };
  assert.equal(patch.status.phase, 'Failed');
  assert.equal(patch.status.conditions[0]?.reason, 'DeletionByPodGC');
  assert.ok(await f.client.resource(Pods, 'default').get('kept'));
});

test('pod GC: a node that is back (or only missing from the cache) keeps its pods', async () => {
  const f = newControllerFixture();
  const c = f.build((ctx) => new PodGCController(ctx));
  f.seed(pod('p', { node: 'n2' }));
  // In the apiserver but not (yet) in the informer: the live GET saves the pods.
  f.client.seed(node('n2'));
  await c.gc(AbortSignal.timeout(5_000));
  f.clock.step(QUARANTINE_MS);
  await f.reconcile('n2');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
});

test('pod GC metrics: every forced deletion counts in pod_gc_collector_force_delete_pods_total{namespace,reason}, a failed one also in the errors', async () => {
  const cases: { name: string; options?: PodGCOptions; pods: P[]; nodes?: N[]; orphanedNode?: string; failDelete?: boolean; total: Record<string, number>; errors: Record<string, number> }[] = [
    { name: 'terminated beyond the threshold', options: { terminatedPodThreshold: 1 },
      pods: [pod('old', { node: 'n1', phase: 'Succeeded', created: '2026-01-01T00:00:00Z' }), pod('new', { node: 'n1', phase: 'Failed', created: '2026-01-02T00:00:00Z' })],
      nodes: [node('n1')], total: { 'default/terminated': 1 }, errors: {} },
    { name: 'orphaned, after the quarantine', pods: [pod('a', { node: 'gone' }), pod('b', { node: 'gone', namespace: 'kube-system' })], orphanedNode: 'gone',
      total: { 'default/orphaned': 1, 'kube-system/orphaned': 1 }, errors: {} },
    { name: 'unscheduled and terminating', pods: [pod('a', { deleting: true })], total: { 'default/unscheduled': 1 }, errors: {} },
    { name: 'terminating on a NotReady out-of-service node', pods: [pod('a', { node: 'oos', deleting: true })], nodes: [node('oos', { ready: false, outOfService: true })],
      total: { 'default/out-of-service': 1 }, errors: {} },
    { name: 'a failed deletion counts as an attempt and an error', pods: [pod('a', { deleting: true })], failDelete: true,
      total: { 'default/unscheduled': 1 }, errors: { 'default/unscheduled': 1 } },
    { name: 'nothing to collect: no series', pods: [pod('a', { node: 'n1' })], nodes: [node('n1')], total: {}, errors: {} },
  ];
  for (const c of cases) {
    const registry = new Registry();
    const f = newControllerFixture();
    const gc = f.build((ctx) => new PodGCController({ ...ctx, registry }, c.options));
    for (const o of [...c.pods, ...(c.nodes ?? [])]) f.seed(o);
    if (c.failDelete) f.client.prependReactor('delete', 'pods', () => ({ handled: true, error: new ApiError('InternalError', 'etcd down', { code: 500 }) }));
    await gc.gc(AbortSignal.timeout(5_000));
    if (c.orphanedNode) { f.clock.step(QUARANTINE_MS); await f.reconcile(c.orphanedNode); }
    const series = async (name: string) => Object.fromEntries((await registry.getSingleMetric(name)!.get()).values.map((v) => [`${v.labels['namespace']}/${v.labels['reason']}`, v.value]));
    assert.deepEqual(await series(FORCE_DELETE_PODS_TOTAL), c.total, c.name);
    assert.deepEqual(await series(FORCE_DELETE_POD_ERRORS_TOTAL), c.errors, c.name);
  }
});

test('pod GC metrics are served in the exposition format, one family per registry however many controllers', async () => {
  const registry = new Registry();
  const f = newControllerFixture();
  const gc = f.build((ctx) => new PodGCController({ ...ctx, registry }));
  f.build((ctx) => new PodGCController({ ...ctx, registry }));        // a second instance shares the families
  f.seed(pod('a', { deleting: true }));
  await gc.gc(AbortSignal.timeout(5_000));
  const text = await registry.metrics();
  assert.match(text, /^# TYPE pod_gc_collector_force_delete_pods_total counter$/m);
  assert.match(text, /^pod_gc_collector_force_delete_pods_total\{namespace="default",reason="unscheduled"\} 1$/m);
  assert.match(text, /^# TYPE pod_gc_collector_force_delete_pod_errors_total counter$/m);
});
