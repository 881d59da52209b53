/**
 * mkctl's generator commands on the launched cluster (issue 14): `mkctl create namespace|
 * deployment|configmap|secret generic|service clusterip|job`, `mkctl run`, `mkctl expose`, each
 * answering kubectl's line and making what kubectl would make (checked with the real kubectl),
 * the workloads running, `kubectl events --for` (and the events.k8s.io/v1 view of the same
 * events), and `kubectl get all` listing them. One namespace, deleted afterwards.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor, waitForDefaultServiceAccount, type RunResult } from './lib/cluster.js';

const IMAGE = 'mk8s/testserver:1.0';

function mkctl(args: string[]): RunResult {
  const r = spawnSync(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'mkctl', 'src', 'main.ts'), '--kubeconfig', KUBECONFIG, ...args], {
    encoding: 'utf8', timeout: 60_000, cwd: ROOT,
  });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
const mkOk = (args: string[]): string => {
  const r = mkctl(args);
  assert.equal(r.code, 0, `mkctl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const json = (args: string[]) => JSON.parse(kubectlOk([...args, '-o', 'json'])) as Record<string, any>;

describe('mkctl generators', () => {
  const ns = uniqueName('e2e-gen');
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });
  const k = (args: string[]) => kubectlOk(['-n', ns, ...args]);

  test('mkctl create namespace', () => {
    assert.equal(mkOk(['create', 'namespace', ns]).trim(), `namespace/${ns} created`);
    assert.equal(json(['get', 'namespace', ns])['status']['phase'], 'Active');
    waitForDefaultServiceAccount(ns);
  });

  test('mkctl create configmap and secret generic', () => {
    assert.equal(mkOk(['-n', ns, 'create', 'configmap', 'cfg', '--from-literal=a=1', '--from-literal=b=two']).trim(), 'configmap/cfg created');
    assert.deepEqual(json(['-n', ns, 'get', 'configmap', 'cfg'])['data'], { a: '1', b: 'two' });
    assert.equal(mkOk(['-n', ns, 'create', 'secret', 'generic', 'sec', '--from-literal=user=admin']).trim(), 'secret/sec created');
    const s = json(['-n', ns, 'get', 'secret', 'sec']);
    assert.equal(s['type'], 'Opaque');
    assert.equal(Buffer.from(s['data']['user'], 'base64').toString(), 'admin');
  });

  test('mkctl create deployment runs its replicas; mkctl expose makes a Service with endpoints', async () => {
    assert.equal(mkOk(['-n', ns, 'create', 'deployment', 'web', `--image=${IMAGE}`, '--replicas=2', '--port=8080']).trim(), 'deployment.apps/web created');
    const d = json(['-n', ns, 'get', 'deployment', 'web', '--show-managed-fields']);
    assert.deepEqual(d['spec']['selector'], { matchLabels: { app: 'web' } });
    assert.equal(d['metadata']['managedFields'][0]['manager'], 'kubectl-create');
    await waitFor(() => json(['-n', ns, 'get', 'deployment', 'web'])['status']?.['readyReplicas'] === 2, { timeoutMs: 90_000, what: 'web ready' });
    assert.equal(mkOk(['-n', ns, 'expose', 'deployment', 'web', '--port=80', '--target-port=8080']).trim(), 'service/web exposed');
    const svc = json(['-n', ns, 'get', 'service', 'web']);
    assert.deepEqual(svc['spec']['selector'], { app: 'web' });
    assert.deepEqual(svc['spec']['ports'].map((p: Record<string, unknown>) => [p['port'], p['targetPort'], p['protocol']]), [[80, 8080, 'TCP']]);
    await waitFor(() => (json(['-n', ns, 'get', 'endpoints', 'web'])['subsets']?.[0]?.['addresses'] ?? []).length === 2, { timeoutMs: 30_000, what: 'web endpoints' });
  });

  test('mkctl create service clusterip', () => {
    assert.equal(mkOk(['-n', ns, 'create', 'service', 'clusterip', 'plain', '--tcp=81:8080']).trim(), 'service/plain created');
    const svc = json(['-n', ns, 'get', 'service', 'plain']);
    assert.equal(svc['spec']['type'], 'ClusterIP');
    assert.match(svc['spec']['clusterIP'], /^10\.9[6-9]|^10\.1[01]\d\./);
    assert.deepEqual(svc['spec']['selector'], { app: 'plain' });
  });

  test('mkctl run makes a pod that runs', async () => {
    assert.equal(mkOk(['-n', ns, 'run', 'solo', `--image=${IMAGE}`, '--port=8080', '--labels=tier=one']).trim(), 'pod/solo created');
    const p = json(['-n', ns, 'get', 'pod', 'solo', '--show-managed-fields']);
    assert.deepEqual(p['metadata']['labels'], { tier: 'one' });
    assert.equal(p['metadata']['managedFields'][0]['manager'], 'kubectl-run');
    await waitFor(() => json(['-n', ns, 'get', 'pod', 'solo'])['status']?.['phase'] === 'Running', { timeoutMs: 60_000, what: 'solo Running' });
    assert.equal(mkOk(['-n', ns, 'expose', 'pod', 'solo', '--port=8080', '--name=solo-svc']).trim(), 'service/solo-svc exposed');
    assert.deepEqual(json(['-n', ns, 'get', 'service', 'solo-svc'])['spec']['selector'], { tier: 'one' });
  });

  test('kubectl events --for shows the pod\'s events; events.k8s.io/v1 serves the same ones', async () => {
    const out = await waitFor(() => { const o = k(['events', '--for', 'pod/solo']); return /Started/.test(o) ? o : undefined; }, { timeoutMs: 30_000, what: 'Started event' });
    assert.match(out, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    assert.match(out, /Scheduled\s+Pod\/solo/);
    assert.doesNotMatch(out, /Pod\/web-/);
    const v1 = JSON.parse(k(['get', 'events.v1.events.k8s.io', '-o', 'json'])) as { items: { apiVersion: string; regarding: { name?: string }; reason?: string; note?: string }[] };
    const started = v1.items.find((e) => e.regarding.name === 'solo' && e.reason === 'Started');
    assert.ok(started, 'the Started event in the events.k8s.io/v1 view');
    assert.equal(started.apiVersion, 'events.k8s.io/v1');
    assert.match(started.note ?? '', /solo|container/i);
  });

  test('mkctl create job completes', async () => {
    assert.equal(mkOk(['-n', ns, 'create', 'job', 'once', '--image=mk8s/busybox:1.36', '--', 'true']).trim(), 'job.batch/once created');
    await waitFor(() => (json(['-n', ns, 'get', 'job', 'once'])['status']?.['succeeded'] ?? 0) === 1, { timeoutMs: 60_000, what: 'job succeeded' });
  });

  test('kubectl get all lists what the generators made', () => {
    const all = k(['get', 'all']);
    for (const want of [/pod\/solo\s+1\/1\s+Running/, /service\/web\s+ClusterIP/, /service\/plain\s+ClusterIP/, /deployment\.apps\/web\s+2\/2/, /replicaset\.apps\/web-/, /job\.batch\/once\s+Complete/]) {
      assert.match(all, want);
    }
    assert.match(mkOk(['-n', ns, 'get', 'all']), /deployment\.apps\/web/);
  });
});
