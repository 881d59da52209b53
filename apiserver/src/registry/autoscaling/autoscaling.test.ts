import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../../testing/memory-storage.js';
import { buildApiServer } from '../../server.js';
import { BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION, METRIC_SPECS_ANNOTATION, METRIC_STATUSES_ANNOTATION, hpaV1ToV2, hpaV2ToV1 } from './conversion.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function setup(t: { after(fn: () => unknown): void }) {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')) });
  await app.ready();
  t.after(() => app.close());
  return app;
}
const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const v2 = (name: string, spec: Json = {}) => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec: { scaleTargetRef: ref, maxReplicas: 5, ...spec } });
const v1 = (name: string, spec: Json = {}) => ({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec: { scaleTargetRef: ref, maxReplicas: 5, ...spec } });
const cpu = (n: number) => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: n } } });
const memory = (v: string) => ({ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: v } } });

test('autoscaling/v2: create defaults minReplicas 1 and cpu 80 %, status starts empty; behavior is left unset', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: V2, payload: v2('web') });
  assert.equal(res.statusCode, 201, res.body);
  const h = res.json();
  assert.equal(h.spec.minReplicas, 1);
  assert.deepEqual(h.spec.metrics, [cpu(80)]);
  assert.equal(h.spec.behavior, undefined);
  assert.deepEqual(h.status, { desiredReplicas: 0 });
});

test('autoscaling/v2: a set behavior gets upstream defaults for every unset rule (scale-down window left to the controller)', async (t) => {
  const app = await setup(t);
  const h = (await app.inject({ method: 'POST', url: V2, payload: v2('web', { behavior: { scaleDown: { stabilizationWindowSeconds: 10 } } }) })).json();
  assert.deepEqual(h.spec.behavior, {
    scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
    scaleDown: { selectPolicy: 'Max', stabilizationWindowSeconds: 10, policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
  const h2 = (await app.inject({ method: 'POST', url: V2, payload: v2('web2', { behavior: { scaleUp: { selectPolicy: 'Disabled' } } }) })).json();
  assert.equal(h2.spec.behavior.scaleDown.stabilizationWindowSeconds, undefined);
  assert.equal(h2.spec.behavior.scaleUp.selectPolicy, 'Disabled');
});

for (const tc of [
  { name: 'maxReplicas 0', spec: { maxReplicas: 0 }, causes: ['spec.maxReplicas', 'spec.maxReplicas'], msg: /spec.maxReplicas: Invalid value: 0: must be greater than 0/ },
  { name: 'max below min', spec: { minReplicas: 4, maxReplicas: 2 }, causes: ['spec.maxReplicas'], msg: /must be greater than or equal to `minReplicas`/ },
  { name: 'minReplicas 0', spec: { minReplicas: 0 }, causes: ['spec.minReplicas', 'spec.metrics'], msg: /must be greater than or equal to 1/ },
  { name: 'no target kind', spec: { scaleTargetRef: { name: 'web' } }, causes: ['spec.scaleTargetRef.kind'], msg: /Required value/ },
  { name: 'utilization 0', spec: { metrics: [cpu(0)] }, causes: ['spec.metrics[0].resource.target.averageUtilization'], msg: /must be greater than 0/ },
  { name: 'both value and utilization', spec: { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5, averageValue: '100m' } } }] },
    causes: ['spec.metrics[0].resource.target.averageValue'], msg: /may not set both a target raw value and a target utilization/ },
  { name: 'type without source', spec: { metrics: [{ type: 'Pods' }] }, causes: ['spec.metrics[0].pods'], msg: /must populate information for the given metric source/ },
  { name: 'two sources', spec: { metrics: [{ ...cpu(50), pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '1' } } }] },
    causes: ['spec.metrics[0].pods'], msg: /must populate the given metric source only/ },
  { name: 'bad select policy', spec: { behavior: { scaleUp: { selectPolicy: 'Avg' } } }, causes: ['spec.behavior.scaleUp.selectPolicy'], msg: /Unsupported value: "Avg": supported values: "Disabled", "Max", "Min"/ },
  { name: 'empty policies', spec: { behavior: { scaleDown: { policies: [] } } }, causes: ['spec.behavior.scaleDown.policies'], msg: /must specify at least one Policy/ },
  { name: 'window too long', spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 3601 } } }, causes: ['spec.behavior.scaleDown.stabilizationWindowSeconds'], msg: /must be less than or equal to 3600/ },
  { name: 'period too long', spec: { behavior: { scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 1801 }] } } }, causes: ['spec.behavior.scaleUp.policies[0].periodSeconds'], msg: /must be less than or equal to 1800/ },
]) {
  test(`autoscaling/v2 validation: ${tc.name} is 422 Invalid with upstream's causes`, async (t) => {
    const app = await setup(t);
    const res = await app.inject({ method: 'POST', url: V2, payload: v2('bad', tc.spec) });
    assert.equal(res.statusCode, 422, res.body);
    const st = res.json();
    assert.equal(st.reason, 'Invalid');
    assert.match(st.message, /^HorizontalPodAutoscaler.autoscaling "bad" is invalid: /);
    assert.match(st.message, tc.msg);
    assert.deepEqual(st.details.causes.map((c: Json) => c.field), tc.causes);
  });
}

