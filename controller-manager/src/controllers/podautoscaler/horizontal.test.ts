import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Deployments, HorizontalPodAutoscalers, errors, parseLabelSelector, type Pod } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import { HorizontalController, hpasControllingPods, type HPAObj } from './horizontal.js';
import { FakeMetricsClient, type PodMetricsInfo } from './metrics-client.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const deployment = (replicas: number) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', uid: 'dep' },
  spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: {} }, status: { replicas },
});
const hpa = (spec: Json = {}, status?: Json, name = 'web') => ({
  apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name, namespace: 'default', generation: 1 },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 10,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }], ...spec },
  ...(status ? { status } : {}),
});
/** A Running, Ready pod started long ago with a 100m cpu request. */
const pod = (name: string, o: { ready?: boolean; phase?: string } = {}): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
  status: { phase: o.phase ?? 'Running', startTime: iso(T0 - 3_600_000), conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: iso(T0 - 3_500_000) }] },
});
const cpu = (usage: Record<string, number>, at = T0): PodMetricsInfo => new Map(Object.entries(usage).map(([k, v]) => [k, { value: v, timestampMs: at - 1000, windowMs: 15_000 }]));

function setup(objs: unknown[], usage?: Record<string, number>) {
  const clock = new FakeClock(T0);
  const f = newControllerFixture({ clock });
  const metrics = new FakeMetricsClient();
  if (usage) metrics.resources.set('cpu', cpu(usage));
  const c = f.build((ctx) => new HorizontalController(ctx, { metrics }));
  for (const o of objs) f.seed(o as never);
  // The sync's error (reconcile itself logs it and requeues after the sync period).
  const sync = async (name = 'web') => { f.client.clearActions(); try { await c.sync(`default/${name}`, AbortSignal.timeout(10_000)); return undefined; } catch (err) { return err as Error; } };
  const status = async (name = 'web') => (await f.client.resource<HPAObj>(HorizontalPodAutoscalers, 'default').get(name)).status!;
  const replicas = async () => (await f.client.resource<Json & { metadata: { name: string } }>(Deployments, 'default').get('web')).spec.replicas as number;
  const conds = async (name = 'web') => Object.fromEntries(((await status(name)).conditions ?? []).map((c) => [c.type, `${c.status} ${c.reason}`]));
  // Re-seed the informer's HPA from the fake store (the informer's update after our own status write).
  const refresh = async (name = 'web') => { const h = await f.client.resource(HorizontalPodAutoscalers, 'default').get(name); for (const inf of f.informers.informersOf(HorizontalPodAutoscalers)) inf.seed(h as never); };
  return { f, c, clock, metrics, sync, status, replicas, conds, refresh };
}

