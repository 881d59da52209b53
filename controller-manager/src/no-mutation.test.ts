/**
 * "Never mutate cached objects": every controller reconciles with every cached object deeply
 * frozen; a write to one throws (ES modules run in strict mode).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RESOURCES, type KubeObject } from '@mk8s/api';
import { newControllerFixture, type ControllerContext, type ControllerFixture } from '@mk8s/client/testing';
import { DeploymentController } from './controllers/deployment/deployment.js';
import { EndpointsController } from './controllers/endpoints/endpoints.js';
import { EndpointSliceController } from './controllers/endpointslice/endpointslice.js';
import { GarbageCollector } from './controllers/garbagecollector/garbagecollector.js';
import { NamespaceController } from './controllers/namespace/namespace.js';
import { NodeIpamController } from './controllers/nodeipam/nodeipam.js';
import { NodeLifecycleController } from './controllers/nodelifecycle/nodelifecycle.js';
import { ReplicaSetController } from './controllers/replicaset/replicaset.js';
import { DaemonSetController } from './controllers/daemonset/daemonset.js';
import { StatefulSetController } from './controllers/statefulset/statefulset.js';
import { DisruptionController } from './controllers/disruption/disruption.js';
import { PersistentVolumeController } from './controllers/persistentvolume/pv-controller.js';
import { PVCProtectionController, PVProtectionController } from './controllers/persistentvolume/protection.js';
import { createReplicationManager } from './controllers/replicationcontroller/replication-controller.js';
import { ResourceQuotaController } from './controllers/resourcequota/resourcequota.js';

function deepFreeze(o: unknown): void {
  if (o === null || typeof o !== 'object' || Object.isFrozen(o)) return;
  Object.freeze(o);
  for (const v of Object.values(o)) deepFreeze(v);
}
function freezeCaches(f: ControllerFixture): void {
  for (const r of RESOURCES) for (const inf of f.informers.informersOf(r)) for (const o of inf.lister.list()) deepFreeze(o);
}

const tpl = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'v2', ports: [{ name: 'http', containerPort: 8080 }] }] } };
const objects = (): KubeObject[] => [
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', generation: 2, annotations: { a: 'b' } }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: tpl, revisionHistoryLimit: 1, progressDeadlineSeconds: 600 }, status: { observedGeneration: 1, conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', lastUpdateTime: '2023-01-01T00:00:00Z', lastTransitionTime: '2023-01-01T00:00:00Z' }] } },
  { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-old', namespace: 'default', annotations: { 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/desired-replicas': '3' } }, spec: { replicas: 3, selector: { matchLabels: { app: 'web', 'pod-template-hash': 'old' } }, template: { metadata: { labels: { app: 'web', 'pod-template-hash': 'old' } }, spec: { containers: [{ name: 'c', image: 'v1' }] } } }, status: { replicas: 3, availableReplicas: 3, conditions: [{ type: 'ReplicaFailure', status: 'True' }] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'orphan', namespace: 'default', labels: { app: 'web', 'pod-template-hash': 'old' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }] }, status: { phase: 'Running', podIP: '10.244.0.5', conditions: [{ type: 'Ready', status: 'True' }] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'owned', namespace: 'default', labels: { app: 'other' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'gone', uid: 'gone', controller: true }] }, spec: { nodeName: 'n1', containers: [{ name: 'c' }], tolerations: [{ key: 'x', operator: 'Exists', effect: 'NoSchedule' }] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
  { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'web-rc', namespace: 'default', generation: 1 }, spec: { replicas: 2, selector: { app: 'web', 'pod-template-hash': 'old' }, template: { metadata: { labels: { app: 'web', 'pod-template-hash': 'old' } }, spec: { containers: [{ name: 'c', image: 'v1' }] } } }, status: { replicas: 0, conditions: [{ type: 'ReplicaFailure', status: 'True' }] } },
  { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'default' }, spec: { hard: { pods: '10', 'requests.cpu': '2', 'count/deployments.apps': '3' } }, status: { hard: { pods: '10' }, used: { pods: '9' } } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default', labels: { l: 'v' } }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'a' } }, spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2023-01-01T00:00:00Z' }] }, status: { conditions: [{ type: 'Ready', status: 'Unknown', lastHeartbeatTime: '2023-01-01T00:00:00Z' }] } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2023-01-01T00:00:00Z' }] } },
  { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent', namespace: 'default', uid: 'ds-uid', generation: 2, annotations: { 'deprecated.daemonset.template.generation': '2' } }, spec: { selector: { matchLabels: { app: 'agent' } }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'v2' }], tolerations: [{ key: 'x', operator: 'Exists' }] } } }, status: { desiredNumberScheduled: 2, conditions: [] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'agent-a', namespace: 'default', labels: { app: 'agent', 'controller-revision-hash': 'old' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true }] }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'v1' }] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2023-01-01T00:00:00Z' }] } },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'default', uid: 'sts-uid', generation: 2 }, spec: { replicas: 1, serviceName: 'db', podManagementPolicy: 'OrderedReady', selector: { matchLabels: { app: 'db' } }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'v2' }] } } }, status: { replicas: 1, currentRevision: 'db-old', conditions: [] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db-0', namespace: 'default', labels: { app: 'db', 'controller-revision-hash': 'db-old' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'sts-uid', controller: true }] }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'v1' }] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2023-01-01T00:00:00Z' }] } },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: 'default', generation: 1 }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } }, status: { disruptedPods: { orphan: '2023-01-01T00:00:00Z' }, conditions: [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', lastTransitionTime: '2023-01-01T00:00:00Z' }] } },
  { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'agent-old', namespace: 'default', labels: { app: 'agent', 'controller-revision-hash': 'old' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true }] }, revision: 1, data: { spec: { template: { $patch: 'replace', spec: { containers: [{ name: 'c', image: 'v1' }] } } } } },
  { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast' }, provisioner: 'mk8s.io/local-path', volumeBindingMode: 'Immediate' },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default', annotations: { a: 'b' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' }, status: { phase: 'Pending' } },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'fast', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'fast' }, status: { phase: 'Pending' } },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'old', namespace: 'default', deletionTimestamp: '2023-01-01T00:00:00Z', finalizers: ['kubernetes.io/pvc-protection'] }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Bound' } },
  { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv1', annotations: { a: 'b' } }, spec: { capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' } }, status: { phase: 'Available' } },
  { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-released', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }, spec: { capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' }, claimRef: { namespace: 'default', name: 'gone', uid: 'gone' } }, status: { phase: 'Bound' } },
  { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-gone', deletionTimestamp: '2023-01-01T00:00:00Z', finalizers: ['kubernetes.io/pv-protection'] }, spec: { capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' } }, status: { phase: 'Released' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gone-ns', deletionTimestamp: '2023-01-01T00:00:00Z', finalizers: ['x'] }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } },
];

const builders: [string, string[], (ctx: ControllerContext) => { reconcile(k: string, s: AbortSignal): Promise<unknown> }][] = [
  ['replicaset', ['default/web-old'], (ctx) => new ReplicaSetController(ctx)],
  ['replicationcontroller', ['default/web-rc'], (ctx) => createReplicationManager(ctx)],
  ['resourcequota', ['default/q'], (ctx) => new ResourceQuotaController(ctx)],
  ['deployment', ['default/web'], (ctx) => new DeploymentController(ctx)],
  ['endpoints', ['default/web'], (ctx) => new EndpointsController(ctx)],
  ['endpointslice', ['default/web'], (ctx) => new EndpointSliceController(ctx)],
  ['garbagecollector', ['pods|default/owned'], (ctx) => new GarbageCollector(ctx)],
  ['namespace', ['gone-ns'], (ctx) => new NamespaceController(ctx)],
  ['daemonset', ['default/agent'], (ctx) => new DaemonSetController(ctx)],
  ['statefulset', ['default/db'], (ctx) => new StatefulSetController(ctx)],
  ['disruption', ['default/web'], (ctx) => new DisruptionController(ctx)],
  ['persistentvolume-binder', ['claim:default/data', 'claim:default/fast', 'volume:pv-released'], (ctx) => new PersistentVolumeController(ctx)],
  ['persistentvolumeclaim-protection', ['default/old'], (ctx) => new PVCProtectionController(ctx)],
  ['persistentvolume-protection', ['pv-gone'], (ctx) => new PVProtectionController(ctx)],
  ['nodeipam', ['n1', 'n2'], (ctx) => new NodeIpamController(ctx)],
  ['nodelifecycle', ['n1', 'n2'], (ctx) => new NodeLifecycleController(ctx, { defaultTolerationSeconds: 0 })],
];

for (const [name, keys, build] of builders) {
  test(`${name}: reconciles without touching cached objects`, async () => {
    const f = newControllerFixture();
    const c = f.build(build);
    for (const o of objects()) f.seed(o);
    freezeCaches(f);
    if (c instanceof NodeLifecycleController) await c.monitorNodeHealth(AbortSignal.timeout(5000));
    for (const k of keys) await c.reconcile(k, AbortSignal.timeout(5000));
    assert.ok(f.client.actions().length > 0, 'the controller did something');
  });
}

// Batch controllers, on their own objects (a Job with a finished and a running pod).
test('job: reconciles without touching cached objects', async () => {
  const { JobController } = await import('./controllers/job/job.js');
  const f = newControllerFixture();
  const c = f.build((ctx) => new JobController(ctx));
  const labels = { 'batch.kubernetes.io/controller-uid': 'uid-pi', 'job-name': 'pi' };
  const ref = [{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: 'uid-pi', controller: true }];
  f.seed({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'pi', namespace: 'default', uid: 'uid-pi' }, spec: { completions: 3, parallelism: 2, backoffLimit: 6, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'uid-pi' } }, template: { metadata: { labels }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'b' }] } } }, status: { conditions: [{ type: 'Suspended', status: 'False' }], uncountedTerminatedPods: { succeeded: ['x'] } } } as KubeObject);
  f.seed({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pi-a', namespace: 'default', uid: 'a', labels, ownerReferences: ref, finalizers: ['batch.kubernetes.io/job-tracking'] }, spec: { containers: [{ name: 'c' }] }, status: { phase: 'Succeeded' } } as KubeObject);
  f.seed({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pi-b', namespace: 'default', uid: 'b', labels, ownerReferences: ref, finalizers: ['batch.kubernetes.io/job-tracking'] }, spec: { containers: [{ name: 'c' }] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } as KubeObject);
  freezeCaches(f);
  await c.reconcile('default/pi', AbortSignal.timeout(5000));
  assert.ok(f.client.actions().length > 0, 'the controller did something');
});

test('cronjob: reconciles without touching cached objects', async () => {
  const { CronJobController } = await import('./controllers/cronjob/cronjob.js');
  const f = newControllerFixture();
  f.clock.step(Date.parse('2026-01-01T00:10:00Z') - f.clock.now());
  const c = f.build((ctx) => new CronJobController(ctx));
  const ref = [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'hello', uid: 'uid-hello', controller: true }];
  f.seed({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'hello', namespace: 'default', uid: 'uid-hello', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { schedule: '*/5 * * * *', concurrencyPolicy: 'Replace', successfulJobsHistoryLimit: 0, jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c' }] } } } } }, status: { active: [{ name: 'hello-1', uid: 'j1' }] } } as KubeObject);
  f.seed({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'hello-1', namespace: 'default', uid: 'j1', ownerReferences: ref }, spec: { template: { spec: { containers: [{ name: 'c' }] } } }, status: { conditions: [{ type: 'Complete', status: 'True' }], completionTime: '2026-01-01T00:06:00Z' } } as KubeObject);
  freezeCaches(f);
  await c.reconcile('default/hello', AbortSignal.timeout(5000));
  assert.ok(f.client.actions().length > 0, 'the controller did something');
});

