import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { calculateUsage, ResourceQuotaController } from './resourcequota.js';

const pod = (name: string, o: { cpu?: string; mem?: string; limCpu?: string; phase?: string; deadline?: number } = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: {
    ...(o.deadline ? { activeDeadlineSeconds: o.deadline } : {}),
    containers: [{ name: 'c', image: 'busybox', resources: {
      ...(o.cpu || o.mem ? { requests: { ...(o.cpu ? { cpu: o.cpu } : {}), ...(o.mem ? { memory: o.mem } : {}) } } : {}),
      ...(o.limCpu ? { limits: { cpu: o.limCpu } } : {}) } }],
  },
  status: { phase: o.phase ?? 'Running' },
});
const quota = (hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({ metadata: { name: 'q', namespace: 'default' }, spec: { hard, ...extra } });

for (const tc of [
  { name: 'counts pods and sums their requests', hard: { pods: '10', 'requests.cpu': '4', 'requests.memory': '1Gi' },
    pods: [pod('a', { cpu: '100m', mem: '64Mi' }), pod('b', { cpu: '1500m', mem: '64Mi' })], want: { pods: '2', 'requests.cpu': '1600m', 'requests.memory': '128Mi' } },
  { name: 'terminal pods do not count for compute, but for count/pods', hard: { pods: '10', 'count/pods': '10', cpu: '4' },
    pods: [pod('a', { cpu: '1' }), pod('b', { cpu: '1', phase: 'Succeeded' })], want: { pods: '1', 'count/pods': '2', cpu: '1' } },
  { name: 'limits.* sums limits', hard: { 'limits.cpu': '4' }, pods: [pod('a', { cpu: '1', limCpu: '2' })], want: { 'limits.cpu': '2' } },
  { name: 'a Terminating scope counts pods with an active deadline only', hard: { pods: '5' }, extra: { scopes: ['Terminating'] },
    pods: [pod('a'), pod('b', { deadline: 30 })], want: { pods: '1' } },
  { name: 'BestEffort scope counts pods without requests or limits', hard: { pods: '5' }, extra: { scopes: ['BestEffort'] },
    pods: [pod('a'), pod('b', { cpu: '1' })], want: { pods: '1' } },
  { name: 'names nothing counts are zero', hard: { 'count/widgets.example.com': '5' }, pods: [pod('a')], want: { 'count/widgets.example.com': '0' } },
]) {
  test(`calculateUsage: ${tc.name}`, () => {
    const used = calculateUsage(quota(tc.hard, tc.extra ?? {}), (r) => (r.group === '' && r.resource === 'pods' ? tc.pods : []), 0);
    assert.deepEqual(used, tc.want);
  });
}

test('calculateUsage: services count node ports and load balancers', () => {
  const svc = (name: string, type: string, ports: number): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' },
    spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) } });
  const used = calculateUsage(quota({ services: '9', 'services.nodeports': '9', 'services.loadbalancers': '9', 'count/services': '9' }),
    (r) => (r.resource === 'services' ? [svc('a', 'ClusterIP', 1), svc('b', 'NodePort', 2), svc('c', 'LoadBalancer', 1)] : []), 0);
  assert.deepEqual(used, { services: '3', 'services.nodeports': '3', 'services.loadbalancers': '1', 'count/services': '3' });
});

test('resourcequota: writes status.hard and status.used, then resyncs', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new ResourceQuotaController(ctx, { resyncMs: 60_000 }));
  f.seed({ apiVersion: 'v1', kind: 'ResourceQuota', ...quota({ pods: '2', 'count/configmaps': '5' }) } as KubeObject);
  f.seed(pod('a'));
  f.seed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } } as KubeObject);
  const res = await f.reconcile('default/q');
  assert.deepEqual(f.actions({ writesOnly: true }), ['update resourcequotas/status']);
  const written = f.client.actions().find((a) => a.verb === 'update')!.object as { status: unknown };
  assert.deepEqual(written.status, { hard: { pods: '2', 'count/configmaps': '5' }, used: { pods: '1', 'count/configmaps': '1' } });
  assert.deepEqual(res.result, { requeueAfterMs: 60_000 });
});

test('resourcequota: no write when status is current', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new ResourceQuotaController(ctx));
  f.seed({ apiVersion: 'v1', kind: 'ResourceQuota', ...quota({ pods: '2' }), status: { hard: { pods: '2' }, used: { pods: '1' } } } as KubeObject);
  f.seed(pod('a'));
  await f.reconcile('default/q');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
});
