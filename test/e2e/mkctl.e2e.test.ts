/**
 * mkctl against the real cluster, side by side with the real kubectl: `get pods`, `get deploy`
 * and `describe pod` print the same columns and sections; apply reports created/unchanged/
 * configured; errors are one line; `mkctl trace` names the broken link for an unschedulable pod,
 * a Service selecting nothing, a missing image, a crash loop, a failing readiness probe and a
 * missing ConfigMap. (A stopped node is covered by the unit table: stopping a shared node here
 * would break the other suites.)
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor, type RunResult } from './lib/cluster.js';

const ns = uniqueName('e2e-mkctl');

function mkctl(args: string[], opts: { input?: string; timeoutMs?: number } = {}): RunResult {
  const r = spawnSync(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'mkctl', 'src', 'main.ts'), '--kubeconfig', KUBECONFIG, ...args], {
    encoding: 'utf8', input: opts.input, timeout: opts.timeoutMs ?? 60_000, cwd: ROOT,
  });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
const mk = (args: string[], input?: string) => mkctl(['-n', ns, ...args], input === undefined ? {} : { input });

const AGE = /^(\d+[smhdy])+$|^<unknown>$|^\d+[smhd]\d*[smhd]?$/;
/** Rows as cells (split on the tabwriter's 2+ spaces), ages masked. */
const cells = (out: string) => out.trimEnd().split('\n').map((l) => l.split(/\s{2,}/).map((c) => (AGE.test(c.trim()) ? 'AGE' : c.trim())));
/** Where each header column starts; every row must start its cells there too. */
function assertAligned(out: string): void {
  const lines = out.trimEnd().split('\n');
  const starts = [...lines[0]!.matchAll(/\S+(?: \S+)*/g)].map((m) => m.index);
  for (const l of lines.slice(1)) for (const s of starts.slice(1)) assert.ok(l[s! - 1] === ' ' && l[s!] !== ' ', `column at ${s} in "${l}"`);
}

