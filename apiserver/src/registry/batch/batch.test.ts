import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../../testing/memory-storage.js';
import { buildApiServer } from '../../server.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')) });
  await app.ready();
  t.after(() => app.close());
  return app;
}
const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const CRONJOBS = '/apis/batch/v1/namespaces/default/cronjobs';
const template = (restartPolicy: string | undefined = 'Never') => ({ spec: { ...(restartPolicy ? { restartPolicy } : {}), containers: [{ name: 'c', image: 'busybox' }] } });
const job = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { template: template(), ...spec } });
const cronJob = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name }, spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: template('OnFailure') } }, ...spec },
});

test('batch: a Job gets upstream defaults, a generated selector and job-name/controller-uid labels', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: JOBS, payload: job('pi') });
  assert.equal(res.statusCode, 201, res.body);
  const j = res.json();
  const uid = j.metadata.uid;
  assert.equal(j.spec.completions, 1);
  assert.equal(j.spec.parallelism, 1);
  assert.equal(j.spec.backoffLimit, 6);
  assert.equal(j.spec.completionMode, 'NonIndexed');
  assert.equal(j.spec.suspend, false);
  assert.equal(j.spec.podReplacementPolicy, 'TerminatingOrFailed');
  assert.deepEqual(j.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
  const labels = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'pi', 'controller-uid': uid, 'job-name': 'pi' };
  assert.deepEqual(j.spec.template.metadata.labels, labels);
  assert.deepEqual(j.metadata.labels, labels);
  assert.deepEqual(j.status, {});
  assert.equal(j.metadata.generation, 1);
});

test('batch: parallelism alone leaves completions unset', async (t) => {
  const app = await setup(t);
  const j = (await app.inject({ method: 'POST', url: JOBS, payload: job('w', { parallelism: 3 }) })).json();
  assert.equal(j.spec.completions, undefined);
  assert.equal(j.spec.parallelism, 3);
});

for (const tc of [
  { name: 'restartPolicy Always', body: job('x', { template: template('') }), causes: ['spec.template.spec.restartPolicy'], msg: /Unsupported value: "Always": supported values: "OnFailure", "Never"/ },
  { name: 'Indexed without completions', body: job('x', { completionMode: 'Indexed', parallelism: 2 }), causes: ['spec.completions'], msg: /Required value: when completion mode is Indexed/ },
  { name: 'negative backoffLimit', body: job('x', { backoffLimit: -1 }), causes: ['spec.backoffLimit'], msg: /must be greater than or equal to 0/ },
  { name: 'a selector of the wrong uid', body: job('x', { selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'nope' } } }), causes: ['spec.selector', 'spec.template.metadata.labels'], msg: /`selector` not auto-generated/ },
  { name: 'a manual selector that does not match', body: job('x', { manualSelector: true, selector: { matchLabels: { a: 'b' } } }), causes: ['spec.template.metadata.labels'], msg: /`selector` does not match template `labels`/ },
  { name: 'podFailurePolicy with OnFailure', body: job('x', { template: template('OnFailure'), podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [1] } }] } }), causes: ['spec.template.spec.restartPolicy'], msg: /only "Never" is supported when podFailurePolicy is specified/ },
  { name: 'podFailurePolicy exit code 0 with In, unordered', body: job('x', { podFailurePolicy: { rules: [{ action: 'Ignore', onExitCodes: { operator: 'In', values: [3, 0] } }] } }), causes: ['spec.podFailurePolicy.rules[0].onExitCodes.values[1]', 'spec.podFailurePolicy.rules[0].onExitCodes.values[1]'], msg: /must not be 0 for the In operator/ },
  { name: 'a bad cron schedule', url: CRONJOBS, body: cronJob('c', { schedule: '61 * * * *' }), causes: ['spec.schedule'], msg: /spec.schedule: Invalid value: "61 \* \* \* \*"/ },
  { name: 'TZ in the schedule', url: CRONJOBS, body: cronJob('c', { schedule: 'TZ=UTC 0 * * * *' }), causes: ['spec.schedule'], msg: /cannot use TZ or CRON_TZ in schedule, use timeZone field instead/ },
  { name: 'an unknown time zone', url: CRONJOBS, body: cronJob('c', { timeZone: 'Mars/Olympus' }), causes: ['spec.timeZone'], msg: /unknown time zone Mars\/Olympus/ },
  { name: 'a bad concurrencyPolicy', url: CRONJOBS, body: cronJob('c', { concurrencyPolicy: 'Sometimes' }), causes: ['spec.concurrencyPolicy'], msg: /supported values: "Allow", "Forbid", "Replace"/ },
  { name: 'a CronJob name over 52 characters', url: CRONJOBS, body: cronJob('c'.repeat(53)), causes: ['metadata.name'], msg: /must be no more than 52 characters/ },
]) {
  test(`batch: rejects ${tc.name} with 422 Invalid`, async (t) => {
    const app = await setup(t);
    const res = await app.inject({ method: 'POST', url: tc.url ?? JOBS, payload: tc.body });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().reason, 'Invalid');
    assert.deepEqual(res.json().details.causes.map((c: { field: string }) => c.field).sort(), [...tc.causes].sort());
    assert.match(res.json().message, tc.msg);
  });
}