test('autoscaling/v1 serves the v2 objects: targetCPUUtilizationPercentage, other metrics and behavior in annotations', async (t) => {
  const app = await setup(t);
  await app.inject({ method: 'POST', url: V2, payload: v2('web', { metrics: [cpu(50), memory('200Mi')], behavior: { scaleDown: { stabilizationWindowSeconds: 30 } } }) });
  const res = await app.inject({ url: `${V1}/web` });
  assert.equal(res.statusCode, 200);
  const h = res.json();
  assert.equal(h.apiVersion, 'autoscaling/v1');
  assert.equal(h.spec.targetCPUUtilizationPercentage, 50);
  assert.deepEqual(JSON.parse(h.metadata.annotations[METRIC_SPECS_ANNOTATION]), [{ type: 'Resource', resource: { name: 'memory', targetAverageValue: '200Mi' } }]);
  assert.equal(JSON.parse(h.metadata.annotations[BEHAVIOR_ANNOTATION]).scaleDown.stabilizationWindowSeconds, 30);
  assert.deepEqual(h.status, { currentReplicas: 0, desiredReplicas: 0 });
  const list = (await app.inject({ url: V1 })).json();
  assert.equal(list.kind, 'HorizontalPodAutoscalerList');
  assert.equal(list.apiVersion, 'autoscaling/v1');
  assert.equal(list.items[0].spec.targetCPUUtilizationPercentage, 50);
  // A v1 client writing back what it read keeps the v2-only fields.
  const put = await app.inject({ method: 'PUT', url: `${V1}/web`, payload: { ...h, spec: { ...h.spec, maxReplicas: 7 } } });
  assert.equal(put.statusCode, 200, put.body);
  const back = (await app.inject({ url: `${V2}/web` })).json();
  assert.equal(back.spec.maxReplicas, 7);
  assert.deepEqual(back.spec.metrics, [memory('200Mi'), cpu(50)]);
  assert.equal(back.spec.behavior.scaleDown.stabilizationWindowSeconds, 30);
  assert.equal(back.metadata.annotations, undefined, 'round-trip annotations are not stored');
});

test('autoscaling/v1 create (what kubectl autoscale sends) stores a v2 object; no target means cpu 80 %', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: V1, payload: v1('web', { minReplicas: 1, targetCPUUtilizationPercentage: 50 }) });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().apiVersion, 'autoscaling/v1');
  assert.equal(res.json().spec.targetCPUUtilizationPercentage, 50);
  const h = (await app.inject({ url: `${V2}/web` })).json();
  assert.deepEqual(h.spec.metrics, [cpu(50)]);
  await app.inject({ method: 'POST', url: V1, payload: v1('plain') });
  assert.deepEqual((await app.inject({ url: `${V2}/plain` })).json().spec.metrics, [cpu(80)]);
  assert.equal((await app.inject({ url: `${V1}/plain` })).json().spec.targetCPUUtilizationPercentage, 80);
  const bad = await app.inject({ method: 'POST', url: V1, payload: v1('bad', { targetCPUUtilizationPercentage: 0 }) });
  assert.equal(bad.statusCode, 422);
  assert.deepEqual(bad.json().details.causes.map((c: Json) => c.field), ['spec.metrics[0].resource.target.averageUtilization']);
});

