/**
 * The kubelet on a real one-node cluster (`make up`): pods on real Docker through the CRI shim,
 * probes, restart policy and back-off, image pull errors, graceful and forced deletion, adoption
 * after a kubelet restart, OOMKilled, and the real kubectl logs/exec through the apiserver proxy.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, kubectlStream, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-kubelet');
let node = '';

interface ContainerStatus {
  name: string; ready: boolean; restartCount: number; containerID?: string;
  state?: { waiting?: { reason?: string; message?: string }; running?: unknown; terminated?: { exitCode: number; reason?: string } };
  lastState?: { terminated?: { exitCode: number; reason?: string } };
}
interface PodJson {
  metadata: { name: string; uid: string };
  status?: { phase?: string; podIP?: string; hostIP?: string; conditions?: { type: string; status: string }[]; containerStatuses?: ContainerStatus[] };
}

const getPod = (name: string): PodJson | undefined => {
  const r = kubectl(['-n', ns, 'get', 'pod', name, '-o', 'json']);
  return r.code === 0 ? JSON.parse(r.stdout) as PodJson : undefined;
};
const cs0 = (name: string) => getPod(name)?.status?.containerStatuses?.[0];
const apply = (yaml: string) => kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: yaml });
const podYaml = (name: string, containerYaml: string, extra = '') => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  nodeName: ${node}
  terminationGracePeriodSeconds: 10
${extra}
  containers:
${containerYaml}`;
const events = (name: string) => kubectlOk(['-n', ns, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}']);

before(() => {
  node = kubectlOk(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
  assert.ok(node, 'a node is registered');
  // `kubectl create namespace` sends protobuf; apply sends JSON.
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
});
after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

test('a pod reaches Running with a podIP and Ready follows its readiness probe', async () => {
  apply(podYaml('ready', `
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "touch /tmp/ready; sleep 20; rm /tmp/ready; exec sleep 3600"]
    readinessProbe: {exec: {command: [test, -f, /tmp/ready]}, periodSeconds: 1, failureThreshold: 1}`));
  const p = await waitFor(() => { const x = getPod('ready'); return x?.status?.phase === 'Running' && x.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? x : undefined; }, { timeoutMs: 120_000, what: 'Ready' });
  assert.match(p.status?.podIP ?? '', /^10\.244\./);
  assert.ok(p.status?.hostIP);
  await waitFor(() => getPod('ready')?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False', { timeoutMs: 30_000, what: 'not Ready after the probe fails' });
  assert.equal(getPod('ready')?.status?.phase, 'Running');
  assert.match(events('ready'), /Unhealthy: Readiness probe failed/);
});

test('a crashing container goes to CrashLoopBackOff with growing intervals', async () => {
  apply(podYaml('crash', `
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "echo crashing; exit 1"]`));
  const first = await waitFor(() => { const c = cs0('crash'); return c?.state?.waiting?.reason === 'CrashLoopBackOff' ? c : undefined; }, { timeoutMs: 120_000, what: 'CrashLoopBackOff' });
  // Upstream: the first restart is immediate, then each back-off window (10 s, 20 s, ...) is
  // reported while it lasts. The 10 s window once never reached the API: a container gone before
  // its start was read back had its death taken for an echo of that sync (kubelet README).
  assert.match(first.state?.waiting?.message ?? '', /^back-off 10s restarting failed container=c pod=crash_/);
  assert.equal(first.lastState?.terminated?.exitCode, 1);
  assert.equal(first.restartCount, 1);
  const second = await waitFor(() => { const c = cs0('crash'); return /^back-off 20s/.test(c?.state?.waiting?.message ?? '') ? c : undefined; }, { timeoutMs: 90_000, what: 'back-off 20s' });
  assert.equal(second.lastState?.terminated?.exitCode, 1);
  assert.ok(second.restartCount >= 2);
  assert.match(events('crash'), /BackOff: Back-off restarting failed container c in pod crash_/);
});

test('a failing liveness probe restarts the container', async () => {
  apply(podYaml('live', `
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "touch /tmp/alive; sleep 4; rm /tmp/alive; exec sleep 3600"]
    livenessProbe: {exec: {command: [test, -f, /tmp/alive]}, periodSeconds: 1, failureThreshold: 2}`));
  await waitFor(() => (cs0('live')?.restartCount ?? 0) >= 1, { timeoutMs: 120_000, what: 'a liveness restart' });
  const ev = events('live');
  assert.match(ev, /Unhealthy: Liveness probe failed/);
  assert.match(ev, /Killing: Container c failed liveness probe, will be restarted/);
});

test('an unknown image gives ErrImagePull, then ImagePullBackOff', async () => {
  apply(podYaml('badimg', `
  - name: c
    image: mk8s-e2e/does-not-exist:1.0`));
  await waitFor(() => cs0('badimg')?.state?.waiting?.reason === 'ImagePullBackOff', { timeoutMs: 120_000, what: 'ImagePullBackOff' });
  const ev = events('badimg');
  assert.match(ev, /Failed: Error: ErrImagePull/);
  assert.match(ev, /BackOff: Back-off pulling image "mk8s-e2e\/does-not-exist:1.0"/);
  assert.equal(getPod('badimg')?.status?.phase, 'Pending');
});

test('a 32Mi memory limit exceeded gives OOMKilled', async () => {
  apply(podYaml('oom', `
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "tail /dev/zero"]
    resources: {limits: {memory: 32Mi}}`, '  restartPolicy: Never'));
  const c = await waitFor(() => { const x = cs0('oom'); return x?.state?.terminated ? x : undefined; }, { timeoutMs: 120_000, what: 'terminated' });
  assert.equal(c.state?.terminated?.reason, 'OOMKilled');
  assert.equal(c.state?.terminated?.exitCode, 137);
  assert.equal(getPod('oom')?.status?.phase, 'Failed');
});

test('real kubectl logs, logs -f, logs --previous, exec with exit code, exec -i and -it', async () => {
  apply(podYaml('logs', `
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "echo first-$(cat /proc/sys/kernel/random/uuid | cut -c1-4); i=0; while true; do i=$((i+1)); echo tick-$i; [ -f /tmp/stop ] && exit 1; sleep 1; done"]`));
  await waitFor(() => cs0('logs')?.state?.running, { timeoutMs: 120_000, what: 'Running' });
  const out = await waitFor(() => { const r = kubectl(['-n', ns, 'logs', 'logs']); return r.code === 0 && r.stdout.includes('tick-2') ? r.stdout : undefined; }, { what: 'logs' });
  assert.match(out, /^first-/);
  const tail = kubectlOk(['-n', ns, 'logs', 'logs', '--tail=1']);
  assert.equal(tail.trim().split('\n').length, 1);

  const f = kubectlStream(['-n', ns, 'logs', '-f', 'logs']);
  const n = Number(/tick-(\d+)\s*$/.exec(out)?.[1] ?? 0);
  await waitFor(() => f.output().includes(`tick-${n + 2}\n`), { what: 'follow shows new lines' });
  await f.stop();

  const ex = kubectl(['-n', ns, 'exec', 'logs', '--', 'sh', '-c', 'echo from-exec; exit 3'], { timeoutMs: 120_000 });
  assert.equal(ex.code, 3);
  assert.equal(ex.stdout, 'from-exec\n');
  assert.match(ex.stderr, /command terminated with exit code 3/);
  const exi = kubectl(['-n', ns, 'exec', '-i', 'logs', '--', 'sh', '-c', 'cat; exit 0'], { input: 'piped-input\n', timeoutMs: 120_000 });
  assert.equal(exi.code, 0);
  assert.equal(exi.stdout, 'piped-input\n');
  const tty = spawnSync('script', ['-qec', `kubectl --kubeconfig ${KUBECONFIG} -n ${ns} exec -it logs -- sh -c 'tty; exit 5'`, '/dev/null'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(tty.status, 5);
  assert.match(tty.stdout, /\/dev\/pts\/\d+/);

  // --previous: the container exits (asked through exec; PID 1 ignores SIGTERM), restarts, and
  // the old log stays readable.
  const firstLine = out.split('\n')[0]!;
  kubectlOk(['-n', ns, 'exec', 'logs', '--', 'touch', '/tmp/stop'], { timeoutMs: 120_000 });
  await waitFor(() => (cs0('logs')?.restartCount ?? 0) >= 1 && cs0('logs')?.state?.running, { timeoutMs: 120_000, what: 'restart' });
  const prev = kubectlOk(['-n', ns, 'logs', 'logs', '--previous']);
  assert.equal(prev.split('\n')[0], firstLine);
});

test('delete stops the container within the grace period; --grace-period=0 --force works', async () => {
  apply(podYaml('grace', `
  - name: c
    image: mk8s/testserver:1.0
    env: [{name: TERM_DELAY_MS, value: "1500"}]`));
  await waitFor(() => cs0('grace')?.state?.running, { timeoutMs: 120_000, what: 'Running' });
  const id = (cs0('grace')?.containerID ?? '').replace('docker://', '');
  const t0 = Date.now();
  kubectlOk(['-n', ns, 'delete', 'pod', 'grace', '--wait=true'], { timeoutMs: 60_000 });
  const took = Date.now() - t0;
  // Within the 10 s grace period plus the time kubectl and the kubelet need to see each other.
  assert.ok(took < 20_000, `delete took ${took} ms`);
  const state = spawnSync('docker', ['inspect', '-f', '{{.State.Running}} {{.State.ExitCode}}', id], { encoding: 'utf8' });
  assert.ok(state.status !== 0 || state.stdout.startsWith('false'), `container still running: ${state.stdout}`);
  assert.match(events('grace'), /Killing: Stopping container c/);

  apply(podYaml('force', `
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]`));
  await waitFor(() => cs0('force')?.state?.running, { timeoutMs: 120_000, what: 'Running' });
  const fid = (cs0('force')?.containerID ?? '').replace('docker://', '');
  kubectlOk(['-n', ns, 'delete', 'pod', 'force', '--grace-period=0', '--force']);
  assert.equal(getPod('force'), undefined);
  await waitFor(() => spawnSync('docker', ['inspect', fid]).status !== 0, { timeoutMs: 30_000, what: 'container removed' });
});

test('killing and restarting the kubelet leaves running containers running', async () => {
  apply(podYaml('adopt', `
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]`));
  await waitFor(() => cs0('adopt')?.ready, { timeoutMs: 120_000, what: 'Ready' });
  const before = cs0('adopt')!;
  const pidFile = join(ROOT, '.mk8s', 'run', `${node}-kubelet.pid`);
  const pid = Number(readFileSync(pidFile, 'utf8'));
  process.kill(pid, 'SIGKILL');
  await waitFor(() => { try { process.kill(pid, 0); return false; } catch { return true; } }, { what: 'kubelet gone' });
  // Restart with the cluster's own node count, so `up` changes nothing else.
  const nodes = (JSON.parse(readFileSync(join(ROOT, '.mk8s', 'cluster.json'), 'utf8')) as { nodes: string[] }).nodes.length;
  const up = spawnSync(process.execPath, [join(ROOT, 'mkctl/dist/main.js'), 'cluster', 'up', '--nodes', String(nodes)], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(up.status, 0, up.stderr);
  // The new kubelet has synced once it renewed the Lease; then the pod must be untouched.
  const renewed = (): string => kubectlOk(['-n', 'kube-node-lease', 'get', 'lease', node, '-o', 'jsonpath={.spec.renewTime}']);
  const r0 = renewed();
  await waitFor(() => renewed() !== r0, { timeoutMs: 30_000, what: 'lease renewed by the new kubelet' });
  const after = cs0('adopt')!;
  assert.equal(after.containerID, before.containerID);
  assert.equal(after.restartCount, before.restartCount);
  assert.ok(after.state?.running);
  assert.equal(after.ready, true);
});
