/**
 * The README's five-minute tour, scripted with mkctl against the real cluster: apply a Deployment
 * and a Service, wait for the rollout, watch the chain with `mkctl trace`, reach the Service from a
 * pod, kill a pod and watch it come back, drain a node and watch the pods move. Each step checks
 * its outcome. The drain only evicts the tour's pods (`--pod-selector`) and uncordons at the end,
 * so the other suites sharing the cluster are not disturbed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor, type RunResult } from './lib/cluster.js';

const ns = uniqueName('e2e-tour');
let drained = '';

function mk(args: string[], input?: string, timeoutMs = 120_000): RunResult {
  const r = spawnSync(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'mkctl', 'src', 'main.ts'), '--kubeconfig', KUBECONFIG, '-n', ns, ...args], {
    encoding: 'utf8', input, timeout: timeoutMs, cwd: ROOT,
  });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
const ok = (args: string[], input?: string) => { const r = mk(args, input); assert.equal(r.code, 0, `mkctl ${args.join(' ')}: ${r.stderr}${r.stdout}`); return r.stdout; };

interface PodLite { name: string; node: string; phase: string; ready: boolean }
const webPods = (): PodLite[] => JSON.parse(ok(['get', 'pods', '-l', 'app=tour-web', '-o', 'json'])).items
  .filter((p: { metadata: { deletionTimestamp?: string } }) => !p.metadata.deletionTimestamp)
  .map((p: { metadata: { name: string }; spec: { nodeName?: string }; status: { phase?: string; conditions?: { type: string; status: string }[] } }) => ({
    name: p.metadata.name, node: p.spec.nodeName ?? '', phase: p.status.phase ?? '', ready: p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
  }));
const allReady = (n: number) => { const ps = webPods(); return ps.length === n && ps.every((p) => p.ready) ? ps : undefined; };

before(() => {
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
});
after(() => {
  if (drained) mk(['uncordon', drained]);
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

test('1. apply a Deployment and a Service; the rollout finishes', () => {
  const out = ok(['apply', '-f', '-'], `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: tour-web}}
  template:
    metadata: {labels: {app: tour-web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: mk8s/testserver:1.0
        imagePullPolicy: IfNotPresent
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /readyz, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: tour-web}
  ports: [{port: 80, targetPort: 8080}]
`);
  assert.equal(out, 'deployment.apps/web created\nservice/web created\n');
  const st = mk(['rollout', 'status', 'deployment/web', '--timeout=180s'], undefined, 200_000);
  assert.equal(st.code, 0, st.stderr);
  assert.match(st.stdout, /deployment "web" successfully rolled out\n$/);
});

test('2. mkctl trace shows the whole chain with no broken link', async () => {
  const out = await waitFor(() => { const r = mk(['trace', 'deployment/web']); return r.code === 0 && /endpoints\s+service web: /.test(r.stdout) ? r.stdout : undefined; }, { timeoutMs: 60_000, intervalMs: 2000, what: 'a clean trace' });
  for (const step of ['stored', 'replicaset', 'pods', 'scheduled', 'node', 'image', 'started', 'ready', 'endpoints', 'kube-proxy']) assert.match(out, new RegExp(`^\\S \\S+\\s+${step}\\s`, 'm'), `${step} in\n${out}`);
  assert.doesNotMatch(out, /^✗/m);
});

test('3. the Service answers from inside the cluster', async () => {
  ok(['apply', '-f', '-'], 'apiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers: [{name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sh, -c, "exec sleep 3600"]}]\n');
  await waitFor(() => ok(['get', 'pod', 'client', '-o', 'jsonpath={.status.phase}']) === 'Running', { timeoutMs: 120_000, what: 'client Running' });
  const ip = ok(['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}']);
  assert.match(ip, /^10\.9[6-9]\.|^10\.1[01]\d\./);
  // Debian's busybox wget segfaults on -T: bound the request with timeout instead.
  const body = await waitFor(() => { const r = mk(['exec', 'client', '--', 'timeout', '3', 'wget', '-qO-', `http://${ip}/echo?msg=tour`]); return r.code === 0 ? r.stdout : undefined; }, { timeoutMs: 60_000, intervalMs: 1000, what: 'the Service to answer' });
  assert.equal(body.trim(), 'tour');
  // By name: cluster DNS (kube-dns) answers the ClusterIP through the pod's resolv.conf search list.
  const byName = await waitFor(() => { const r = mk(['exec', 'client', '--', 'timeout', '3', 'wget', '-qO-', 'http://web/echo?msg=by-name']); return r.code === 0 ? r.stdout : undefined; }, { timeoutMs: 30_000, intervalMs: 1000, what: 'http://web/ to answer' });
  assert.equal(byName.trim(), 'by-name');
});

test('4. kill a pod and watch it come back', async () => {
  const before = await waitFor(() => allReady(2), { timeoutMs: 60_000, what: '2 ready pods' });
  const victim = before[0]!.name;
  assert.match(ok(['delete', 'pod', victim]), new RegExp(`^pod "${victim}" deleted\n$`));
  const after = await waitFor(() => { const ps = allReady(2); return ps && !ps.some((p) => p.name === victim) ? ps : undefined; }, { timeoutMs: 120_000, what: 'a replacement pod Ready' });
  assert.equal(after.length, 2);
});

test('5. drain a node and watch the pods move', async () => {
  const nodes = ok(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}']).split(' ').filter(Boolean);
  if (nodes.length < 2) { assert.fail('the tour needs two nodes (make up starts two)'); }
  const ps = await waitFor(() => allReady(2), { timeoutMs: 60_000, what: '2 ready pods' });
  drained = ps[0]!.node;
  const out = ok(['drain', drained, '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--pod-selector', 'app=tour-web', '--timeout=120s']);
  assert.match(out, new RegExp(`^node/${drained} cordoned\n`));
  assert.match(out, /evicting pod /);
  assert.match(out, new RegExp(`node/${drained} drained\n$`));
  const moved = await waitFor(() => { const x = allReady(2); return x && x.every((p) => p.node !== drained) ? x : undefined; }, { timeoutMs: 180_000, what: 'pods Ready on other nodes' });
  assert.ok(moved.every((p) => p.node && p.node !== drained));
  assert.equal(ok(['uncordon', drained]), `node/${drained} uncordoned\n`);
  drained = '';
});
