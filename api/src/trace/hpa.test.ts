import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as autoscaling from 'kubernetes-types/autoscaling/v2.js';
import type { Event } from '../types.js';
import { diagnoseHorizontalPodAutoscaler } from './hpa.js';
import { gatherTrace, traceLinks } from './gather.js';

type Hpa = autoscaling.HorizontalPodAutoscaler;
const c = (type: string, status: string, reason: string, message = 'm') => ({ type, status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' });
const hpa = (status: autoscaling.HorizontalPodAutoscalerStatus): Hpa => ({
  apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'default' },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] },
  status,
});
const target = (specReplicas: number) => ({ kind: 'Deployment', name: 'web', specReplicas, statusReplicas: specReplicas });
const steps = (links: { step: string; status: string }[]) => links.map((l) => `${l.step}:${l.status}`);
const ev = (type: string, reason: string, message: string): Event => ({ metadata: { name: reason }, involvedObject: {}, type, reason, message });

test('trace hpa: a healthy chain shows current vs target, desired and the scale written', () => {
  const h = hpa({ currentReplicas: 3, desiredReplicas: 3, lastScaleTime: '2026-01-01T00:01:00Z',
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 73, averageValue: '73m' } } }],
    conditions: [c('AbleToScale', 'True', 'ReadyForNewScale'), c('ScalingActive', 'True', 'ValidMetricFound', 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)'), c('ScalingLimited', 'False', 'DesiredWithinRange')] });
  const links = diagnoseHorizontalPodAutoscaler(h, target(3), [ev('Normal', 'SuccessfulRescale', 'New size: 3; reason: cpu resource utilization (percentage of request) above target')]);
  assert.deepEqual(steps(links), ['stored:ok', 'target:ok', 'metrics:ok', 'current vs target:ok', 'desired:ok', 'scale written:ok']);
  assert.equal(links[3]!.evidence, 'cpu: 73% of request (73m) vs target 50%');
  assert.match(links[5]!.evidence, /Deployment\/web has 3 replicas since 2026-01-01T00:01:00Z; last New size: 3; reason: cpu resource utilization/);
});

test('trace hpa: no metrics API is a broken metrics link owned by metrics-server', () => {
  const h = hpa({ currentReplicas: 1, desiredReplicas: 0, currentMetrics: [{ type: '' } as never],
    conditions: [c('AbleToScale', 'True', 'SucceededGetScale'), c('ScalingActive', 'False', 'FailedGetResourceMetric', 'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API')] });
  const links = diagnoseHorizontalPodAutoscaler(h, target(1));
  assert.deepEqual(steps(links), ['stored:ok', 'target:ok', 'metrics:broken']);
  assert.match(links[2]!.owner!, /metrics-server/);
  assert.equal(links[2]!.hint, 'kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods');
});

for (const tc of [
  { name: 'missing target', h: hpa({ desiredReplicas: 0, conditions: [c('AbleToScale', 'False', 'FailedGetScale', 'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" not found')] }), t: undefined, want: ['stored:ok', 'target:broken'] },
  { name: 'not synced yet', h: hpa({ desiredReplicas: 0 }), t: target(1), want: ['stored:ok', 'target:ok', 'metrics:waiting'] },
  { name: 'stabilized scale-down', t: target(4),
    h: hpa({ currentReplicas: 4, desiredReplicas: 4, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 5 } } }],
      conditions: [c('AbleToScale', 'True', 'ScaleDownStabilized'), c('ScalingActive', 'True', 'ValidMetricFound')] }),
    want: ['stored:ok', 'target:ok', 'metrics:ok', 'current vs target:ok', 'desired:waiting', 'scale written:ok'] },
  { name: 'rescale refused', t: target(1),
    h: hpa({ currentReplicas: 1, desiredReplicas: 1, conditions: [c('AbleToScale', 'False', 'FailedUpdateScale'), c('ScalingActive', 'True', 'ValidMetricFound')] }),
    want: ['stored:ok', 'target:ok', 'metrics:ok', 'current vs target:ok', 'desired:ok', 'scale written:broken'] },
  { name: 'scale not yet seen on the target', t: target(1),
    h: hpa({ currentReplicas: 1, desiredReplicas: 2, conditions: [c('AbleToScale', 'True', 'SucceededRescale'), c('ScalingActive', 'True', 'ValidMetricFound')] }),
    want: ['stored:ok', 'target:ok', 'metrics:ok', 'current vs target:ok', 'desired:ok', 'scale written:waiting'] },
]) {
  test(`trace hpa: ${tc.name}`, () => assert.deepEqual(steps(diagnoseHorizontalPodAutoscaler(tc.h, tc.t)), tc.want));
}

test('trace hpa: gatherTrace reads the HPA, its target and its events', async () => {
  const asked: string[] = [];
  const h = hpa({ desiredReplicas: 0 });
  const get = async (path: string) => {
    asked.push(path);
    if (path === '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web') return h;
    if (path === '/apis/apps/v1/namespaces/default/deployments/web') return { spec: { replicas: 2 }, status: { replicas: 2 } };
    return { items: [] };
  };
  const g = await gatherTrace(get, { kind: 'HorizontalPodAutoscaler', namespace: 'default', name: 'web' });
  assert.deepEqual(asked.slice(0, 2), ['/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web', '/apis/apps/v1/namespaces/default/deployments/web']);
  assert.ok(asked.includes('/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dweb'));
  assert.equal(g.kind === 'HorizontalPodAutoscaler' && g.scaleTarget?.specReplicas, 2);
  assert.deepEqual(steps(traceLinks(g)), ['stored:ok', 'target:ok', 'metrics:waiting']);
});
