/**
 * The real kubectl 1.32 against the apiserver on real etcd: the everyday verbs must work
 * unchanged (discovery, Table printing, OpenAPI-backed apply, SMP/merge/json patches, scale).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer, kubectlRunner } from './testing/index.js';

const DEPLOYMENT = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: ${image}
        ports:
        - containerPort: 80
`;

describe('kubectl against the apiserver', () => {
  let srv: TestApiServer;
  let dir: string;
  before(async () => {
    srv = await startTestApiServer({ etcdMembers: 1 });
    dir = await mkdtemp(join(tmpdir(), 'mk8s-kubectl-'));
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const { kubectl, ok } = kubectlRunner({ kubeconfig: () => srv.kubeconfigPath, cacheDir: () => join(dir, 'cache') });

  test('get on an empty namespace', async () => {
    const r = await kubectl('get', 'pods');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /No resources found in default namespace/);
  });

  test('apply creates, reapplies (SMP), and reports unchanged', async () => {
    const file = join(dir, 'deploy.yaml');
    await writeFile(file, DEPLOYMENT('nginx:1.25'));
    assert.match(await ok('apply', '-f', file), /deployment.apps\/web created/);
    await writeFile(file, DEPLOYMENT('nginx:1.26'));
    assert.match(await ok('apply', '-f', file), /deployment.apps\/web configured/);
    assert.match(await ok('apply', '-f', file), /deployment.apps\/web unchanged/);
    assert.equal(await ok('get', 'deploy', 'web', '-o', 'jsonpath={.spec.template.spec.containers[0].image} {.metadata.generation}'), 'nginx:1.26 2');
  });

  test('apply --server-side removes a field dropped from the manifest', async () => {
    const file = join(dir, 'ssa.yaml');
    const cm = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  labels:\n    app: ssa\ndata:\n${data}`;
    await writeFile(file, cm('  a: "1"\n  b: "2"\n'));
    assert.match(await ok('apply', '--server-side', '-f', file), /configmap\/ssa serverside-applied/);
    await ok('label', 'configmap', 'ssa', 'other=x');
    await writeFile(file, cm('  a: "1"\n'));
    assert.match(await ok('apply', '--server-side', '-f', file), /configmap\/ssa serverside-applied/);
    assert.equal(await ok('get', 'configmap', 'ssa', '-o', 'jsonpath={.data} {.metadata.labels}'), '{"a":"1"} {"app":"ssa","other":"x"}');
  });

  test('get prints server-side tables', async () => {
    const out = await ok('get', 'deploy');
    assert.match(out, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE/);
    assert.match(out, /\nweb\s+0\/1/);
  });

  test('label, patch (strategic, json), scale and delete', async () => {
    assert.match(await ok('label', 'deploy', 'web', 'tier=front'), /labeled/);
    assert.match(await ok('patch', 'deploy', 'web', '-p', '{"spec":{"replicas":2}}'), /patched/);
    assert.match(await ok('patch', 'deploy', 'web', '--type=json', '-p', '[{"op":"replace","path":"/spec/replicas","value":4}]'), /patched/);
    assert.match(await ok('scale', 'deploy', 'web', '--replicas=3'), /scaled/);
    assert.equal(await ok('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas} {.metadata.labels.tier}'), '3 front');
    const stale = await kubectl('get', 'deploy', 'web', '-o', 'yaml');
    await ok('annotate', 'deploy', 'web', 'touched=yes');
    const file = join(dir, 'stale.yaml');
    await writeFile(file, stale.stdout);
    const replace = await kubectl('replace', '-f', file);
    assert.notEqual(replace.code, 0);
    assert.match(replace.stderr, /Conflict/);
    assert.match(await ok('delete', 'deploy', 'web'), /deployment.apps "web" deleted/);
    const gone = await kubectl('get', 'deploy', 'web');
    assert.match(gone.stderr, /Error from server \(NotFound\): deployments.apps "web" not found/);
  });

  test('run and delete a pod', async () => {
    assert.match(await ok('run', 'r1', '--image=busybox'), /pod\/r1 created/);
    assert.match(await ok('get', 'pods'), /r1\s+0\/1\s+Pending/);
    assert.match(await ok('delete', 'pod', 'r1'), /pod "r1" deleted/);
  });

  test('get -w prints rows for later changes only, from a server-side Table watch', async () => {
    await ok('create', 'configmap', 'pre', '--dry-run=client', '-o', 'yaml').then((y) => writeFile(join(dir, 'pre.yaml'), y));
    await ok('apply', '-f', join(dir, 'pre.yaml'));
    const child = spawn('kubectl', ['--kubeconfig', srv.kubeconfigPath, '--cache-dir', join(dir, 'cache'), 'get', 'configmaps', '-w'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    try {
      await waitFor(() => /NAME\s+DATA\s+AGE\npre\s+0\s/.test(out), 20_000, 'header and the existing row');
      await ok('create', 'configmap', 'watched', '--from-literal=a=b', '--dry-run=client', '-o', 'yaml').then((y) => writeFile(join(dir, 'cm.yaml'), y));
      await ok('apply', '-f', join(dir, 'cm.yaml'));
      await waitFor(() => /\nwatched\s+1\s+/.test(out), 20_000, 'watched row');
      assert.equal(out.match(/\nwatched\s/g)?.length, 1);
      assert.equal(out.match(/\npre\s/g)?.length, 1, out);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
