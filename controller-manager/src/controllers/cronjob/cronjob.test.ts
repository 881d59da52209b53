import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CronJobs, Jobs, parseCronSchedule, type CronJob, type CronJobSpec } from '@mk8s/api';
import { newControllerFixture, type ControllerFixture } from '@mk8s/client/testing';
import { CronJobController, type CronJobObj, type JobObj } from './cronjob.js';
import { jobNameFor, mostRecentScheduleTime, rfc3339InZone } from './schedule.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const MIN = 60_000;

function cronJob(spec: Partial<CronJobSpec> = {}, status?: CronJob['status'], created = '2026-01-01T00:00:00Z'): CronJobObj {
  return {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'hello', namespace: 'default', uid: 'uid-hello', creationTimestamp: created },
    spec: {
      schedule: '*/5 * * * *', concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1,
      jobTemplate: { metadata: { labels: { team: 'a' } }, spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } }, ...spec,
    },
    ...(status ? { status } : {}),
  } as CronJobObj;
}

function setup(at = T0): { f: ControllerFixture; c: CronJobController } {
  const f = newControllerFixture();
  f.clock.step(at - f.clock.now());
  const c = f.build((ctx) => new CronJobController(ctx));
  return { f, c };
}

async function relist(f: ControllerFixture): Promise<void> {
  for (const r of [CronJobs, Jobs]) {
    const items = (await f.client.resource(r, 'default').list()).items;
    for (const inf of f.informers.informersOf(r)) {
      const names = new Set(items.map((o) => o.metadata.name));
      for (const o of inf.lister.list()) if (!names.has(o.metadata.name)) inf.delete(o);
      for (const o of items) inf.add(o);
    }
  }
  f.client.clearActions();
}
const jobs = async (f: ControllerFixture) => (await f.client.resource<JobObj>(Jobs, 'default').list()).items;
const getCJ = async (f: ControllerFixture) => f.client.resource<CronJobObj>(CronJobs, 'default').get('hello');
async function sync(f: ControllerFixture): Promise<number | undefined> {
  const { result } = await f.reconcile('default/hello');
  await relist(f);
  return result ? result.requeueAfterMs : undefined;
}
async function finishJob(f: ControllerFixture, name: string, type: 'Complete' | 'Failed'): Promise<void> {
  const j = await f.client.resource<JobObj>(Jobs, 'default').get(name);
  const t = new Date(f.clock.now()).toISOString().replace('.000Z', 'Z');
  await f.client.resource<JobObj>(Jobs, 'default').updateStatus({ ...j, status: { startTime: j.metadata.creationTimestamp!, ...(type === 'Complete' ? { completionTime: t, succeeded: 1 } : { failed: 1 }), conditions: [{ type, status: 'True' }] } });
  await relist(f);
}

test('cronjob: schedule helpers: most recent missed time, deterministic names, RFC 3339 in the zone', () => {
  const s = parseCronSchedule('*/5 * * * *');
  assert.deepEqual(mostRecentScheduleTime({ creationMs: T0 }, T0 + 4 * MIN, s, true), { earliestMs: T0, missed: 'none' });
  assert.equal(mostRecentScheduleTime({ creationMs: T0 }, T0 + 12 * MIN, s, true).mostRecentMs, T0 + 10 * MIN);
  assert.equal(mostRecentScheduleTime({ creationMs: T0 }, T0 + 1000 * MIN, s, true).missed, 'many');
  assert.equal(mostRecentScheduleTime({ creationMs: T0, startingDeadlineSeconds: 60 }, T0 + 1000 * MIN, s, true).missed, 'few');
  assert.equal(jobNameFor('hello', T0 + 5 * MIN), `hello-${T0 / MIN + 5}`);
  assert.equal(rfc3339InZone(T0, 'Europe/Berlin'), '2026-01-01T01:00:00+01:00');
  assert.equal(rfc3339InZone(T0), '2026-01-01T00:00:00Z');
  assert.equal(rfc3339InZone(T0, 'America/St_Johns'), '2025-12-31T20:30:00-03:30');
});

