/**
 * batch/v1 on the real cluster with the real kubectl (issue 16): Jobs run real pods to Complete,
 * an Indexed Job hands each pod its index, a failing Job stops at its backoffLimit, a CronJob
 * creates Jobs on its schedule, `kubectl create job|cronjob` and `create job --from=cronjob/x`
 * work (protobuf bodies), and a controller-manager killed in the middle of a 20-completion Job
 * leaves exactly 20 succeeded pods. One namespace, deleted afterwards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectl, kubectlOk, ROOT, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-batch');
const k = (args: string[], input?: string, timeoutMs?: number) => kubectlOk(['-n', ns, ...args], { ...(input === undefined ? {} : { input }), ...(timeoutMs ? { timeoutMs } : {}) });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (...args: string[]) => JSON.parse(k([...args, '-o', 'json'])) as Record<string, any>;

const podSpec = (command: string, restartPolicy = 'Never') => `
    spec:
      restartPolicy: ${restartPolicy}
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers: [{ name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sh, -c, '${command}'] }]`;
const jobYaml = (name: string, spec: string, command: string) => `
apiVersion: batch/v1
kind: Job
metadata: { name: ${name} }
spec:
${spec}
  template:${podSpec(command)}
`;

describe('batch: Jobs and CronJobs', () => {
  before(() => {
    kubectlOk(['create', 'namespace', ns]);
    // Created first so its first activation (at the next minute) comes while the other tests run.
    k(['apply', '-f', '-'], `
apiVersion: batch/v1
kind: CronJob
metadata: { name: tick }
spec:
  schedule: '* * * * *'
  successfulJobsHistoryLimit: 1
  jobTemplate:
    spec:
      template:${podSpec('echo tick', 'OnFailure').replace(/\n/g, '\n    ')}
`);
  });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('a Job runs a real pod to Complete and kubectl wait --for=condition=complete returns', () => {
    assert.match(k(['apply', '-f', '-'], jobYaml('once', '  backoffLimit: 2', 'echo hello from a job')), /job.batch\/once created/);
    assert.match(k(['wait', '--for=condition=complete', 'job/once', '--timeout=90s'], undefined, 100_000), /job.batch\/once condition met/);
    const job = jsonOf('get', 'job', 'once');
    assert.equal(job.status.succeeded, 1);
    assert.deepEqual(job.status.conditions.map((c: { type: string }) => c.type), ['SuccessCriteriaMet', 'Complete']);
    assert.deepEqual(job.status.uncountedTerminatedPods, {});
    assert.match(k(['get', 'job', 'once']), /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nonce\s+Complete\s+1\/1\s+\d+s\s+\d+s/m);
    const pods = jsonOf('get', 'pods', '-l', 'job-name=once');
    assert.equal(pods.items.length, 1);
    assert.equal(pods.items[0].status.phase, 'Succeeded');
    assert.deepEqual(pods.items[0].metadata.finalizers ?? [], [], 'the tracking finalizer is gone once counted');
    assert.match(k(['logs', 'job/once']), /hello from a job/);
    assert.match(k(['describe', 'job', 'once']), /Normal\s+Completed\s+.*Job completed/);
    assert.match(kubectlOk(['explain', 'job.spec.backoffLimit']), /FIELD: backoffLimit <integer>/);
    assert.match(kubectlOk(['explain', 'cronjob.spec.schedule']), /FIELD: schedule <string>/);
  });

  test('an Indexed Job gives each pod its completion index', () => {
    k(['apply', '-f', '-'], jobYaml('indexed', '  completions: 3\n  parallelism: 3\n  completionMode: Indexed', 'echo index=$JOB_COMPLETION_INDEX host=$(hostname)'));
    k(['wait', '--for=condition=complete', 'job/indexed', '--timeout=90s'], undefined, 100_000);
    const job = jsonOf('get', 'job', 'indexed');
    assert.equal(job.status.completedIndexes, '0-2');
    assert.equal(job.status.succeeded, 3);
    const pods = jsonOf('get', 'pods', '-l', 'job-name=indexed').items as { metadata: { name: string; annotations: Record<string, string> } }[];
    assert.deepEqual(pods.map((p) => p.metadata.annotations['batch.kubernetes.io/job-completion-index']).sort(), ['0', '1', '2']);
    const one = pods.find((p) => p.metadata.annotations['batch.kubernetes.io/job-completion-index'] === '1')!;
    assert.match(k(['logs', one.metadata.name]), /index=1 host=indexed-1/);
  });

  test('a failing Job stops at backoffLimit with BackoffLimitExceeded', () => {
    k(['apply', '-f', '-'], jobYaml('fails', '  backoffLimit: 1', 'exit 3'));
    k(['wait', '--for=condition=failed', 'job/fails', '--timeout=120s'], undefined, 130_000);
    const job = jsonOf('get', 'job', 'fails');
    const failed = job.status.conditions.find((c: { type: string }) => c.type === 'Failed');
    assert.equal(failed.reason, 'BackoffLimitExceeded');
    assert.equal(job.status.failed, 2);
    assert.equal(jsonOf('get', 'pods', '-l', 'job-name=fails').items.length, 2, 'one pod and one retry after the back-off');
    assert.match(k(['get', 'job', 'fails']), /^fails\s+Failed\s+0\/1\s/m);
    assert.match(k(['get', 'events', '--field-selector', 'involvedObject.name=fails']), /BackoffLimitExceeded\s+job\/fails\s+Job has reached the specified backoff limit/);
  });

  test('a killed controller-manager in the middle of a 20-completion Job ends with exactly 20 succeeded pods', async () => {
    k(['apply', '-f', '-'], jobYaml('twenty', '  completions: 20\n  parallelism: 5', 'sleep 1'));
    await waitFor(() => (jsonOf('get', 'job', 'twenty').status?.succeeded ?? 0) >= 4, { timeoutMs: 120_000, what: 'a few completions' });
    // The pid file names the component itself (the cluster's supervisor starts it again).
    const child = Number(readFileSync(join(ROOT, '.mk8s', 'run', 'controller-manager.pid'), 'utf8'));
    assert.ok(child > 0, 'the controller-manager process');
    process.kill(child, 'SIGKILL');
    await waitFor(() => { try { process.kill(child, 0); return false; } catch { return true; } }, { what: 'controller-manager gone' });
    k(['wait', '--for=condition=complete', 'job/twenty', '--timeout=150s'], undefined, 160_000);
    const job = jsonOf('get', 'job', 'twenty');
    assert.equal(job.status.succeeded, 20);
    assert.equal(job.status.failed ?? 0, 0);
    const pods = jsonOf('get', 'pods', '-l', 'job-name=twenty').items as { status: { phase: string }; metadata: { finalizers?: string[] } }[];
    assert.equal(pods.length, 20, 'no extra pods');
    assert.ok(pods.every((p) => p.status.phase === 'Succeeded' && !(p.metadata.finalizers ?? []).length));
  });

  // kubectl's typed client sends these three as protobuf (application/vnd.kubernetes.protobuf).
  test('kubectl create job, create cronjob and create job --from=cronjob/x run to Complete', async () => {
    assert.match(k(['create', 'job', 'made', '--image=busybox:1.36', '--', 'sh', '-c', 'echo made by kubectl create job']), /job.batch\/made created/);
    // January 1st only: no activation while the test runs, the Job comes from --from.
    assert.match(k(['create', 'cronjob', 'yearly', '--image=busybox:1.36', '--schedule=0 0 1 1 *', '--restart=OnFailure', '--', 'sh', '-c', 'echo from the cronjob template']),
      /cronjob.batch\/yearly created/);
    assert.match(k(['create', 'job', 'yearly-now', '--from=cronjob/yearly']), /job.batch\/yearly-now created/);
    for (const name of ['made', 'yearly-now']) {
      assert.match(k(['wait', '--for=condition=complete', `job/${name}`, '--timeout=90s'], undefined, 100_000), new RegExp(`job.batch/${name} condition met`));
    }
    assert.match(k(['logs', 'job/made']), /made by kubectl create job/);
    assert.match(k(['logs', 'job/yearly-now']), /from the cronjob template/);
    assert.equal(jsonOf('get', 'job', 'made').spec.template.spec.restartPolicy, 'Never');

    const cj = jsonOf('get', 'cronjob', 'yearly');
    const manual = jsonOf('get', 'job', 'yearly-now');
    assert.equal(manual.metadata.annotations['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.deepEqual(manual.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'yearly', uid: cj.metadata.uid, controller: true }]);
    assert.deepEqual(manual.spec.template.spec, cj.spec.jobTemplate.spec.template.spec, "the CronJob's pod template");
    assert.equal(manual.status.succeeded, 1);
    // As upstream: the CronJob does not adopt a Job it did not create (UnexpectedJob, not ACTIVE), but
    // its success is the CronJob's lastSuccessfulTime.
    await waitFor(() => jsonOf('get', 'cronjob', 'yearly').status?.lastSuccessfulTime === manual.status.completionTime, { what: 'lastSuccessfulTime from the manual Job' });
    assert.equal(jsonOf('get', 'cronjob', 'yearly').status.active, undefined);
    assert.match(k(['get', 'events', '--field-selector', 'involvedObject.name=yearly']), /UnexpectedJob\s+cronjob\/yearly\s+Saw a job that the controller did not create or forgot: yearly-now/);
  });

  test('a CronJob creates a Job on its schedule', async () => {
    const owned = () => (jsonOf('get', 'jobs').items as { metadata: { name: string; ownerReferences?: { kind: string; name: string }[] } }[])
      .filter((j) => j.metadata.ownerReferences?.some((r) => r.kind === 'CronJob' && r.name === 'tick'));
    const [first] = await waitFor(() => owned().length ? owned() : undefined, { timeoutMs: 80_000, what: 'a Job from the CronJob' });
    assert.match(first!.metadata.name, /^tick-\d+$/);
    await waitFor(() => jsonOf('get', 'cronjob', 'tick').status?.lastScheduleTime, { what: 'lastScheduleTime' });
    assert.match(k(['get', 'cronjob', 'tick']), /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\ntick\s+\* \* \* \* \*\s+<none>\s+False\s+\d+\s+\d+s/m);
  });
});
