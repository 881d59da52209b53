import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@mk8s/api';
import type * as batch from 'kubernetes-types/batch/v1.js';
import { diagnoseCronJob, diagnoseJob } from './batch.js';
import { describeCronJob, describeJob } from '../kubectl/describe/batch-describers.js';

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

test('describe job and cronjob print kubectl\'s fields', () => {
  const d = describeJob({ metadata: { name: 'pi', namespace: 'default' }, spec: { parallelism: 1, completions: 3, completionMode: 'Indexed', backoffLimit: 6, template: {} }, status: { active: 1, ready: 1, succeeded: 2, completedIndexes: '0,1', startTime: '2026-01-01T00:00:00Z' } }, [], Date.parse('2026-01-01T00:00:30Z'));
  assert.match(d, /Completion Mode:\s+Indexed/);
  assert.match(d, /Pods Statuses:\s+1 Active \(1 Ready\) \/ 2 Succeeded \/ 0 Failed/);
  assert.match(d, /Completed Indexes:\s+0,1/);
  assert.match(d, /Duration:\s+30s/);
  const c = describeCronJob({ metadata: { name: 'tick', namespace: 'default' }, spec: { schedule: '* * * * *', concurrencyPolicy: 'Forbid', suspend: false, jobTemplate: { spec: { template: {} } } }, status: { active: [{ name: 'tick-1' }] } }, [], 0);
  assert.match(c, /Schedule:\s+\* \* \* \* \*/);
  assert.match(c, /Concurrency Policy:\s+Forbid/);
  assert.match(c, /Active Jobs:\s+tick-1/);
});
