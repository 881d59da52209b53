import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeKubernetesProtobuf } from './decode.js';

// Workload kinds (batch/v1, apps/v1 StatefulSet/DaemonSet/ControllerRevision, policy/v1) encoded by
// hand, field number by field number, from the `protobuf:"…,N,…"` tags of k8s.io/api 1.32 types.go,
// the way gogo-protobuf writes them: every non-pointer field even when empty, pointers only when set,
// repeated scalars unpacked. The schema in proto/ is not used to build these bytes, so a wrong field
// number or type in it shows up here.

type Value = number | bigint | boolean | string | Uint8Array | Field[];
type Field = [number, Value];

function varint(n: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, n);
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? b | 0x80 : b);
  } while (v > 0n);
  return out;
}

/** One message: varint fields for numbers/booleans, length-delimited for strings, bytes and messages. */
function msg(fields: Field[]): Buffer {
  const parts: number[] = [];
  for (const [n, v] of fields) {
    if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') {
      parts.push(...varint(BigInt(n << 3)), ...varint(BigInt(typeof v === 'boolean' ? Number(v) : v)));
      continue;
    }
    const bytes = typeof v === 'string' ? Buffer.from(v, 'utf8') : v instanceof Uint8Array ? Buffer.from(v) : msg(v);
    parts.push(...varint(BigInt((n << 3) | 2)), ...varint(BigInt(bytes.length)), ...bytes);
  }
  return Buffer.from(parts);
}

/** The `k8s\0` + runtime.Unknown{typeMeta{apiVersion=1, kind=2}=1, raw=2} envelope. */
const envelope = (apiVersion: string, kind: string, object: Field[]): Buffer =>
  Buffer.concat([Buffer.from('k8s\0', 'binary'), msg([[1, [[1, apiVersion], [2, kind]]], [2, msg(object)]])]);

const meta = (name: string): Field => [1, [[1, name]]];
const mapEntry = (n: number, key: string, value: Value): Field => [n, [[1, key], [2, value]]];
const time = (seconds: number): Field[] => [[1, seconds]];
// A pod template with one container: PodTemplateSpec{metadata=1, spec=2{containers=2{name=1, image=2}}}.
const template = (labels: Record<string, string>): Field[] => [
  [1, Object.entries(labels).map(([k, v]) => mapEntry(11, k, v))],
  [2, [[2, [[1, 'c'], [2, 'busybox:1.36']]]]],
];
const templateJson = (labels: Record<string, string>) => ({ metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } });
const intOrString = (v: number | string): Field[] => (typeof v === 'number' ? [[1, 0], [2, v]] : [[1, 1], [3, v]]);

test('decodes a batch/v1 Job: pointer zeros kept, Indexed, podFailurePolicy with unpacked exit codes, successPolicy, status', () => {
  const body = envelope('batch/v1', 'Job', [
    meta('j'),
    [2, [
      [1, 2], // parallelism
      [2, 4], // completions
      [3, 600n], // activeDeadlineSeconds (int64)
      [5, false], // manualSelector *bool
      [6, template({ app: 'j' })],
      [7, 0], // backoffLimit *int32 = 0
      [8, 0], // ttlSecondsAfterFinished *int32 = 0
      [9, 'Indexed'], // completionMode
      [10, true], // suspend
      [11, [ // podFailurePolicy.rules
        [1, [[1, 'FailJob'], [2, [[1, 'main'], [2, 'In'], [3, 42], [3, 43]]]]],
        [1, [[1, 'Ignore'], [3, [[1, 'DisruptionTarget'], [2, 'True']]]]],
      ]],
      [12, 1], // backoffLimitPerIndex
      [14, 'Failed'], // podReplacementPolicy
      [16, [[1, [[1, '0-1'], [2, 1]]]]], // successPolicy.rules{succeededIndexes, succeededCount}
    ]],
    [3, [
      [1, [[1, 'Complete'], [2, 'True'], [3, []], [4, time(1700000000)], [5, ''], [6, '']]],
      [2, time(1700000000)], // startTime
      [3, time(1700000060)], // completionTime
      [4, 0], [5, 4], [6, 0], // active, succeeded, failed (omitempty)
      [7, '0-3'], // completedIndexes
      [8, []], // uncountedTerminatedPods {}
      [9, 0], // ready *int32
      [11, 0], // terminating *int32
    ]],
  ]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' },
    spec: {
      parallelism: 2, completions: 4, activeDeadlineSeconds: 600, manualSelector: false, template: templateJson({ app: 'j' }),
      backoffLimit: 0, ttlSecondsAfterFinished: 0, completionMode: 'Indexed', suspend: true,
      podFailurePolicy: { rules: [
        { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42, 43] } },
        { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      ] },
      backoffLimitPerIndex: 1, podReplacementPolicy: 'Failed', successPolicy: { rules: [{ succeededIndexes: '0-1', succeededCount: 1 }] },
    },
    status: {
      conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2023-11-14T22:13:20Z' }], // reason, message: omitempty
      startTime: '2023-11-14T22:13:20Z', completionTime: '2023-11-14T22:14:20Z', succeeded: 4, completedIndexes: '0-3',
      uncountedTerminatedPods: {}, ready: 0, terminating: 0,
    },
  });
});