describe('horizontal pod autoscaler controller', () => {
  test('scales up: 90 % of request against a 50 % target doubles one pod; SuccessfulRescale names the metric', async () => {
    const t = setup([deployment(1), hpa(), pod('a')], { a: 90 });
    assert.equal(await t.sync(), undefined);
    assert.deepEqual(t.f.actions({ writesOnly: true }), ['update deployments/scale', 'update horizontalpodautoscalers/status']);
    assert.equal(await t.replicas(), 2);
    assert.deepEqual(t.f.recorder.events, ['Normal SuccessfulRescale New size: 2; reason: cpu resource utilization (percentage of request) above target']);
    const st = await t.status();
    assert.equal(st.currentReplicas, 1);
    assert.equal(st.desiredReplicas, 2);
    assert.equal(st.lastScaleTime, iso(T0));
    assert.deepEqual(st.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 90, averageValue: '90m' } } }]);
    assert.deepEqual(await t.conds(), { AbleToScale: 'True SucceededRescale', ScalingActive: 'True ValidMetricFound', ScalingLimited: 'False DesiredWithinRange' });
  });

  test('within the 0.1 tolerance nothing is written but status', async () => {
    const t = setup([deployment(2), hpa(), pod('a'), pod('b')], { a: 52, b: 53 });
    await t.sync();
    assert.deepEqual(t.f.actions({ writesOnly: true }), ['update horizontalpodautoscalers/status']);
    assert.equal(await t.replicas(), 2);
    assert.equal((await t.status()).desiredReplicas, 2);
    assert.deepEqual(t.f.recorder.events, []);
    // A second sync with the same figures writes nothing at all.
    await t.refresh();
    await t.sync();
    assert.deepEqual(t.f.actions({ writesOnly: true }), []);
  });

  test('scale-down is stabilized for 5 minutes without behavior, then happens', async () => {
    const t = setup([deployment(4), hpa(), pod('a'), pod('b'), pod('c'), pod('d')], { a: 50, b: 50, c: 50, d: 50 });
    await t.sync();
    assert.equal(await t.replicas(), 4);
    t.metrics.resources.set('cpu', cpu({ a: 5, b: 5, c: 5, d: 5 }));
    t.clock.step(60_000);
    await t.refresh();
    await t.sync();
    assert.equal(await t.replicas(), 4, 'held by the recent recommendation of 4');
    assert.equal((await t.conds())['AbleToScale'], 'True ScaleDownStabilized');
    t.clock.step(301_000);
    await t.refresh();
    await t.sync();
    assert.equal(await t.replicas(), 1);
    assert.match(t.f.recorder.events.at(-1)!, /^Normal SuccessfulRescale New size: 1; reason: All metrics below target$/);
  });

  test('behavior: a 0 s scale-down window scales at once, limited by a 1 pod / 15 s policy', async () => {
    const behavior = { scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }] },
      scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 1, periodSeconds: 15 }] } };
    const t = setup([deployment(4), hpa({ behavior }), pod('a'), pod('b'), pod('c'), pod('d')], { a: 5, b: 5, c: 5, d: 5 });
    await t.sync();
    assert.equal(await t.replicas(), 3);
    assert.equal((await t.conds())['ScalingLimited'], 'True ScaleDownLimit');
    // Within the same 15 s period the policy allows no further step.
    t.clock.step(5_000);
    await t.refresh();
    await t.sync();
    assert.equal(await t.replicas(), 3);
    t.clock.step(15_000);
    await t.refresh();
    await t.sync();
    assert.equal(await t.replicas(), 2);
  });

  test('limits: maxReplicas caps a scale-up (TooManyReplicas), the 2×/4 rate caps it without behavior (ScaleUpLimit)', async () => {
    const capped = setup([deployment(2), hpa({ maxReplicas: 3 }), pod('a'), pod('b')], { a: 100, b: 100 });
    await capped.sync();
    assert.equal(await capped.replicas(), 3);
    assert.equal((await capped.conds())['ScalingLimited'], 'True TooManyReplicas');
    const rate = setup([deployment(1), hpa({ maxReplicas: 20 }), pod('a')], { a: 1000 });
    await rate.sync();
    assert.equal(await rate.replicas(), 4);
    assert.equal((await rate.conds())['ScalingLimited'], 'True ScaleUpLimit');
  });

  test('a target below minReplicas is raised to it without reading metrics', async () => {
    const t = setup([deployment(1), hpa({ minReplicas: 3 }), pod('a')]);
    await t.sync();
    assert.equal(await t.replicas(), 3);
    assert.equal(t.metrics.calls, 0);
    assert.deepEqual(t.f.recorder.events, ['Normal SuccessfulRescale New size: 3; reason: Current number of replicas below Spec.MinReplicas']);
  });

  test('missing metrics: ScalingActive False FailedGetResourceMetric, Warning events, status still written', async () => {
    const t = setup([deployment(2), hpa(), pod('a'), pod('b')]);
    const err = await t.sync();
    assert.match(err!.message, /^failed to compute desired number of replicas based on listed metrics for Deployment\/default\/web: invalid metrics \(1 invalid out of 1\), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API$/);
    assert.equal(await t.replicas(), 2);
    assert.deepEqual(t.f.recorder.events, [
      'Warning FailedGetResourceMetric failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
      'Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    ]);
    const st = await t.status();
    assert.equal(st.currentReplicas, 2);
    const active = st.conditions!.find((c) => c.type === 'ScalingActive')!;
    assert.equal(active.status, 'False');
    assert.equal(active.reason, 'FailedGetResourceMetric');
    assert.equal(active.message, 'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API');
    assert.deepEqual(st.currentMetrics, [{ type: '' }]);
  });

  test('a Pods metric with no custom metrics API is FailedGetPodsMetric', async () => {
    const t = setup([deployment(2), hpa({ metrics: [{ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }] }), pod('a'), pod('b')]);
    await t.sync();
    assert.equal((await t.conds())['ScalingActive'], 'False FailedGetPodsMetric');
  });

  test('a failed sync is retried at the sync period, not with exponential back-off', async () => {
    const t = setup([deployment(2), hpa(), pod('a'), pod('b')]);
    const { result } = await t.f.reconcile('default/web');
    assert.deepEqual(result, { requeueAfterMs: 15_000 });
  });

  test('a missing target is AbleToScale False FailedGetScale; zero replicas disable scaling', async () => {
    const gone = setup([hpa()]);
    const err = await gone.sync();
    assert.match(err!.message, /failed to query scale subresource for Deployment\/default\/web/);
    assert.equal((await gone.conds())['AbleToScale'], 'False FailedGetScale');
    const zero = setup([deployment(0), hpa()], { a: 90 });
    await zero.sync();
    assert.equal((await zero.conds())['ScalingActive'], 'False ScalingDisabled');
    assert.equal(await zero.replicas(), 0);
  });

  test('the larger of two metrics wins; one failing metric does not block a scale-up', async () => {
    const metrics = [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '32Mi' } } },
    ];
    const t = setup([deployment(2), hpa({ metrics }), pod('a'), pod('b')], { a: 60, b: 60 });
    const err = await t.sync();
    assert.match(err!.message, /invalid metrics \(1 invalid out of 2\)/);
    assert.equal(await t.replicas(), 3);
    t.metrics.resources.set('memory', new Map([['a', { value: 128 * 1024 * 1024 * 1000, timestampMs: T0, windowMs: 15_000 }], ['b', { value: 128 * 1024 * 1024 * 1000, timestampMs: T0, windowMs: 15_000 }]]));
    t.clock.step(15_000);
    await t.refresh();
    assert.equal(await t.sync(), undefined);
    assert.equal(await t.replicas(), 6, 'memory asks for 8 (4× of 2 pods), the 2×/4 rate allows 6');
    assert.match(t.f.recorder.events.at(-1)!, /reason: memory resource above target$/);
  });
  test('the new size is an update of the scale read, with its resourceVersion (not a patch)', async () => {
    const t = setup([deployment(1), hpa(), pod('a')], { a: 90 });
    const rv = (await t.f.client.resource(Deployments, 'default').get('web')).metadata.resourceVersion;
    await t.sync();
    const put = t.f.client.actions().find((a) => a.verb === 'update' && a.subresource === 'scale');
    const scale = put?.object as { kind: string; metadata: { name: string; resourceVersion: string }; spec: { replicas: number } };
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.metadata.name, 'web');
    assert.equal(scale.metadata.resourceVersion, rv);
    assert.equal(scale.spec.replicas, 2);
    assert.equal(t.f.client.actions().filter((a) => a.verb === 'patch').length, 0);
  });

  test('a target changed after its scale was read is a Conflict: FailedRescale, not overwritten; the next sync scales from the new scale', async () => {
    const t = setup([deployment(1), hpa(), pod('a')], { a: 90 });
    let raced = false;
    // Someone scales the target between the HPA's GET and PUT of the scale (kubectl scale, a rollout).
    t.f.client.prependReactor('update', 'deployments/scale', () => {
      if (raced) return undefined;
      raced = true;
      t.f.client.tracker.mutate(Deployments, 'default', 'web', (d) => ({ ...d, spec: { ...(d['spec'] as Json), replicas: 5 } }));
      return undefined;
    });
    const err = await t.sync();
    assert.match(err!.message, /^failed to rescale Deployment\/default\/web: /);
    assert.equal(await t.replicas(), 5, 'the concurrent write stands');
    assert.match(t.f.recorder.events.at(-1)!, /^Warning FailedRescale New size: 2; reason: cpu resource utilization \(percentage of request\) above target; error: .*the object has been modified/);
    assert.equal((await t.conds())['AbleToScale'], 'False FailedUpdateScale');
    // Next sync: 5 replicas at 90 % of a 50 % target, capped at maxReplicas 10.
    t.metrics.resources.set('cpu', cpu({ a: 90, b: 90, c: 90, d: 90, e: 90 }));
    t.f.seed(pod('b'), pod('c'), pod('d'), pod('e'));
    t.clock.step(15_000);
    await t.refresh();
    assert.equal(await t.sync(), undefined);
    assert.equal(await t.replicas(), 9);
    assert.equal((await t.conds())['AbleToScale'], 'True SucceededRescale');
  });

  test('a conflict injected on the scale update is reported as FailedUpdateScale', async () => {
    const t = setup([deployment(1), hpa(), pod('a')], { a: 90 });
    t.f.client.prependReactor('update', 'deployments/scale', () => ({ handled: true, error: errors.conflict('deployments.apps', 'web') }));
    const err = await t.sync();
    assert.match(err!.message, /^failed to rescale Deployment\/default\/web: /);
    assert.equal(await t.replicas(), 1);
    assert.equal((await t.conds())['AbleToScale'], 'False FailedUpdateScale');
  });

  test('AmbiguousSelector: a second HPA over the same pods: ScalingActive False, an Event, no scale written; both until one goes', async () => {
    const t = setup([deployment(2), hpa(), hpa({}, undefined, 'web-2'), pod('a'), pod('b')], { a: 90, b: 90 });
    assert.equal(await t.sync('web'), undefined, 'alone so far: web-2 has not read its target yet');
    assert.equal(await t.replicas(), 4);
    const msg = 'pods by selector app=web are controlled by multiple HPAs: [default/web default/web-2]';
    t.f.recorder.events.length = 0;
    const err = await t.sync('web-2');
    assert.equal(err?.message, `failed to compute desired number of replicas based on listed metrics for Deployment/default/web: ${msg}`);
    assert.deepEqual(t.f.actions({ writesOnly: true }), ['update horizontalpodautoscalers/status'], 'no scale written');
    assert.deepEqual(t.f.recorder.events, [`Warning AmbiguousSelector ${msg}`, `Warning FailedComputeMetricsReplicas ${msg}`]);
    const active = (await t.status('web-2')).conditions!.find((c) => c.type === 'ScalingActive')!;
    assert.deepEqual([active.status, active.reason, active.message], ['False', 'AmbiguousSelector', msg]);
    assert.equal(t.metrics.calls, 1, 'no metrics read for the ambiguous HPA');
    // The first HPA is now ambiguous too.
    t.clock.step(15_000);
    await t.refresh('web');
    assert.match((await t.sync('web'))!.message, /are controlled by multiple HPAs/);
    assert.equal((await t.conds('web'))['ScalingActive'], 'False AmbiguousSelector');
    assert.equal(await t.replicas(), 4);
    // web-2 deleted: web scales again.
    const gone = await t.f.client.resource(HorizontalPodAutoscalers, 'default').get('web-2');
    for (const inf of t.f.informers.informersOf(HorizontalPodAutoscalers)) inf.delete(gone as never);
    t.clock.step(15_000);
    await t.refresh('web');
    t.metrics.resources.set('cpu', cpu({ a: 90, b: 90, c: 90, d: 90 }));
    t.f.seed(pod('c'), pod('d'));
    assert.equal(await t.sync('web'), undefined);
    assert.equal((await t.conds('web'))['ScalingActive'], 'True ValidMetricFound');
    assert.equal(await t.replicas(), 8);
  });
});