test('ttl-after-finished: reconciles without touching cached objects', async () => {
  const { TTLAfterFinishedController } = await import('./controllers/ttlafterfinished/ttlafterfinished.js');
  const f = newControllerFixture();
  f.clock.step(Date.parse('2026-01-01T00:10:00Z') - f.clock.now());
  const c = f.build((ctx) => new TTLAfterFinishedController(ctx));
  f.seed({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'old', namespace: 'default' }, spec: { ttlSecondsAfterFinished: 5, template: { spec: { containers: [{ name: 'c' }] } } }, status: { completionTime: '2026-01-01T00:00:00Z', conditions: [{ type: 'Complete', status: 'True' }] } } as KubeObject);
  freezeCaches(f);
  await c.reconcile('default/old', AbortSignal.timeout(5000));
  assert.ok(f.client.actions().length > 0, 'the controller did something');
});

test('horizontalpodautoscaling: reconciles without touching cached objects', async () => {
  const { HorizontalController } = await import('./controllers/podautoscaler/horizontal.js');
  const { FakeMetricsClient } = await import('./controllers/podautoscaler/metrics-client.js');
  const f = newControllerFixture();
  const metrics = new FakeMetricsClient();
  metrics.resources.set('cpu', new Map([['burn-a', { value: 90, timestampMs: f.clock.now(), windowMs: 15_000 }]]));
  const c = f.build((ctx) => new HorizontalController(ctx, { metrics }));
  for (const o of objects()) f.seed(o);
  const started = new Date(f.clock.now() - 3_600_000).toISOString();
  f.seed({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'burn', namespace: 'default' }, spec: { replicas: 1, selector: { matchLabels: { app: 'burn' } }, template: {} }, status: { replicas: 1 } } as KubeObject);
  f.seed({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'burn-a', namespace: 'default', labels: { app: 'burn' } }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '100m' } } }] },
    status: { phase: 'Running', startTime: started, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: started }] } } as KubeObject);
  f.seed({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'burn', namespace: 'default', generation: 1 },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'burn' }, minReplicas: 1, maxReplicas: 5,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
      behavior: { scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 1, periodSeconds: 15 }] }, scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] } } },
    status: { desiredReplicas: 1, currentReplicas: 1, conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'm' }] } } as KubeObject);
  freezeCaches(f);
  await c.reconcile('default/burn', AbortSignal.timeout(5000));
  assert.deepEqual(f.recorder.events, ['Normal SuccessfulRescale New size: 2; reason: cpu resource utilization (percentage of request) above target']);
});