test('accepts packed repeated exit codes too (proto parsers must take both encodings)', () => {
  const packed = Buffer.from([...varint(BigInt((3 << 3) | 2)), 2, 42, 43]);
  const requirement = Buffer.concat([msg([[2, 'NotIn']]), packed]);
  const body = envelope('batch/v1', 'Job', [meta('j'), [2, [[11, [[1, [[1, 'Count'], [2, requirement]]]]]]]]);
  const job = decodeKubernetesProtobuf(body) as { spec: { podFailurePolicy: unknown } };
  assert.deepEqual(job.spec.podFailurePolicy, { rules: [{ action: 'Count', onExitCodes: { operator: 'NotIn', values: [42, 43] } }] });
});

test('decodes a batch/v1 CronJob: timeZone, int64 startingDeadlineSeconds, suspend=false and zero history limits kept, active refs', () => {
  const body = envelope('batch/v1', 'CronJob', [
    meta('cj'),
    [2, [
      [1, '@hourly'], [2, 200n], [3, 'Forbid'], [4, false],
      [5, [[1, [mapEntry(11, 'team', 'a')]], [2, [[6, template({})]]]]], // jobTemplate{metadata, spec{template}}
      [6, 0], [7, 0], [8, 'Europe/Paris'],
    ]],
    [3, [
      [1, [[1, 'Job'], [2, 'default'], [3, 'cj-28333'], [4, 'uid-1'], [5, 'batch/v1'], [6, '17']]], // ObjectReference
      [4, time(1700000000)], [5, time(1700000060)],
    ]],
  ]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' },
    spec: {
      schedule: '@hourly', startingDeadlineSeconds: 200, concurrencyPolicy: 'Forbid', suspend: false,
      jobTemplate: { metadata: { labels: { team: 'a' } }, spec: { template: { metadata: {}, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } } } },
      successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0, timeZone: 'Europe/Paris',
    },
    status: {
      active: [{ kind: 'Job', namespace: 'default', name: 'cj-28333', uid: 'uid-1', apiVersion: 'batch/v1', resourceVersion: '17' }],
      lastScheduleTime: '2023-11-14T22:13:20Z', lastSuccessfulTime: '2023-11-14T22:14:20Z',
    },
  });
});

test('decodes an apps/v1 StatefulSet with volumeClaimTemplates, partition 0, ordinals.start 0 and a claim retention policy', () => {
  const body = envelope('apps/v1', 'StatefulSet', [
    meta('web'),
    [2, [
      [1, 0], // replicas *int32 = 0
      [2, [mapEntry(1, 'app', 'web')]], // selector.matchLabels
      [3, template({ app: 'web' })],
      [4, [ // volumeClaimTemplates: PersistentVolumeClaim{metadata, spec{accessModes=1, resources=2{requests=2}, storageClassName=5}}
        meta('data'),
        [2, [[1, 'ReadWriteOnce'], [2, [mapEntry(2, 'storage', [[1, '1Gi']])]], [5, '']]],
        [3, []],
      ]],
      [5, 'web'], [6, 'Parallel'],
      [7, [[1, 'RollingUpdate'], [2, [[1, 0], [2, intOrString('50%')]]]]], // updateStrategy{type, rollingUpdate{partition, maxUnavailable}}
      [8, 10], [9, 0], // revisionHistoryLimit *int32, minReadySeconds (omitempty)
      [10, [[1, 'Delete'], [2, 'Retain']]],
      [11, [[1, 0]]], // ordinals.start (no omitempty)
    ]],
    [3, [[1, 2n], [2, 0], [3, 0], [6, 'web-7b9'], [7, 'web-7b9'], [9, 0], [11, 0]]],
  ]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
    spec: {
      replicas: 0, selector: { matchLabels: { app: 'web' } }, template: templateJson({ app: 'web' }),
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' }, status: {} }],
      serviceName: 'web', podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: '50%' } },
      revisionHistoryLimit: 10, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' }, ordinals: { start: 0 },
    },
    status: { observedGeneration: 2, replicas: 0, currentRevision: 'web-7b9', updateRevision: 'web-7b9', collisionCount: 0, availableReplicas: 0 },
  });
});

