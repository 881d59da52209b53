import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../types.js';
import type * as batch from 'kubernetes-types/batch/v1.js';
import { diagnoseCronJob, diagnoseJob } from './batch.js';

const ref = (uid: string, kind = 'Job') => [{ apiVersion: 'batch/v1', kind, name: 'x', uid, controller: true }];
const pod = (name: string, phase: string, o: Partial<Pod['status']> = {}): Pod => ({ metadata: { name, ownerReferences: ref('j1') }, spec: { nodeName: 'n1', containers: [] }, status: { phase, ...o } });
const failedJob: batch.Job = {
  metadata: { name: 'pi', uid: 'j1' }, spec: { backoffLimit: 1, template: {} },
  status: { failed: 2, conditions: [{ type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }, { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] },
};
const exit3 = { containerStatuses: [{ name: 'c', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 3, reason: 'Error' } } }] };

test('trace job: a Failed Job names its reason and the last failing pod', () => {
  const links = diagnoseJob(failedJob, [pod('pi-a', 'Failed', exit3), pod('pi-b', 'Failed', exit3)]);
  assert.deepEqual(links.map((l) => `${l.step}:${l.status}`), ['stored:ok', 'pods:ok', 'complete:broken']);
  assert.match(links[1]!.evidence, /2 pods: 0 running, 0 succeeded, 2 failed \(last failure: pi-b exit code 3 Error\)/);
  assert.match(links[2]!.evidence, /Failed BackoffLimitExceeded: Job has reached the specified backoff limit/);
  assert.equal(links[2]!.hint, 'mkctl logs pod/pi-b');
});

test('trace job: a pod stuck in ImagePullBackOff is the broken link', () => {
  const links = diagnoseJob({ metadata: { name: 'pi', uid: 'j1' }, spec: { template: {} }, status: { active: 1 } },
    [pod('pi-a', 'Pending', { containerStatuses: [{ name: 'c', image: '', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff' } } }] })]);
  assert.deepEqual(links.map((l) => `${l.step}:${l.status}`), ['stored:ok', 'pods:broken', 'complete:waiting']);
  assert.equal(links[1]!.owner, 'kubelet');
});

test('trace cronjob: follows the last Job to its pods', () => {
  const cj: batch.CronJob = { metadata: { name: 'tick', uid: 'c1' }, spec: { schedule: '* * * * *', jobTemplate: {} }, status: { lastScheduleTime: '2026-01-01T00:01:00Z' } };
  const jobs: batch.Job[] = [
    { ...failedJob, metadata: { name: 'tick-1', uid: 'j0', creationTimestamp: '2026-01-01T00:00:00Z', ownerReferences: ref('c1', 'CronJob') } },
    { ...failedJob, metadata: { name: 'tick-2', uid: 'j1', creationTimestamp: '2026-01-01T00:01:00Z', ownerReferences: ref('c1', 'CronJob') } },
  ];
  const links = diagnoseCronJob(cj, jobs, [pod('tick-2-a', 'Failed', exit3)]);
  assert.deepEqual(links.map((l) => l.step), ['stored', 'last job', 'job stored', 'job pods', 'job complete']);
  assert.match(links[1]!.evidence, /job tick-2/);
  assert.equal(diagnoseCronJob({ ...cj, spec: { ...cj.spec!, suspend: true } }, jobs, []).at(-1)!.status, 'info');
});