test('autoscaling/v2 /status writes only status; the v1 view shows currentCPUUtilizationPercentage', async (t) => {
  const app = await setup(t);
  const h = (await app.inject({ method: 'POST', url: V2, payload: v2('web', { metrics: [cpu(50)] }) })).json();
  const status = {
    currentReplicas: 2, desiredReplicas: 3, lastScaleTime: '2026-01-01T00:00:00Z',
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 73, averageValue: '73m' } } }],
    conditions: [{ type: 'AbleToScale', status: 'True', reason: 'SucceededRescale', message: 'the HPA controller was able to update the target scale to 3', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  };
  const put = await app.inject({ method: 'PUT', url: `${V2}/web/status`, payload: { ...h, spec: { ...h.spec, maxReplicas: 9 }, status } });
  assert.equal(put.statusCode, 200, put.body);
  assert.equal(put.json().spec.maxReplicas, 5, 'spec is not written through /status');
  assert.deepEqual(put.json().status, status);
  const one = (await app.inject({ url: `${V1}/web` })).json();
  assert.equal(one.status.currentCPUUtilizationPercentage, 73);
  assert.equal(one.status.currentReplicas, 2);
  assert.deepEqual(JSON.parse(one.metadata.annotations[CONDITIONS_ANNOTATION]), status.conditions);
  assert.deepEqual(JSON.parse(one.metadata.annotations[METRIC_STATUSES_ANNOTATION]),
    [{ type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 73, currentAverageValue: '73m' } }]);
  const neg = await app.inject({ method: 'PUT', url: `${V2}/web/status`, payload: { ...(put.json() as Json), status: { ...status, desiredReplicas: -1 } } });
  assert.equal(neg.statusCode, 422);
});

test('kubectl get hpa: NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE, the same through v1 and v2', async (t) => {
  const app = await setup(t);
  const h = (await app.inject({ method: 'POST', url: V2, payload: v2('web', { metrics: [cpu(50), memory('200Mi'), { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }] }) })).json();
  const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io';
  for (const url of [V2, V1]) {
    const table = (await app.inject({ url, headers: { accept } })).json();
    assert.deepEqual(table.columnDefinitions.map((c: Json) => c.name), ['Name', 'Reference', 'Targets', 'MinPods', 'MaxPods', 'Replicas', 'Age']);
    assert.deepEqual(table.rows[0].cells.slice(0, 6), ['web', 'Deployment/web', 'cpu: <unknown>/50%, memory: <unknown>/200Mi + 1 more...', '1', 5, 0], url);
  }
  await app.inject({ method: 'PUT', url: `${V2}/web/status`, payload: { ...h, status: { currentReplicas: 3, desiredReplicas: 3,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 73, averageValue: '73m' } } }, { type: 'Resource', resource: { name: 'memory', current: { averageValue: '120Mi' } } }] } } });
  for (const url of [V2, V1]) {
    const table = (await app.inject({ url, headers: { accept } })).json();
    assert.equal(table.rows[0].cells[2], 'cpu: 73%/50%, memory: 120Mi/200Mi + 1 more...', url);
    assert.equal(table.rows[0].cells[5], 3);
  }
});

test('conversion: v2 → v1 → v2 keeps every field of a full object', () => {
  const full = {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'x', namespace: 'd', annotations: { keep: 'me' } },
    spec: {
      scaleTargetRef: ref, minReplicas: 2, maxReplicas: 9,
      metrics: [
        memory('1Gi'),
        { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 60 } } },
        { type: 'Pods', pods: { metric: { name: 'qps', selector: { matchLabels: { a: 'b' } } }, target: { type: 'AverageValue', averageValue: '10' } } },
        { type: 'Object', object: { describedObject: { apiVersion: 'v1', kind: 'Service', name: 's' }, metric: { name: 'rps' }, target: { type: 'Value', value: '100' } } },
        { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } } },
        cpu(50),
      ],
      behavior: { scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }] } },
    },
    status: {
      currentReplicas: 3, desiredReplicas: 4, observedGeneration: 2,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 70, averageValue: '70m' } } }],
      conditions: [{ type: 'ScalingActive', status: 'True', reason: 'ValidMetricFound', message: 'm' }],
    },
  };
  const down = hpaV2ToV1(full as never) as Json;
  assert.equal(down.spec.targetCPUUtilizationPercentage, 50);
  assert.equal(down.status.currentCPUUtilizationPercentage, 70);
  assert.equal(down.metadata.annotations.keep, 'me');
  assert.deepEqual(hpaV1ToV2(down as never), full);
  assert.deepEqual(full.metadata.annotations, { keep: 'me' }, 'inputs are not mutated');
});