test('batch: Job spec fields are immutable, status is written only through /status', async (t) => {
  const app = await setup(t);
  const j = (await app.inject({ method: 'POST', url: JOBS, payload: job('pi', { completions: 2 }) })).json();
  const bad = await app.inject({ method: 'PUT', url: `${JOBS}/pi`, payload: { ...j, spec: { ...j.spec, completions: 3 } } });
  assert.equal(bad.statusCode, 422);
  assert.deepEqual(bad.json().details.causes.map((c: { field: string }) => c.field), ['spec.completions']);
  const ok = await app.inject({ method: 'PUT', url: `${JOBS}/pi`, payload: { ...j, spec: { ...j.spec, parallelism: 5 }, status: { succeeded: 9 } } });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json().spec.parallelism, 5);
  assert.deepEqual(ok.json().status, {});
  const st = await app.inject({ method: 'PUT', url: `${JOBS}/pi/status`, payload: { ...(ok.json() as object), status: { active: 1, startTime: '2026-01-01T00:00:00Z' } } });
  assert.equal(st.statusCode, 200, st.body);
  assert.equal(st.json().status.active, 1);
});

test('batch: a suspended Job that never started may change its scheduling directives', async (t) => {
  const app = await setup(t);
  const j = (await app.inject({ method: 'POST', url: JOBS, payload: job('pi', { suspend: true }) })).json();
  const next = structuredClone(j);
  next.spec.template.spec.nodeSelector = { zone: 'a' };
  const res = await app.inject({ method: 'PUT', url: `${JOBS}/pi`, payload: next });
  assert.equal(res.statusCode, 200, res.body);
  next.spec.template.spec.containers[0].image = 'other';
  next.metadata.resourceVersion = res.json().metadata.resourceVersion;
  assert.equal((await app.inject({ method: 'PUT', url: `${JOBS}/pi`, payload: next })).statusCode, 422);
});

test('batch: a CronJob gets upstream defaults; tables have kubectl columns', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: CRONJOBS, payload: cronJob('hello', { timeZone: 'Europe/Berlin' }) });
  assert.equal(res.statusCode, 201, res.body);
  const cj = res.json();
  assert.equal(cj.spec.concurrencyPolicy, 'Allow');
  assert.equal(cj.spec.suspend, false);
  assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
  assert.equal(cj.spec.failedJobsHistoryLimit, 1);
  assert.equal(cj.spec.jobTemplate.spec.backoffLimit, undefined);
  const accept = 'application/json;as=Table;g=meta.k8s.io;v=v1';
  const cjt = (await app.inject({ method: 'GET', url: CRONJOBS, headers: { accept } })).json();
  assert.deepEqual(cjt.columnDefinitions.map((c: { name: string }) => c.name).slice(0, 7), ['Name', 'Schedule', 'Timezone', 'Suspend', 'Active', 'Last Schedule', 'Age']);
  assert.deepEqual(cjt.rows[0].cells.slice(0, 6), ['hello', '*/5 * * * *', 'Europe/Berlin', 'False', 0, '<none>']);
  await app.inject({ method: 'POST', url: JOBS, payload: job('pi') });
  const jt = (await app.inject({ method: 'GET', url: JOBS, headers: { accept } })).json();
  assert.deepEqual(jt.columnDefinitions.map((c: { name: string }) => c.name).slice(0, 5), ['Name', 'Status', 'Completions', 'Duration', 'Age']);
  assert.deepEqual(jt.rows[0].cells.slice(0, 3), ['pi', 'Running', '0/1']);
});

test('batch: discovery lists jobs and cronjobs (shortName cj) under batch/v1', async (t) => {
  const app = await setup(t);
  const res = (await app.inject({ method: 'GET', url: '/apis/batch/v1' })).json();
  const names = res.resources.map((r: { name: string }) => r.name).sort();
  assert.deepEqual(names, ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']);
  assert.deepEqual(res.resources.find((r: { name: string }) => r.name === 'cronjobs').shortNames, ['cj']);
});
