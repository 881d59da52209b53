import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultJobSpec, generateJobSelector, JOB_TRACKING_FINALIZER, Jobs, Pods, type Job, type JobSpec, type Pod } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import { JobController, type JobObj, type PodObj } from './job.js';
import { formatIndexes, parseIndexes } from './indexes.js';
import { nextBackoffRecord, remainingBackoffMs } from './decisions.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function job(name: string, spec: Partial<JobSpec> = {}, status?: Job['status']): JobObj {
  const j = {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } }, ...spec },
    ...(status ? { status } : {}),
  } as JobObj;
  defaultJobSpec(j.spec!);
  generateJobSelector(j);
  return j;
}

function setup(): { f: ControllerFixture; c: JobController } {
  const f = newControllerFixture();
  f.clock.step(T0 - f.clock.now());
  const c = f.build((ctx) => new JobController(ctx));
  return { f, c };
}

/** What a watch would deliver: the informers catch up with the fake apiserver. */
async function relist(f: ControllerFixture): Promise<void> {
  for (const r of [Jobs, Pods]) {
    const items = (await f.client.resource(r, 'default').list()).items;
    for (const inf of f.informers.informersOf(r)) {
      const names = new Set(items.map((o) => o.metadata.name));
      for (const o of inf.lister.list()) if (!names.has(o.metadata.name)) inf.delete(o);
      for (const o of items) inf.add(o);
    }
  }
  f.client.clearActions();
}

async function sync(f: ControllerFixture, key = 'default/pi'): Promise<number | undefined> {
  const { result } = await f.reconcile(key);
  await relist(f);
  return result ? result.requeueAfterMs : undefined;
}

const pods = async (f: ControllerFixture): Promise<PodObj[]> => (await f.client.resource<PodObj>(Pods, 'default').list()).items;
const getJob = async (f: ControllerFixture, name = 'pi'): Promise<JobObj> => f.client.resource<JobObj>(Jobs, 'default').get(name);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The kubelet's part: a pod ends with exit code, finished now. */
async function finish(f: ControllerFixture, p: PodObj, phase: 'Succeeded' | 'Failed', o: { exitCode?: number; conditions?: Pod['status'] extends infer S ? S extends { conditions?: infer C } ? C : never : never } = {}): Promise<void> {
  const exitCode = o.exitCode ?? (phase === 'Succeeded' ? 0 : 1);
  await f.client.resource<PodObj>(Pods, 'default').updateStatus({
    ...p, status: {
      phase, ...(o.conditions ? { conditions: o.conditions } : {}),
      containerStatuses: [{ name: 'c', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, startedAt: iso(f.clock.now()), finishedAt: iso(f.clock.now()) } } }],
    },
  } as PodObj);
}

const conds = (j: JobObj) => (j.status?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);

test('job: pure helpers: completed indexes as upstream prints them, exponential back-off capped', () => {
  assert.equal(formatIndexes([0, 1, 2, 4, 6, 7]), '0-2,4,6,7');
  assert.deepEqual(parseIndexes('0-2,4,6,7,9', 8), [0, 1, 2, 4, 6, 7]);
  const failed = (ms: number) => ({ metadata: {}, status: { phase: 'Failed', containerStatuses: [{ name: 'c', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1, finishedAt: iso(ms) } } }] } }) as Pod;
  let rec = nextBackoffRecord(undefined, [], [failed(T0)], T0);
  assert.equal(remainingBackoffMs(rec, T0), 10_000);
  rec = nextBackoffRecord(rec, [], [failed(T0 + 10_000)], T0);
  assert.equal(remainingBackoffMs(rec, T0 + 10_000), 20_000);
  rec = { failuresAfterLastSuccess: 12, lastFailureTimeMs: T0 };
  assert.equal(remainingBackoffMs(rec, T0), 6 * 60_000);
});