const workload = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: web, image: busybox, imagePullPolicy: IfNotPresent, command: [sh, -c, "exec sleep 3600"], env: [{name: MODE, value: test}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`;

before(() => {
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
});
after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

test('apply prints created, then unchanged, then configured', () => {
  const first = mk(['apply', '-f', '-'], workload);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, 'deployment.apps/web created\nservice/web created\n');
  assert.equal(mk(['apply', '-f', '-'], workload).stdout, 'deployment.apps/web unchanged\nservice/web unchanged\n');
  // kubectl agrees that mkctl's last-applied annotation is its own format.
  assert.equal(kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: workload }), 'deployment.apps/web unchanged\nservice/web unchanged\n');
  const changed = mk(['apply', '-f', '-'], workload.replace('value: test', 'value: prod'));
  assert.equal(changed.stdout, 'deployment.apps/web configured\nservice/web unchanged\n');
});

test('get pods, get deploy and -A print the same columns as kubectl', async () => {
  await waitFor(() => {
    const out = kubectlOk(['-n', ns, 'get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.status.phase}{"\\n"}{end}']).trim().split('\n');
    return out.length === 2 && out.every((p) => p === 'Running');
  }, { timeoutMs: 120_000, what: 'two Running pods' });
  for (const args of [['get', 'pods'], ['get', 'deploy'], ['get', 'pods', '-o', 'wide'], ['get', 'deploy,svc'], ['get', 'pods', '--show-labels'], ['get', 'rs']]) {
    const k = kubectlOk(['-n', ns, ...args]);
    const m = mk(args);
    assert.equal(m.code, 0, m.stderr);
    assert.deepEqual(cells(m.stdout), cells(k), `mkctl ${args.join(' ')}`);
    // Widths follow the AGE cells, which tick between the two calls: compare header words, then alignment.
    assert.deepEqual(m.stdout.split('\n')[0]!.split(/\s{2,}/), k.split('\n')[0]!.split(/\s{2,}/), `header of ${args.join(' ')}`);
    assertAligned(m.stdout.split('\n\n')[0]!);
  }
  const all = mk(['get', 'pods', '-A', '-l', 'app=web']);
  assert.match(all.stdout.split('\n')[0]!, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
  assert.equal(mk(['get', 'pods', '-o', 'name']).stdout, kubectlOk(['-n', ns, 'get', 'pods', '-o', 'name']));
  assert.equal(mk(['get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}']).stdout, '2');
});

test('describe pod has kubectl\'s sections in kubectl\'s order', () => {
  const pod = kubectlOk(['-n', ns, 'get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
  const k = kubectlOk(['-n', ns, 'describe', 'pod', pod]);
  const m = mk(['describe', 'pod', pod]);
  assert.equal(m.code, 0, m.stderr);
  const titles = (s: string) => s.split('\n').filter((l) => /^\s*[A-Z][\w -]*:/.test(l) && !/^\s{2}(Normal|Warning)\s/.test(l)).map((l) => l.replace(/:.*/, ':'));
  assert.deepEqual(titles(m.stdout), titles(k));
  // Same text once ages are masked (events may change between the two calls: compare up to Events).
  const mask = (s: string) => s.split('\nEvents:')[0]!.replace(/\d+[smhd](\d+[smhd])?/g, 'AGE');
  assert.equal(mask(m.stdout), mask(k));
});

test('errors are one actionable line with kubectl\'s exit codes', () => {
  const unknown = mk(['get', 'foo']);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, 'error: the server doesn\'t have a resource type "foo"\n');
  const missing = mk(['get', 'pod', 'nope']);
  assert.equal(missing.stderr, 'Error from server (NotFound): pods "nope" not found\n');
  const down = mkctl(['--server', 'http://127.0.0.1:1', 'get', 'pods']);
  assert.equal(down.code, 1);
  assert.equal(down.stderr, 'error: cannot reach the API server at http://127.0.0.1:1: is the cluster up? run make up\n');
  const bad = mk(['apply', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n data: y\n');
  assert.match(bad.stderr, /^error: error parsing STDIN: line 5, column 2: .+\n$/);
  const invalid = mk(['apply', '-f', '-'], 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad}\nspec:\n  replicas: -1\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec: {containers: [{name: c, image: busybox}]}\n');
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /^The Deployment "bad" is invalid: spec\.replicas: /);
});

/** Waits until `mkctl trace` reports a broken link at step; returns the output. */
async function traceBroken(obj: string, step: string): Promise<string> {
  return waitFor(() => {
    const r = mk(['trace', obj]);
    const broken = r.stdout.split('\n').find((l) => l.startsWith('✗'));
    return r.code === 1 && broken && broken.includes(` ${step} `) ? r.stdout : undefined;
  }, { timeoutMs: 120_000, intervalMs: 2000, what: `trace ${obj} broken at ${step}` });
}

const podSpec = (name: string, container: string, extra = '') => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, labels: {case: ${name}}}\nspec:\n  terminationGracePeriodSeconds: 1\n${extra}  containers:\n${container}`;

test('trace: an unschedulable pod names the scheduler and the reason', async () => {
  mk(['apply', '-f', '-'], `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: unsched}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: unsched}}\n  template:\n    metadata: {labels: {app: unsched}}\n    spec:\n      nodeSelector: {mk8s-e2e: nobody}\n      containers: [{name: c, image: busybox, imagePullPolicy: IfNotPresent}]\n`);
  const out = await traceBroken('deploy/unsched', 'scheduled');
  assert.match(out, /✓ .* stored\s+deployment\.apps\/unsched uid=\S+ resourceVersion=\d+/);
  assert.match(out, /unschedulable: /);
  assert.match(out, /owner: kube-scheduler/);
});

test('trace: a Service whose selector matches nothing', async () => {
  mk(['apply', '-f', '-'], 'apiVersion: v1\nkind: Service\nmetadata: {name: lonely}\nspec:\n  selector: {app: nothing-here}\n  ports: [{port: 80}]\n');
  const out = await traceBroken('svc/lonely', 'selector');
  assert.match(out, /selector app=nothing-here matches no pods/);
  assert.match(out, /owner: the Service spec/);
});

test('trace: a missing image', async () => {
  mk(['apply', '-f', '-'], podSpec('noimage', '  - {name: c, image: "mk8s/does-not-exist:0.0.1"}\n'));
  const out = await traceBroken('pod/noimage', 'image');
  assert.match(out, /(ErrImagePull|ImagePullBackOff) for mk8s\/does-not-exist:0\.0\.1/);
  assert.match(out, /owner: container runtime/);
});

test('trace: a crash loop shows the last exit code', async () => {
  mk(['apply', '-f', '-'], podSpec('crash', '  - {name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sh, -c, "exit 3"]}\n'));
  const out = await traceBroken('pod/crash', 'started');
  assert.match(out, /last exit code 3/);
  assert.match(out, /look at: mkctl logs crash -c c --previous/);
});

test('trace: a failing readiness probe', async () => {
  mk(['apply', '-f', '-'], podSpec('unready', '  - name: c\n    image: busybox\n    imagePullPolicy: IfNotPresent\n    command: [sh, -c, "exec sleep 3600"]\n    readinessProbe: {exec: {command: ["false"]}, periodSeconds: 1}\n'));
  const out = await traceBroken('pod/unready', 'ready');
  assert.match(out, /owner: the application \(readiness probe/);
});

test('trace: a missing ConfigMap referenced by env', async () => {
  mk(['apply', '-f', '-'], podSpec('nocm', '  - name: c\n    image: busybox\n    imagePullPolicy: IfNotPresent\n    command: [sh, -c, "exec sleep 3600"]\n    env: [{name: MODE, valueFrom: {configMapKeyRef: {name: settings, key: mode}}}]\n'));
  const out = await traceBroken('pod/nocm', 'started');
  assert.match(out, /missing configmap "settings"/);
});

test('rollout status, scale, delete', async () => {
  const st = mk(['rollout', 'status', 'deploy/web', '--timeout=120s'], undefined);
  assert.equal(st.code, 0, st.stderr);
  assert.match(st.stdout, /deployment "web" successfully rolled out\n$/);
  assert.equal(mk(['scale', 'deploy/web', '--replicas=1']).stdout, 'deployment.apps/web scaled\n');
  const del = mk(['delete', 'svc', 'lonely']);
  assert.equal(del.stdout, 'service "lonely" deleted\n');
});
