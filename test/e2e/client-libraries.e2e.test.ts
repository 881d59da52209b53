/**
 * Unmodified client libraries against the real cluster (issue 14): the official Python client
 * (Debian's python3-kubernetes, run by test/e2e/python/client_fidelity.py) and
 * @kubernetes/client-node: watch with resume, logs follow with timestamps, exec with stdin,
 * stderr and the exit code, port-forward (the WebSocket channel protocol), forced server-side
 * apply, paging, delete propagation. Then kubectl's apply → apply --server-side → diff
 * --server-side on one object.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-clients');
const PYTHON = '/usr/bin/python3';

before(async () => {
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
  const pods = `
apiVersion: v1
kind: Pod
metadata: {name: logger}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: logger
    image: mk8s/busybox:1.36
    imagePullPolicy: IfNotPresent
    command: [sh, -c, 'i=0; while true; do echo line $i; i=$((i+1)); sleep 1; done']
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: mk8s/testserver:1.0
    imagePullPolicy: IfNotPresent
    ports: [{containerPort: 8080}]
`;
  await waitFor(() => kubectl(['-n', ns, 'apply', '-f', '-'], { input: pods }).code === 0, { timeoutMs: 120_000, intervalMs: 1000, what: 'pods created' });
  for (const p of ['logger', 'web']) {
    await waitFor(() => kubectl(['-n', ns, 'get', 'pod', p, '-o', 'jsonpath={.status.phase}']).stdout === 'Running', { timeoutMs: 180_000, what: `pod ${p} Running` });
  }
});

after(() => {
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

describe('the official Python client', () => {
  let results: Map<string, { ok: boolean; detail: unknown; trace?: string }>;
  before(async () => {
    // A missing client is a set-up bug (scripts/setup.sh installs python3-kubernetes): fail, never skip.
    assert.ok(existsSync(PYTHON), `${PYTHON} is missing`);
    const child = spawn(PYTHON, [join(ROOT, 'test', 'e2e', 'python', 'client_fidelity.py'), KUBECONFIG, ns], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = ''; let err = '';
    child.stdout.on('data', (b: Buffer) => { out += b.toString(); });
    child.stderr.on('data', (b: Buffer) => { err += b.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    await new Promise<void>((r) => child.on('close', () => r()));
    clearTimeout(timer);
    results = new Map();
    for (const line of out.split('\n').filter((l) => l.startsWith('{'))) {
      const r = JSON.parse(line) as { check: string; ok: boolean; detail: unknown; trace?: string };
      results.set(r.check, r);
    }
    assert.ok(results.size > 0, `the Python script reported nothing:\n${out}\n${err}`);
  });
  for (const name of ['watch with resume', 'logs follow with timestamps', 'exec with stdin, stderr and exit code', 'port-forward', 'forced server-side apply', 'paging', 'delete propagation']) {
    test(name, () => {
      const r = results.get(name);
      assert.ok(r, `no result for ${name}`);
      assert.ok(r.ok, `${JSON.stringify(r.detail)}\n${r.trace ?? ''}`);
    });
  }
});

describe('@kubernetes/client-node', () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const cm = (name: string, data: Record<string, string>, labels?: Record<string, string>): k8s.V1ConfigMap =>
    ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, data });

  test('watch with resume', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: ns });
    const watch = new k8s.Watch(kc);
    const events: { type: string; name: string; rv: string; v: string | undefined }[] = [];
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const start = async (rv: string) => watch.watch(path, { resourceVersion: rv, allowWatchBookmarks: true },
      (type, obj: k8s.V1ConfigMap) => { if (type !== 'BOOKMARK') events.push({ type, name: obj.metadata!.name!, rv: obj.metadata!.resourceVersion!, v: obj.data?.['v'] }); }, () => {});
    const first = await start(list.metadata!.resourceVersion!);
    await core.createNamespacedConfigMap({ namespace: ns, body: cm('js-watched', { v: '1' }) });
    const added = await waitFor(() => events.find((e) => e.type === 'ADDED' && e.name === 'js-watched'), { timeoutMs: 30_000, what: 'ADDED js-watched' });
    first.abort();
    events.length = 0;
    await core.patchNamespacedConfigMap({ namespace: ns, name: 'js-watched', body: { data: { v: '2' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    const second = await start(added.rv);      // resumes after the ADDED: only what came later
    const modified = await waitFor(() => events.find((e) => e.name === 'js-watched'), { timeoutMs: 30_000, what: 'an event after resume' });
    second.abort();
    assert.equal(modified.type, 'MODIFIED');
    assert.equal(modified.v, '2');
  });

  test('logs follow with timestamps', async () => {
    let text = '';
    const sink = new Writable({ write(chunk: Buffer, _e, cb) { text += chunk.toString(); cb(); } });
    const ac = await new k8s.Log(kc).log(ns, 'logger', 'logger', sink, { follow: true, timestamps: true });
    try {
      // Following: lines keep arriving after the request was answered.
      await waitFor(() => text.split('\n').filter(Boolean).length >= 3, { timeoutMs: 30_000, what: 'three followed lines' });
      const before = text.split('\n').filter(Boolean).length;
      await waitFor(() => text.split('\n').filter(Boolean).length > before, { timeoutMs: 30_000, what: 'a later line' });
    } finally {
      ac.abort();
    }
    for (const l of text.split('\n').filter(Boolean)) assert.match(l, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z line \d+$/);
  });

  test('exec with stdin, stderr and exit code', async () => {
    let out = ''; let err = '';
    const stdout = new Writable({ write(c: Buffer, _e, cb) { out += c.toString(); cb(); } });
    const stderr = new Writable({ write(c: Buffer, _e, cb) { err += c.toString(); cb(); } });
    const stdin = new PassThrough();
    let status: k8s.V1Status | undefined;
    await new k8s.Exec(kc).exec(ns, 'logger', 'logger', ['sh', '-c', 'read x; echo got-$x; echo oops >&2; exit 3'], stdout, stderr, stdin, false, (s) => { status = s; });
    stdin.write('hello\n');
    const st = await waitFor(() => status, { timeoutMs: 60_000, what: 'the exec status' });
    assert.equal(out.trim(), 'got-hello');
    assert.equal(err.trim(), 'oops');
    assert.equal(st.status, 'Failure');
    assert.equal(st.reason, 'NonZeroExitCode');
    assert.equal(st.details?.causes?.find((c) => c.reason === 'ExitCode')?.message, '3');
  });

  test('port-forward', async () => {
    let out = '';
    const output = new Writable({ write(c: Buffer, _e, cb) { out += c.toString('latin1'); cb(); } });
    const input = new PassThrough();
    const ws = await new k8s.PortForward(kc).portForward(ns, 'web', [8080], output, null, input);
    input.write('GET /echo?msg=js-through-the-tunnel HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n');
    // The test server answers chunked: the message is inside the body.
    await waitFor(() => out.includes('\r\njs-through-the-tunnel\r\n'), { timeoutMs: 30_000, what: 'the answer through the tunnel' });
    assert.match(out, /^HTTP\/1\.1 200/);
    (typeof ws === 'function' ? ws() : ws)?.close();
  });

  test('forced server-side apply', async () => {
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const body = (v: string) => cm('js-applied', { owner: v });
    await objects.patch(body('a'), undefined, undefined, 'js-a', undefined, k8s.PatchStrategy.ServerSideApply);
    await assert.rejects(objects.patch(body('b'), undefined, undefined, 'js-b', false, k8s.PatchStrategy.ServerSideApply),
      (e: { code?: number; body?: unknown }) => e.code === 409 && /conflict with \\?"js-a/.test(String(typeof e.body === 'string' ? e.body : JSON.stringify(e.body))));
    const forced = await objects.patch(body('b'), undefined, undefined, 'js-b', true, k8s.PatchStrategy.ServerSideApply) as k8s.V1ConfigMap;
    assert.equal(forced.data?.['owner'], 'b');
    assert.ok(forced.metadata?.managedFields?.some((m) => m.manager === 'js-b' && m.operation === 'Apply'));
  });

  test('paging', async () => {
    for (let i = 0; i < 5; i++) await core.createNamespacedConfigMap({ namespace: ns, body: cm(`js-page-${i}`, { i: String(i) }, { paged: 'js' }) });
    const names: string[] = [];
    let cont: string | undefined; let pages = 0;
    do {
      const page = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'paged=js', limit: 2, ...(cont ? { _continue: cont } : {}) });
      pages++;
      assert.ok(page.items.length <= 2);
      names.push(...page.items.map((c) => c.metadata!.name!));
      cont = page.metadata?._continue;
    } while (cont);
    assert.deepEqual(names.sort(), [0, 1, 2, 3, 4].map((i) => `js-page-${i}`));
    assert.equal(pages, 3);
  });

  test('delete propagation', async () => {
    const deployment = (name: string): k8s.V1Deployment => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
      spec: { replicas: 0, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'mk8s/busybox:1.36' }] } } },
    });
    const rsOf = async (name: string) => (await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: `app=${name}` })).items;
    const gone = async (name: string) => !(await apps.listNamespacedDeployment({ namespace: ns })).items.some((d) => d.metadata?.name === name);
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('js-orphan') });
    await waitFor(async () => (await rsOf('js-orphan')).length > 0, { timeoutMs: 60_000, what: 'the ReplicaSet of js-orphan' });
    await apps.deleteNamespacedDeployment({ namespace: ns, name: 'js-orphan', body: { propagationPolicy: 'Orphan' } });
    await waitFor(() => gone('js-orphan'), { timeoutMs: 60_000, what: 'js-orphan gone' });
    await waitFor(async () => (await rsOf('js-orphan')).some((r) => !r.metadata?.ownerReferences?.length), { timeoutMs: 60_000, what: 'the orphaned ReplicaSet' });
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('js-fg') });
    await waitFor(async () => (await rsOf('js-fg')).length > 0, { timeoutMs: 60_000, what: 'the ReplicaSet of js-fg' });
    await apps.deleteNamespacedDeployment({ namespace: ns, name: 'js-fg', propagationPolicy: 'Foreground' });
    await waitFor(async () => (await rsOf('js-fg')).length === 0, { timeoutMs: 90_000, what: 'the ReplicaSet of js-fg deleted' });
    await waitFor(() => gone('js-fg'), { timeoutMs: 90_000, what: 'js-fg deleted' });
  });
});

describe('kubectl', () => {
  test('apply, then apply --server-side, then diff --server-side on the same object', () => {
    const manifest = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubectl-migrated, namespace: ${ns}}\ndata: {level: "${v}", keep: k}\n`;
    assert.match(kubectlOk(['apply', '-f', '-'], { input: manifest('1') }), /configmap\/kubectl-migrated created/);
    assert.match(kubectlOk(['apply', '--server-side', '-f', '-'], { input: manifest('2') }), /configmap\/kubectl-migrated serverside-applied/);
    const same = kubectl(['diff', '--server-side', '-f', '-'], { input: manifest('2') });
    assert.equal(same.code, 0, same.stdout + same.stderr);
    const changed = kubectl(['diff', '--server-side', '-f', '-'], { input: manifest('3') });
    assert.equal(changed.code, 1, changed.stderr);
    assert.match(changed.stdout, /\+  level: "3"/);
  });
});
