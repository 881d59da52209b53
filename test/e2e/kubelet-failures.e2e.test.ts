/**
 * Every failure reason the kubelet reports, reached on the real cluster (issue 13): one pod per
 * reason, all started at once in one namespace and watched over one 90 s window. Each must show
 * the state upstream shows (containerStatuses, kubectl's STATUS column) and an Event, Docker
 * must create no more containers for it than its back-off allows over the whole 90 s (Docker's
 * own create events), and `mkctl trace` must name the owning component and the runtime's (or
 * kubelet's) own message.
 */
import { join } from 'node:path';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { kubectl, kubectlOk, uniqueName, waitForDefaultServiceAccount } from './lib/cluster.js';

const ROOT = join(import.meta.dirname, '..', '..');

const ns = uniqueName('e2e-kfail');
const NOCMD = 'mk8s-e2e/nocmd:1.0';
let node = '';

interface CState { waiting?: { reason?: string; message?: string }; running?: unknown; terminated?: { exitCode: number; reason?: string; message?: string } }
interface CStatus { name: string; restartCount: number; containerID?: string; state?: CState; lastState?: CState }
interface PodJson { metadata: { name: string }; status?: { phase?: string; containerStatuses?: CStatus[]; initContainerStatuses?: CStatus[] } }

const docker = (args: string[], input?: string) => spawnSync('docker', args, { encoding: 'utf8', ...(input !== undefined ? { input } : {}), timeout: 60_000 });

const pod = (name: string, spec: string) => `---
apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  nodeName: ${node}
  terminationGracePeriodSeconds: 1
${spec}`;