test('decodes an apps/v1 DaemonSet: RollingUpdate maxUnavailable 0 / maxSurge 10%, status counters without omitempty kept', () => {
  const body = envelope('apps/v1', 'DaemonSet', [
    meta('agent'),
    [2, [
      [1, [mapEntry(1, 'app', 'agent')]], [2, template({ app: 'agent' })],
      [3, [[1, 'RollingUpdate'], [2, [[1, intOrString(0)], [2, intOrString('10%')]]]]],
      [4, 5], [6, 3],
    ]],
    [3, [[1, 0], [2, 0], [3, 2], [4, 1], [5, 0], [6, 0], [7, 0], [8, 0]]],
  ]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' },
    spec: {
      selector: { matchLabels: { app: 'agent' } }, template: templateJson({ app: 'agent' }),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '10%' } }, minReadySeconds: 5, revisionHistoryLimit: 3,
    },
    status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 2, numberReady: 1 },
  });
});

test('decodes an apps/v1 ControllerRevision: data is the raw JSON patch, revision kept', () => {
  const data = '{"spec":{"template":{"$patch":"replace","spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}}}';
  const body = envelope('apps/v1', 'ControllerRevision', [
    [1, [[1, 'agent-6d8f'], [13, [[1, 'DaemonSet'], [3, 'agent'], [4, 'uid-2'], [5, 'apps/v1'], [6, true], [7, true]]]]],
    [2, [[1, Buffer.from(data)]]], // RawExtension{raw=1}
    [3, 1n],
  ]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'apps/v1', kind: 'ControllerRevision',
    metadata: { name: 'agent-6d8f', ownerReferences: [{ kind: 'DaemonSet', name: 'agent', uid: 'uid-2', apiVersion: 'apps/v1', controller: true, blockOwnerDeletion: true }] },
    data: JSON.parse(data), revision: 1,
  });
});

test('decodes a policy/v1 PodDisruptionBudget status: disruptedPods map of Times and metav1 Conditions', () => {
  const body = envelope('policy/v1', 'PodDisruptionBudget', [
    meta('guard'),
    [2, [[1, intOrString('50%')], [2, []], [4, 'AlwaysAllow']]],
    [3, [
      [1, 2n], mapEntry(2, 'web-0', time(1700000000)), [3, 1], [4, 3], [5, 2], [6, 3],
      [7, [[1, 'DisruptionAllowed'], [2, 'True'], [3, 2n], [4, time(1700000000)], [5, 'SufficientPods'], [6, '']]],
    ]],
  ]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'guard' },
    spec: { minAvailable: '50%', selector: {}, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
    status: {
      observedGeneration: 2, disruptedPods: { 'web-0': '2023-11-14T22:13:20Z' }, disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3,
      conditions: [{ type: 'DisruptionAllowed', status: 'True', observedGeneration: 2, lastTransitionTime: '2023-11-14T22:13:20Z', reason: 'SufficientPods', message: '' }],
    },
  });
});

test('decodes a policy/v1 Eviction with DeleteOptions (gracePeriodSeconds 0, preconditions, propagationPolicy, dryRun)', () => {
  const body = envelope('policy/v1', 'Eviction', [
    [1, [[1, 'web-0'], [3, 'default']]],
    [2, [[1, 0n], [2, [[1, 'uid-3'], [2, '42']]], [4, 'Background'], [5, 'All']]],
  ]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-0', namespace: 'default' },
    deleteOptions: { gracePeriodSeconds: 0, preconditions: { uid: 'uid-3', resourceVersion: '42' }, propagationPolicy: 'Background', dryRun: ['All'] },
  });
});

test('decodes an apps/v1 ReplicaSet', () => {
  const body = envelope('apps/v1', 'ReplicaSet', [meta('rs'), [2, [[1, 0], [4, 0], [2, [mapEntry(1, 'app', 'rs')]], [3, template({ app: 'rs' })]]], [3, [[1, 0], [3, 1n]]]]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs' },
    spec: { replicas: 0, selector: { matchLabels: { app: 'rs' } }, template: templateJson({ app: 'rs' }) },
    status: { replicas: 0, observedGeneration: 1 },
  });
});

test('decodes an autoscaling/v1 Scale (a typed client UpdateScale): replicas 0 is omitempty in spec, kept in status', () => {
  const body = envelope('autoscaling/v1', 'Scale', [[1, [[1, 'web'], [3, 'default'], [6, '12']]], [2, [[1, 0]]], [3, [[1, 3], [2, 'app=web']]]]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'default', resourceVersion: '12' },
    spec: {}, status: { replicas: 3, selector: 'app=web' },
  });
});