test('cronjob: waits for the first activation, then creates <name>-<minutes> owned by the CronJob and requeues for the next', async () => {
  const { f } = setup(T0 + 2 * MIN);
  f.seed(cronJob());
  assert.equal(await sync(f), 3 * MIN + 100);
  assert.equal((await jobs(f)).length, 0);
  f.clock.step(3 * MIN);
  assert.equal(await sync(f), 5 * MIN + 100);
  const [j] = await jobs(f);
  assert.equal(j?.metadata.name, `hello-${T0 / MIN + 5}`);
  assert.equal(j?.metadata.labels?.['team'], 'a');
  assert.equal(j?.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'], '2026-01-01T00:05:00Z');
  assert.deepEqual(j?.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}/${r.controller}`), ['CronJob/hello/true']);
  const cj = await getCJ(f);
  assert.equal(cj.status?.lastScheduleTime, '2026-01-01T00:05:00Z');
  assert.deepEqual(cj.status?.active?.map((r) => r.name), [j?.metadata.name]);
  assert.deepEqual(f.recorder.events, [`Normal SuccessfulCreate Created job ${j?.metadata.name}`]);
  // Nothing more until the next activation.
  assert.equal(await sync(f), 5 * MIN + 100);
  assert.equal((await jobs(f)).length, 1);
});

test('cronjob: across a missed window only the latest activation runs; over 100 missed is TooManyMissedTimes', async () => {
  const { f } = setup(T0 + 23 * MIN);
  f.seed(cronJob({}, { lastScheduleTime: '2026-01-01T00:00:00Z' }));
  await sync(f);
  assert.deepEqual((await jobs(f)).map((j) => j.metadata.name), [jobNameFor('hello', T0 + 20 * MIN)]);
  const late = setup(T0 + 1000 * MIN);
  late.f.seed(cronJob({ schedule: '* * * * *' }));
  await sync(late.f);
  assert.deepEqual((await jobs(late.f)).map((j) => j.metadata.name), [jobNameFor('hello', T0 + 1000 * MIN)]);
  assert.ok(late.f.recorder.events.includes('Warning TooManyMissedTimes too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew'));
});

test('cronjob: startingDeadlineSeconds: an activation older than the deadline is skipped with MissSchedule', async () => {
  const { f } = setup(T0 + 5 * MIN + 30_000);
  f.seed(cronJob({ startingDeadlineSeconds: 10 }));
  await sync(f);
  assert.equal((await jobs(f)).length, 0);
  const cj = await getCJ(f);
  assert.equal(cj.status?.lastScheduleTime, undefined);
  const ok = setup(T0 + 5 * MIN + 5_000);
  ok.f.seed(cronJob({ startingDeadlineSeconds: 10 }));
  await sync(ok.f);
  assert.equal((await jobs(ok.f)).length, 1);
});

for (const tc of [
  { policy: 'Allow' as const, want: 2, events: ['SuccessfulCreate', 'SuccessfulCreate'] },
  { policy: 'Forbid' as const, want: 1, events: ['SuccessfulCreate', 'JobAlreadyActive'] },
  { policy: 'Replace' as const, want: 1, events: ['SuccessfulCreate', 'SuccessfulDelete', 'SuccessfulCreate'] },
]) {
  test(`cronjob: concurrencyPolicy ${tc.policy} with the previous Job still running`, async () => {
    const { f } = setup(T0 + 5 * MIN);
    f.seed(cronJob({ concurrencyPolicy: tc.policy }));
    await sync(f);
    f.clock.step(5 * MIN);
    await sync(f);
    const names = (await jobs(f)).map((j) => j.metadata.name).sort();
    assert.equal(names.length, tc.want, names.join(','));
    if (tc.policy === 'Replace') assert.deepEqual(names, [jobNameFor('hello', T0 + 10 * MIN)]);
    if (tc.policy === 'Forbid') assert.deepEqual(names, [jobNameFor('hello', T0 + 5 * MIN)]);
    assert.deepEqual(f.recorder.events.map((e) => e.split(' ')[1]), tc.events);
    const cj = await getCJ(f);
    assert.equal(cj.status?.active?.length, tc.policy === 'Allow' ? 2 : 1);
  });
}

test('cronjob: suspend stops new Jobs; finished Jobs leave active, set lastSuccessfulTime, and history limits prune', async () => {
  const { f } = setup(T0 + 5 * MIN);
  f.seed(cronJob({ successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 0 }));
  await sync(f);
  await finishJob(f, jobNameFor('hello', T0 + 5 * MIN), 'Complete');
  f.clock.step(5 * MIN);
  await sync(f);
  let cj = await getCJ(f);
  assert.equal(cj.status?.lastSuccessfulTime, '2026-01-01T00:05:00Z');
  assert.deepEqual(cj.status?.active?.map((r) => r.name), [jobNameFor('hello', T0 + 10 * MIN)]);
  await finishJob(f, jobNameFor('hello', T0 + 10 * MIN), 'Complete');
  await sync(f);
  assert.deepEqual((await jobs(f)).map((j) => j.metadata.name), [jobNameFor('hello', T0 + 10 * MIN)], 'only the newest successful Job is kept');
  cj = await getCJ(f);
  assert.equal(cj.status?.active, undefined);
  await f.client.resource<CronJobObj>(CronJobs, 'default').update({ ...cj, spec: { ...cj.spec!, suspend: true } });
  await relist(f);
  f.clock.step(10 * MIN);
  assert.equal(await sync(f), undefined, 'a suspended CronJob is not requeued');
  assert.equal((await jobs(f)).length, 1);
  assert.ok(f.recorder.events.some((e) => e.startsWith('Normal SawCompletedJob Saw completed job: hello-')));
});

test('cronjob: timeZone shifts activations and the scheduled-timestamp annotation', async () => {
  // 09:00 in Berlin is 08:00 UTC in winter.
  const { f } = setup(Date.parse('2026-01-01T08:00:30Z'));
  f.seed(cronJob({ schedule: '0 9 * * *', timeZone: 'Europe/Berlin' }));
  await sync(f);
  const [j] = await jobs(f);
  assert.equal(j?.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'], '2026-01-01T09:00:00+01:00');
});

test('cronjob: a Job made from it by hand (kubectl create job --from) is not adopted into active: UnexpectedJob, Forbid not blocked, success still counts', async () => {
  const { f } = setup(T0 + 2 * MIN);
  f.seed(cronJob({ concurrencyPolicy: 'Forbid' }));
  const manual = {
    apiVersion: 'batch/v1', kind: 'Job',
    metadata: {
      name: 'manual', namespace: 'default', uid: 'uid-manual', creationTimestamp: '2026-01-01T00:02:00Z',
      annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'hello', uid: 'uid-hello', controller: true }],
    },
    spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } },
  } as JobObj;
  f.seed(manual);
  await sync(f);
  assert.equal((await getCJ(f)).status?.active, undefined);
  assert.deepEqual(f.recorder.events, ['Warning UnexpectedJob Saw a job that the controller did not create or forgot: manual']);
  f.clock.step(3 * MIN);
  await sync(f);
  const scheduled = jobNameFor('hello', T0 + 5 * MIN);
  assert.deepEqual((await jobs(f)).map((j) => j.metadata.name).sort(), [scheduled, 'manual'].sort());
  assert.deepEqual((await getCJ(f)).status?.active?.map((r) => r.name), [scheduled], 'Forbid looks at active only');
  await finishJob(f, 'manual', 'Complete');
  await sync(f);
  assert.equal((await getCJ(f)).status?.lastSuccessfulTime, '2026-01-01T00:05:00Z');
});

test('cronjob: a Job it created whose status write was lost is taken back when the activation is retried (AlreadyExists)', async () => {
  const { f } = setup(T0 + 5 * MIN);
  f.seed(cronJob());
  await sync(f);
  const name = jobNameFor('hello', T0 + 5 * MIN);
  // Lose the status write: the CronJob forgets its active Job and lastScheduleTime.
  const cj = await getCJ(f);
  await f.client.resource<CronJobObj>(CronJobs, 'default').updateStatus({ ...cj, status: {} });
  await relist(f);
  f.recorder.events.length = 0;
  await sync(f);
  const after = await getCJ(f);
  assert.deepEqual(after.status?.active?.map((r) => r.name), [name]);
  assert.equal(after.status?.lastScheduleTime, '2026-01-01T00:05:00Z');
  assert.equal((await jobs(f)).length, 1);
  assert.deepEqual(f.recorder.events, [`Warning UnexpectedJob Saw a job that the controller did not create or forgot: ${name}`]);
});