test('hpasControllingPods: the HPAs whose known selector selects any of the pods, in their namespace, sorted', () => {
  const p = (ns: string, labels: Record<string, string>) => ({ metadata: { namespace: ns, labels } });
  const sel = (s: string) => parseLabelSelector(s);
  const cases: { name: string; pods: ReturnType<typeof p>[]; selectors: [string, string | undefined][]; want: string[] }[] = [
    { name: 'one HPA', pods: [p('d', { app: 'web' })], selectors: [['d/a', 'app=web']], want: ['d/a'] },
    { name: 'two over the same pods', pods: [p('d', { app: 'web' })], selectors: [['d/b', 'app=web'], ['d/a', 'app']], want: ['d/a', 'd/b'] },
    { name: 'disjoint selectors', pods: [p('d', { app: 'web', track: 'stable' })], selectors: [['d/a', 'app=web,track=stable'], ['d/b', 'app=web,track=canary']], want: ['d/a'] },
    { name: 'a broad selector over a canary\'s pods', pods: [p('d', { app: 'web', track: 'canary' })], selectors: [['d/stable', 'app=web'], ['d/canary', 'app=web,track=canary']], want: ['d/canary', 'd/stable'] },
    { name: 'another namespace\'s HPA does not count', pods: [p('d', { app: 'web' })], selectors: [['d/a', 'app=web'], ['e/a', 'app=web']], want: ['d/a'] },
    { name: 'a registered HPA whose selector is not known yet selects nothing', pods: [p('d', { app: 'web' })], selectors: [['d/a', 'app=web'], ['d/b', undefined]], want: ['d/a'] },
    { name: 'no pods', pods: [], selectors: [['d/a', 'app=web'], ['d/b', 'app=web']], want: [] },
  ];
  for (const c of cases) {
    const m = new Map(c.selectors.map(([k, s]) => [k, s === undefined ? undefined : sel(s)] as const));
    assert.deepEqual(hpasControllingPods(c.pods, m), c.want, c.name);
  }
});