test('job: creates parallelism pods with the tracking finalizer and the Job as controller', async () => {
  const { f } = setup();
  f.seed(job('pi', { completions: 5, parallelism: 2 }));
  await f.reconcile('default/pi');
  assert.deepEqual(f.actions({ writesOnly: true }), ['create pods', 'create pods', 'update jobs/status']);
  const p = (await pods(f))[0]!;
  assert.equal(p.metadata.generateName, 'pi-');
  assert.deepEqual(p.metadata.finalizers, [JOB_TRACKING_FINALIZER]);
  assert.equal(p.metadata.labels?.['batch.kubernetes.io/job-name'], 'pi');
  assert.deepEqual(p.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}/${r.controller}`), ['Job/pi/true']);
  const j = await getJob(f);
  assert.equal(j.status?.active, 2);
  assert.equal(j.status?.startTime, '2026-01-01T00:00:00Z');
  assert.deepEqual(j.status?.uncountedTerminatedPods, {});
  assert.match(f.recorder.events[0] ?? '', /^Normal SuccessfulCreate Created pod: pi-/);
});

test('job: pods failing until backoffLimit: re-created after 10 s, 20 s, then BackoffLimitExceeded', async () => {
  const { f } = setup();
  f.seed(job('pi', { backoffLimit: 2 }));
  await sync(f);
  const waits: (number | undefined)[] = [];
  for (let round = 0; round < 3; round++) {
    const active = (await pods(f)).filter((p) => !p.status?.phase?.match(/Succeeded|Failed/));
    assert.equal(active.length, 1, `round ${round}: one pod runs`);
    await finish(f, active[0]!, 'Failed');
    await relist(f);
    const wait = await sync(f);
    waits.push(wait);
    if (round < 2) {
      assert.equal((await pods(f)).filter((p) => !p.status?.phase).length, 0, 'no pod re-created during the back-off');
      f.clock.step(wait!);
      await sync(f);
    }
  }
  assert.deepEqual(waits.slice(0, 2), [10_000, 20_000]);
  const j = await getJob(f);
  assert.equal(j.status?.failed, 3);
  assert.deepEqual(conds(j), ['FailureTarget=True/BackoffLimitExceeded', 'Failed=True/BackoffLimitExceeded']);
  assert.equal(j.status?.conditions?.[1]?.message, 'Job has reached the specified backoff limit');
  assert.ok(f.recorder.events.includes('Warning BackoffLimitExceeded Job has reached the specified backoff limit'));
  assert.ok((await pods(f)).every((p) => !p.metadata.finalizers?.length), 'every finalizer removed');
  assert.equal((await pods(f)).length, 3);
});

test('job: an Indexed Job runs each index once, with the index annotation, env and hostname, and completes', async () => {
  const { f } = setup();
  f.seed(job('pi', { completions: 3, parallelism: 2, completionMode: 'Indexed' }));
  await sync(f);
  let ps = await pods(f);
  assert.deepEqual(ps.map((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index']).sort(), ['0', '1']);
  const p1 = ps.find((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '1')!;
  assert.equal(p1.metadata.generateName, 'pi-1-');
  assert.equal(p1.metadata.labels?.['batch.kubernetes.io/job-completion-index'], '1');
  assert.equal(p1.spec?.hostname, 'pi-1');
  assert.deepEqual(p1.spec?.containers[0]?.env, [{ name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } } }]);
  await finish(f, p1, 'Succeeded');
  await relist(f);
  await sync(f);
  let j = await getJob(f);
  assert.equal(j.status?.completedIndexes, '1');
  assert.equal(j.status?.succeeded, 1);
  ps = await pods(f);
  assert.deepEqual(ps.filter((p) => !p.status?.phase).map((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index']).sort(), ['0', '2']);
  for (const p of ps.filter((x) => !x.status?.phase)) await finish(f, p, 'Succeeded');
  await relist(f);
  await sync(f);
  j = await getJob(f);
  assert.equal(j.status?.completedIndexes, '0-2');
  assert.equal(j.status?.succeeded, 3);
  assert.deepEqual(conds(j), ['SuccessCriteriaMet=True/CompletionsReached', 'Complete=True/CompletionsReached']);
  assert.equal(j.status?.completionTime, '2026-01-01T00:00:00Z');
  assert.ok(f.recorder.events.includes('Normal Completed Job completed'));
  assert.equal((await pods(f)).length, 3);
});

test('job: suspend deletes active pods without counting them; resume re-creates and resets startTime', async () => {
  const { f } = setup();
  f.seed(job('pi', { completions: 4, parallelism: 2 }));
  await sync(f);
  const j0 = await getJob(f);
  await f.client.resource<JobObj>(Jobs, 'default').update({ ...j0, spec: { ...j0.spec!, suspend: true } });
  await relist(f);
  await f.reconcile('default/pi');
  assert.deepEqual(f.actions({ writesOnly: true }).sort(), ['delete pods', 'delete pods', 'patch pods', 'patch pods', 'update jobs/status']);
  await relist(f);
  let j = await getJob(f);
  assert.equal((await pods(f)).length, 0);
  assert.equal(j.status?.active, 0);
  assert.equal(j.status?.failed ?? 0, 0);
  assert.deepEqual(conds(j), ['Suspended=True/JobSuspended']);
  assert.ok(f.recorder.events.includes('Normal Suspended Job suspended'));
  f.clock.step(60_000);
  await f.client.resource<JobObj>(Jobs, 'default').update({ ...j, spec: { ...j.spec!, suspend: false } });
  await relist(f);
  await sync(f);
  j = await getJob(f);
  assert.equal((await pods(f)).length, 2);
  assert.deepEqual(conds(j), ['Suspended=False/JobResumed']);
  assert.equal(j.status?.startTime, '2026-01-01T00:01:00Z');
  assert.ok(f.recorder.events.includes('Normal Resumed Job resumed'));
});

test('job: activeDeadlineSeconds requeues until the deadline, then fails the Job with DeadlineExceeded', async () => {
  const { f } = setup();
  f.seed(job('pi', { activeDeadlineSeconds: 30, parallelism: 2, completions: 2 }));
  assert.equal(await sync(f), 30_000);
  f.clock.step(30_000);
  await sync(f);
  let j = await getJob(f);
  assert.deepEqual(conds(j), ['FailureTarget=True/DeadlineExceeded']);
  let ps = await pods(f);
  assert.ok(ps.every((p) => p.metadata.deletionTimestamp), 'active pods deleted');
  // The kubelet stops them; the controller counts them as failed and marks the Job Failed.
  for (const p of ps) await finish(f, p, 'Failed');
  await relist(f);
  await sync(f);
  j = await getJob(f);
  assert.deepEqual(conds(j), ['FailureTarget=True/DeadlineExceeded', 'Failed=True/DeadlineExceeded']);
  assert.equal(j.status?.failed, 2);
  assert.ok(f.recorder.events.includes('Warning DeadlineExceeded Job was active longer than specified deadline'));
  ps = await pods(f);
  assert.equal(ps.length, 0, 'pods without finalizers are gone');
});

test('job: podFailurePolicy: Ignore does not count, FailJob fails at once with the rule in the message', async () => {
  const { f } = setup();
  f.seed(job('pi', {
    completions: 1, backoffLimit: 6,
    podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } }, { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] },
  }));
  await sync(f);
  await finish(f, (await pods(f))[0]!, 'Failed', { exitCode: 137, conditions: [{ type: 'DisruptionTarget', status: 'True' }] });
  await relist(f);
  const wait = await sync(f);
  let j = await getJob(f);
  assert.equal(j.status?.failed ?? 0, 0, 'ignored failure not counted');
  // Ignored failures still feed the pod back-off, as upstream's newBackoffRecord.
  assert.equal(wait, 10_000);
  f.clock.step(wait!);
  await sync(f);
  const next = (await pods(f)).find((p) => !p.status?.phase)!;
  assert.ok(next, 'replacement created after the back-off');
  await finish(f, next, 'Failed', { exitCode: 42 });
  await relist(f);
  await sync(f);
  await sync(f);
  j = await getJob(f);
  assert.deepEqual(conds(j), ['FailureTarget=True/PodFailurePolicy', 'Failed=True/PodFailurePolicy']);
  assert.equal(j.status?.conditions?.[0]?.message, `Container c for pod default/${next.metadata.name} failed with exit code 42 matching FailJob rule at index 0`);
  assert.equal(j.status?.failed, 1);
});

test('job: a restarted controller counts each finished pod exactly once (uncountedTerminatedPods)', async () => {
  const { f } = setup();
  // State left by a controller killed between its two writes: a's uid recorded and its finalizer
  // removed, b's uid recorded but its finalizer still on, c finished and not yet recorded.
  const j = f.seed(job('pi', { completions: 4, parallelism: 4 }, { active: 1, succeeded: 0, startTime: '2026-01-01T00:00:00Z', uncountedTerminatedPods: { succeeded: ['uid-a', 'uid-b'] } }));
  const owned = (name: string, finalizer: boolean, phase?: string): PodObj => ({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { ...j.spec!.template.metadata!.labels }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: j.metadata.uid!, controller: true, blockOwnerDeletion: true }], ...(finalizer ? { finalizers: [JOB_TRACKING_FINALIZER] } : {}) },
    spec: { containers: [{ name: 'c', image: 'busybox' }] }, status: phase ? { phase } : {},
  } as PodObj);
  f.seed(owned('a', false, 'Succeeded'), owned('b', true, 'Succeeded'), owned('c', true, 'Succeeded'), owned('d', true, 'Running'));
  await sync(f);
  let cur = await getJob(f);
  assert.equal(cur.status?.succeeded, 3);
  assert.deepEqual(cur.status?.uncountedTerminatedPods, {});
  // A second controller instance (another restart) with the same state changes nothing.
  const again = f.build((ctx) => new JobController(ctx));
  await again.reconcile('default/pi', AbortSignal.timeout(5_000));
  await relist(f);
  cur = await getJob(f);
  assert.equal(cur.status?.succeeded, 3);
  assert.equal((await pods(f)).filter((p) => !p.status?.phase).length, 0, 'no extra pod: d still runs for the last completion');
  await finish(f, (await pods(f)).find((p) => p.metadata.name === 'd')!, 'Succeeded');
  await relist(f);
  await sync(f);
  cur = await getJob(f);
  assert.equal(cur.status?.succeeded, 4);
  assert.deepEqual(conds(cur), ['SuccessCriteriaMet=True/CompletionsReached', 'Complete=True/CompletionsReached']);
  assert.ok((await pods(f)).every((p) => !p.metadata.finalizers?.length));
});

test('job: pods of a deleted Job lose the tracking finalizer', async () => {
  const { f } = setup();
  f.seed({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pi-x', namespace: 'default', finalizers: [JOB_TRACKING_FINALIZER], ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: 'gone', controller: true }] }, spec: { containers: [{ name: 'c', image: 'b' }] } } as PodObj);
  await f.reconcile('default/pi');
  assert.deepEqual(f.actions({ writesOnly: true }), ['patch pods']);
  assert.deepEqual((await pods(f))[0]!.metadata.finalizers ?? [], []);
});