before(() => {
  node = kubectlOk(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
  assert.ok(node, 'a node is registered');
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
  waitForDefaultServiceAccount(ns);
  kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: present}\ndata: {k: v}\n' });
  // An image without a default command, as `docker import` makes them (a user's own images).
  const id = docker(['create', 'mk8s/busybox:1.36']).stdout.trim();
  assert.ok(id, 'docker create of mk8s/busybox:1.36');
  const imp = spawnSync('sh', ['-c', `docker export ${id} | docker import - ${NOCMD}`], { encoding: 'utf8', timeout: 60_000 });
  docker(['rm', '-f', id]);
  assert.equal(imp.status, 0, imp.stderr);
});
after(() => {
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

test('every failure reason: state, STATUS column, Event, and Docker creates bounded by the back-off', async () => {
  const t0 = Math.floor(Date.now() / 1000) - 1;
  const busy = 'image: mk8s/busybox:1.36\n    imagePullPolicy: IfNotPresent';
  kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: [
    pod('cfg-missing', `  containers:\n  - name: c\n    ${busy}\n    command: [sleep, "3600"]\n    env: [{name: X, valueFrom: {configMapKeyRef: {name: absent, key: k}}}]`),
    pod('secret-missing', `  containers:\n  - name: c\n    ${busy}\n    command: [sleep, "3600"]\n    env: [{name: X, valueFrom: {secretKeyRef: {name: absent, key: k}}}]`),
    pod('key-missing', `  containers:\n  - name: c\n    ${busy}\n    command: [sleep, "3600"]\n    env: [{name: X, valueFrom: {configMapKeyRef: {name: present, key: nope}}}]`),
    pod('no-command', `  containers:\n  - name: c\n    image: ${NOCMD}\n    imagePullPolicy: Never`),
    pod('bad-image-name', `  containers:\n  - name: c\n    image: "Busybox:1.36"`),
    pod('no-such-image', `  containers:\n  - name: c\n    image: mk8s-e2e/does-not-exist:1.0`),
    pod('no-such-binary', `  containers:\n  - name: c\n    ${busy}\n    command: [/no/such/binary]`),
    pod('oom', `  restartPolicy: Never\n  containers:\n  - name: c\n    ${busy}\n    command: [sh, -c, "tail /dev/zero"]\n    resources: {limits: {memory: 32Mi}}`),
    pod('exit-error', `  restartPolicy: Never\n  containers:\n  - name: c\n    ${busy}\n    command: [sh, -c, "exit 3"]`),
    pod('exit-zero', `  restartPolicy: Never\n  containers:\n  - name: c\n    ${busy}\n    command: [sh, -c, "exit 0"]`),
    pod('vanish', `  containers:\n  - name: c\n    ${busy}\n    command: [sleep, "3600"]`),
    pod('init-error', `  restartPolicy: Never\n  initContainers:\n  - name: i\n    ${busy}\n    command: [sh, -c, "exit 1"]\n  containers:\n  - name: c\n    ${busy}\n    command: [sleep, "3600"]`),
    pod('init-crash', `  initContainers:\n  - name: i\n    ${busy}\n    command: [sh, -c, "exit 1"]\n  containers:\n  - name: c\n    ${busy}\n    command: [sleep, "3600"]`),
    pod('bad-sandbox', `  securityContext: {sysctls: [{name: net.ipv4.ip_local_port_range, value: "not a range"}]}\n  containers:\n  - name: c\n    ${busy}\n    command: [sleep, "3600"]`),
  ].join('\n') });

  const c0 = (p: PodJson | undefined) => p?.status?.containerStatuses?.[0];
  const i0 = (p: PodJson | undefined) => p?.status?.initContainerStatuses?.[0];
  const events = (): string => kubectlOk(['-n', ns, 'get', 'events', '-o', 'jsonpath={range .items[*]}{.involvedObject.name} {.reason}: {.message}{"\\n"}{end}']);
  const ev = (all: string, name: string, re: RegExp) => all.split('\n').some((l) => l.startsWith(`${name} `) && re.test(l.slice(name.length + 1)));
  /** Per pod: the STATUS column wanted, what its status must show, the Event it must have. */
  const want: Record<string, { status: RegExp; ok: (p: PodJson | undefined) => boolean; event: RegExp }> = {
    'cfg-missing': { status: /^CreateContainerConfigError$/, ok: (p) => c0(p)?.state?.waiting?.reason === 'CreateContainerConfigError' && /configmap "absent" not found/.test(c0(p)?.state?.waiting?.message ?? ''), event: /^Failed: Error: configmap "absent" not found/ },
    'secret-missing': { status: /^CreateContainerConfigError$/, ok: (p) => c0(p)?.state?.waiting?.reason === 'CreateContainerConfigError' && /secret "absent" not found/.test(c0(p)?.state?.waiting?.message ?? ''), event: /^Failed: Error: secret "absent" not found/ },
    'key-missing': { status: /^CreateContainerConfigError$/, ok: (p) => c0(p)?.state?.waiting?.reason === 'CreateContainerConfigError' && /couldn't find key nope in ConfigMap .*\/present/.test(c0(p)?.state?.waiting?.message ?? ''), event: /^Failed: Error: couldn't find key nope in ConfigMap/ },
    'no-command': { status: /^CreateContainerError$/, ok: (p) => c0(p)?.state?.waiting?.reason === 'CreateContainerError' && /No command specified/.test(c0(p)?.state?.waiting?.message ?? ''), event: /^Failed: Error: .*No command specified/ },
    'bad-image-name': { status: /^InvalidImageName$/, ok: (p) => c0(p)?.state?.waiting?.reason === 'InvalidImageName' && /must be lowercase/.test(c0(p)?.state?.waiting?.message ?? ''), event: /^InspectFailed: Failed to apply default image tag "Busybox:1.36"/ },
    'no-such-image': { status: /^(ErrImagePull|ImagePullBackOff)$/, ok: (p) => c0(p)?.state?.waiting?.reason === 'ImagePullBackOff', event: /^BackOff: Back-off pulling image "mk8s-e2e\/does-not-exist:1.0"/ },
    'no-such-binary': { status: /^(CrashLoopBackOff|RunContainerError)$/, ok: (p) => c0(p)?.state?.waiting?.reason === 'CrashLoopBackOff' && c0(p)?.lastState?.terminated?.reason === 'StartError' && c0(p)?.lastState?.terminated?.exitCode === 128 && (c0(p)?.restartCount ?? 0) >= 1, event: /^Failed: Error: .*no such file or directory/ },
    'oom': { status: /^OOMKilled$/, ok: (p) => c0(p)?.state?.terminated?.reason === 'OOMKilled' && p?.status?.phase === 'Failed', event: /^Started: / },
    'exit-error': { status: /^Error$/, ok: (p) => c0(p)?.state?.terminated?.reason === 'Error' && c0(p)?.state?.terminated?.exitCode === 3 && p?.status?.phase === 'Failed', event: /^Started: / },
    'exit-zero': { status: /^Completed$/, ok: (p) => c0(p)?.state?.terminated?.reason === 'Completed' && p?.status?.phase === 'Succeeded', event: /^Started: / },
    'vanish': { status: /^Running$/, ok: (p) => c0(p)?.lastState?.terminated?.reason === 'ContainerStatusUnknown' && c0(p)?.restartCount === 1 && !!c0(p)?.state?.running, event: /^Started: / },
    'init-error': { status: /^Init:Error$/, ok: (p) => i0(p)?.state?.terminated?.reason === 'Error' && p?.status?.phase === 'Failed', event: /^Started: / },
    'init-crash': { status: /^Init:CrashLoopBackOff$/, ok: (p) => i0(p)?.state?.waiting?.reason === 'CrashLoopBackOff', event: /^BackOff: Back-off restarting failed container i in pod init-crash_/ },
    'bad-sandbox': { status: /^(ContainerCreating|Pending)$/, ok: (p) => c0(p)?.state?.waiting?.reason === 'ContainerCreating', event: /^FailedCreatePodSandBox: Failed to create pod sandbox: / },
  };
  const deadline = Date.now() + 90_000;
  const done = new Set<string>();
  let vanished = false;
  let last: Record<string, { status: string; json: PodJson | undefined }> = {};
  // The whole window, even once every reason is reached: the create counts below are over 90 s.
  while (Date.now() < deadline) {
    const list = JSON.parse(kubectlOk(['-n', ns, 'get', 'pods', '-o', 'json'])) as { items: PodJson[] };
    const table = kubectlOk(['-n', ns, 'get', 'pods', '--no-headers']).trim().split('\n').map((l) => l.trim().split(/\s+/));
    const all = events();
    last = Object.fromEntries(Object.keys(want).map((n) => [n, { status: table.find((r) => r[0] === n)?.[2] ?? '', json: list.items.find((p) => p.metadata.name === n) }]));
    // The vanishing container: once it runs, remove it behind the kubelet's back.
    const v = last['vanish']?.json;
    if (!vanished && c0(v)?.state?.running && c0(v)?.containerID) {
      assert.equal(docker(['rm', '-f', c0(v)!.containerID!.replace('docker://', '')]).status, 0);
      vanished = true;
    }
    for (const [name, w] of Object.entries(want)) {
      if (!done.has(name) && w.ok(last[name]?.json) && w.status.test(last[name]?.status ?? '') && ev(all, name, w.event)) done.add(name);
    }
    await new Promise((r) => setTimeout(r, done.size < Object.keys(want).length ? 2000 : 5000));
  }
  const missing = Object.keys(want).filter((n) => !done.has(n));
  assert.deepEqual(missing, [], `not reached in 90 s: ${missing.map((n) => `${n} STATUS=${last[n]?.status} ${JSON.stringify(last[n]?.json?.status?.initContainerStatuses ?? [])} ${JSON.stringify(last[n]?.json?.status?.containerStatuses ?? [])}`).join('\n')}\nevents:\n${events()}`);

  // Docker's create events per pod over the window: with a 10 s doubling back-off, a pod in
  // CrashLoopBackOff makes at most ~5 containers in 90 s (+ its sandbox); a refused create or a
  // missing image makes none; a sandbox that cannot be made is tried at 0, 10, 30, 70 s.
  const t1 = Math.ceil(Date.now() / 1000);
  const out = docker(['events', '--since', String(t0), '--until', String(t1), '--filter', 'type=container', '--filter', 'event=create',
    '--filter', `label=io.kubernetes.pod.namespace=${ns}`, '--format', '{{index .Actor.Attributes "io.kubernetes.pod.name"}}']);
  assert.equal(out.status, 0, out.stderr);
  const creates = new Map<string, number>();
  for (const n of out.stdout.split('\n').filter(Boolean)) creates.set(n, (creates.get(n) ?? 0) + 1);
  const bounds: Record<string, number> = {
    'cfg-missing': 1, 'secret-missing': 1, 'key-missing': 1, 'no-command': 1, 'bad-image-name': 1, 'no-such-image': 1, 'no-such-binary': 8, 'oom': 2, 'exit-error': 2, 'exit-zero': 2,
    'vanish': 3, 'init-error': 2, 'init-crash': 8, 'bad-sandbox': 5,
  };
  for (const [name, max] of Object.entries(bounds)) {
    assert.ok((creates.get(name) ?? 0) <= max, `${name}: ${creates.get(name)} Docker creates in ${t1 - t0} s, at most ${max} allowed by the back-off`);
  }
  assert.ok((creates.get('no-such-binary') ?? 0) >= 3, 'the failing start is retried (through the back-off)');

  // `mkctl trace` names, for each failure, the broken link, its owner and the runtime's own message.
  const traces: Record<string, { step: string; evidence: RegExp; owner: RegExp }> = {
    'cfg-missing': { step: 'started', evidence: /CreateContainerConfigError: configmap "absent" not found/, owner: /kubelet on .* \(the container's config/ },
    'secret-missing': { step: 'started', evidence: /CreateContainerConfigError: secret "absent" not found/, owner: /kubelet on .* \(the container's config/ },
    'no-command': { step: 'started', evidence: /CreateContainerError: .*No command specified/, owner: /container runtime on / },
    'bad-image-name': { step: 'image', evidence: /InvalidImageName: .*must be lowercase/, owner: /the Pod spec \(yours\)/ },
    'no-such-image': { step: 'image', evidence: /(ErrImagePull|ImagePullBackOff) for mk8s-e2e\/does-not-exist:1\.0: \S/, owner: /container runtime/ },
    'no-such-binary': { step: 'started', evidence: /last exit code 128 \(StartError\).*no such file or directory/, owner: /container runtime on .*command could not be started/ },
    'oom': { step: 'started', evidence: /exited with code 137 \(OOMKilled\)/, owner: /the kernel/ },
    'exit-error': { step: 'started', evidence: /exited with code 3 \(Error\)/, owner: /the application in the container/ },
    'init-error': { step: 'started', evidence: /init i exited with code 1 \(Error\)/, owner: /the application in the init container/ },
    'init-crash': { step: 'started', evidence: /init i: CrashLoopBackOff, last exit code 1 \(Error\)/, owner: /the application in the init container/ },
    'bad-sandbox': { step: 'sandbox', evidence: /Failed to create pod sandbox: \S/, owner: /container runtime on .*CNI: the pod sandbox/ },
  };
  const wrong: string[] = [];
  for (const [name, t] of Object.entries(traces)) {
    const r = spawnSync(process.execPath, [join(ROOT, 'mkctl', 'dist', 'main.js'), '-n', ns, 'trace', `pod/${name}`], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } });
    const lines = r.stdout.split('\n');
    const i = lines.findIndex((l) => l.startsWith('✗'));
    const broken = lines[i] ?? '';
    const owner = lines.slice(i + 1).find((l) => /^\s+owner: /.test(l)) ?? '';
    if (r.status !== 1 || !broken.includes(` ${t.step} `) || !t.evidence.test(broken) || !t.owner.test(owner)) wrong.push(`${name} (rc ${r.status}):\n${r.stdout}${r.stderr}`);
  }
  assert.deepEqual(wrong, [], 'mkctl trace of each failing pod');
});
