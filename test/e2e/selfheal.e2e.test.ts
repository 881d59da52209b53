/**
 * Self-healing (issue 21): every process `mkctl cluster up` starts is supervised. kill -9 of each
 * kind heals without a human (a new process, its health endpoint answers, the restart and the
 * SIGKILL recorded in `mkctl cluster status`), and afterwards the cluster still serves and a
 * Deployment still converges.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectl, kubectlOk, ROOT, uniqueName, waitFor, waitForDefaultServiceAccount } from './lib/cluster.js';
import { dashboardRequest } from './lib/browser.js';

const ns = uniqueName('e2e-selfheal');
const RUN = join(ROOT, '.mk8s', 'run');
const STATUS = join(ROOT, '.mk8s', 'supervisor', 'status.json');
const PKI = join(ROOT, '.mk8s', 'pki');
const mkctl = (args: string[], timeoutMs = 120_000) => spawnSync(process.execPath, [join(ROOT, 'mkctl/dist/main.js'), ...args], { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, MK8S_ROOT: ROOT } });

interface ProcStatus { state: string; pid?: number; restarts: number; lastExit?: { code: number | null; signal: string | null; at: string } }
const status = (name: string): ProcStatus | undefined => {
  try { return (JSON.parse(readFileSync(STATUS, 'utf8')) as { processes: Record<string, ProcStatus> }).processes[name]; } catch { return undefined; }
};
const pidOf = (name: string): number => Number(readFileSync(join(RUN, `${name}.pid`), 'utf8').trim());
const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); } catch { return false; }
  try { return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
};
async function httpOk(url: string): Promise<boolean> {
  try { const r = await fetch(url, { signal: AbortSignal.timeout(2000) }); await r.arrayBuffer(); return r.ok; } catch { return false; }
}
const etcdHealthy = (port: number): boolean => spawnSync('etcdctl', ['--endpoints', `https://127.0.0.1:${port}`, '--cacert', join(PKI, 'etcd/ca.crt'),
  '--cert', join(PKI, 'apiserver-etcd-client.crt'), '--key', join(PKI, 'apiserver-etcd-client.key'), 'endpoint', 'health'], { encoding: 'utf8', timeout: 10_000 }).status === 0;
const readyz = (): boolean => kubectl(['get', '--raw', '/readyz'], { timeoutMs: 10_000 }).code === 0;

let nodes: { name: string; ip: string }[] = [];

/** A Deployment of busybox sleepers (the image is built offline: IfNotPresent). */
const deployment = (name: string, replicas: number) => kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sleep, "3600"]}
` });

before(() => {
  assert.ok(existsSync(STATUS), 'the cluster runs under its supervisor');
  nodes = (JSON.parse(kubectlOk(['get', 'nodes', '-o', 'json'])).items as { metadata: { name: string }; status: { addresses: { type: string; address: string }[] } }[])
    .map((n) => ({ name: n.metadata.name, ip: n.status.addresses.find((a) => a.type === 'InternalIP')!.address }));
  assert.ok(nodes.length > 0, 'nodes are registered');
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
  waitForDefaultServiceAccount(ns);
});
after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

/** Restart counts right after this file's kills (an earlier file, robustness.e2e, may already have killed a member). */
const restartsAfterKill = new Map<string, number>();

/** kill -9 name, then wait for the supervisor's new process and for healthy() */
async function killAndHeal(name: string, healthy: () => boolean | Promise<boolean>): Promise<void> {
  const before = status(name);
  assert.equal(before?.state, 'running', `${name} is supervised and running`);
  const pid = pidOf(name);
  assert.ok(alive(pid), `${name} pid ${pid} alive`);
  process.kill(pid, 'SIGKILL');
  const next = await waitFor(() => { const s = status(name); return s?.state === 'running' && s.pid !== pid && s.pid && alive(s.pid) ? s : undefined; }, { timeoutMs: 60_000, what: `${name} started again` });
  assert.equal(pidOf(name), next.pid, 'the pid file names the new process');
  assert.equal(next.restarts, before!.restarts + 1);
  assert.equal(next.lastExit?.signal, 'SIGKILL');
  restartsAfterKill.set(name, next.restarts);
  await waitFor(healthy, { timeoutMs: 90_000, what: `${name} healthy again` });
}

test('kill -9 of an etcd member: restarted, healthy, the apiserver serves', async () => {
  await killAndHeal('etcd-2', () => etcdHealthy(22379));
  await waitFor(readyz, { timeoutMs: 30_000, what: '/readyz' });
});

test('kill -9 of the apiserver: restarted and serving', async () => {
  await killAndHeal('apiserver', readyz);
});

test('kill -9 of the controller-manager and the scheduler: restarted and healthy', async () => {
  await killAndHeal('controller-manager', () => httpOk('http://127.0.0.1:10257/healthz'));
  await killAndHeal('scheduler', () => httpOk('http://127.0.0.1:10259/healthz'));
});

test('kill -9 of a node\'s shim, kubelet and kube-proxy: restarted, the node Ready', async () => {
  const n = nodes[0]!;
  const nodeReady = (): boolean => /True/.test(kubectlOk(['get', 'node', n.name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']));
  await killAndHeal(`${n.name}-cri-docker`, () => existsSync(join(ROOT, '.mk8s', 'nodes', n.name, 'cri.sock')));
  await killAndHeal(`${n.name}-kubelet`, async () => (await httpOk(`http://${n.ip}:10248/healthz`)) && nodeReady());
  await killAndHeal(`${n.name}-kube-proxy`, () => httpOk(`http://${n.ip}:10256/healthz`));
});

test('kill -9 of the add-ons (metrics-server, dashboard): restarted, serving again', async () => {
  // metrics.k8s.io is served again through the aggregator (its APIService Available, nodes listed).
  const metricsServed = (): boolean => {
    const r = kubectl(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes'], { timeoutMs: 10_000 });
    try { return r.code === 0 && (JSON.parse(r.stdout) as { items: unknown[] }).items.length > 0; } catch { return false; }
  };
  await killAndHeal('metrics-server', metricsServed);
  assert.equal(kubectlOk(['get', 'apiservice', 'v1beta1.metrics.k8s.io', '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}']), 'True');
  await killAndHeal('dashboard', async () => { try { return (await dashboardRequest('/healthz')).status === 200; } catch { return false; } });
});

test('after the kills a Deployment converges and cluster status shows the restarts', async () => {
  deployment('web', 2);
  kubectlOk(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=150s'], { timeoutMs: 160_000 });
  kubectlOk(['-n', ns, 'scale', 'deployment', 'web', '--replicas', '3']);
  await waitFor(() => JSON.parse(kubectlOk(['-n', ns, 'get', 'deployment', 'web', '-o', 'json'])).status?.availableReplicas === 3, { timeoutMs: 120_000, what: '3 available replicas' });
  const st = mkctl(['cluster', 'status'], 30_000);
  assert.equal(st.status, 0, st.stdout + st.stderr);
  assert.match(st.stdout, /^supervisor: running, pid \d+$/m);
  for (const name of ['apiserver', 'etcd-2']) {
    const restarts = restartsAfterKill.get(name);
    assert.ok(restarts !== undefined, `${name} was killed by an earlier test of this file`);
    assert.match(st.stdout, new RegExp(`^${name}\\s+running\\s+\\d+\\s+\\S+\\s+${restarts}\\s+signal SIGKILL, `, 'm'));
  }
});

test('mkctl chaos kill etcd-leader --watch: a new leader, the old one back, converged', () => {
  const r = mkctl(['chaos', 'kill', 'etcd-leader', '--watch', '--timeout', '120'], 150_000);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /sent SIGKILL to etcd-\d \(pid \d+\)/);
  assert.match(r.stdout, /process etcd-\d: running pid \d+ -> /);
  assert.match(r.stdout, /converged$/m);
});

test('mkctl chaos stop scheduler-leader: SIGSTOP, then SIGCONT after the pause', () => {
  const r = mkctl(['chaos', 'stop', 'scheduler-leader', '--seconds', '2'], 60_000);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /sent SIGSTOP to scheduler \(pid (\d+)\)[\s\S]*sent SIGCONT to scheduler \(pid \1\)/);
  assert.doesNotMatch(readFileSync(`/proc/${pidOf('scheduler')}/stat`, 'utf8'), /\) T /, 'running again');
});

test('etcd snapshot save, delete, restore: the objects are back and resourceVersions continue', async () => {
  const snap = join(ROOT, '.mk8s', `selfheal-${Date.now()}.db`);
  const rv = (o: { metadata: { resourceVersion: string } }) => BigInt(o.metadata.resourceVersion);
  try {
    kubectlOk(['-n', ns, 'create', 'configmap', 'kept', '--from-literal', 'k=v']);
    deployment('snap', 1);
    const kept = JSON.parse(kubectlOk(['-n', ns, 'get', 'configmap', 'kept', '-o', 'json']));
    const save = mkctl(['etcd', 'snapshot', 'save', snap], 60_000);
    assert.equal(save.status, 0, save.stdout + save.stderr);
    assert.match(save.stdout, /^Saved snapshot of etcd \(from etcd-\d\) at revision \d+: \d+ keys/m);
    kubectlOk(['-n', ns, 'delete', 'configmap', 'kept']);
    kubectlOk(['-n', ns, 'delete', 'deployment', 'snap']);
    const later = JSON.parse(kubectlOk(['-n', ns, 'create', 'configmap', 'later', '-o', 'json']));

    const restore = mkctl(['etcd', 'snapshot', 'restore', snap], 240_000);
    assert.equal(restore.status, 0, restore.stdout + restore.stderr);
    assert.match(restore.stdout, /^Restored/m);
    await waitFor(readyz, { timeoutMs: 60_000, what: '/readyz after the restore' });
    const back = JSON.parse(kubectlOk(['-n', ns, 'get', 'configmap', 'kept', '-o', 'json']));
    assert.deepEqual(back.data, { k: 'v' });
    assert.equal(back.metadata.uid, kept.metadata.uid);
    assert.equal(back.metadata.resourceVersion, kept.metadata.resourceVersion, 'the object as it was, resourceVersion and all');
    assert.match(kubectl(['-n', ns, 'get', 'configmap', 'later']).stderr, /NotFound/, 'made after the snapshot: gone');
    kubectlOk(['-n', ns, 'get', 'deployment', 'snap']);
    const fresh = JSON.parse(kubectlOk(['-n', ns, 'create', 'configmap', 'fresh', '-o', 'json']));
    assert.ok(rv(fresh) > rv(later), `a new resourceVersion (${fresh.metadata.resourceVersion}) continues past every one served before (${later.metadata.resourceVersion})`);
    // The controllers relisted (their watches got 410 Gone): a scale of the restored Deployment is acted on.
    kubectlOk(['-n', ns, 'scale', 'deployment', 'snap', '--replicas', '2']);
    await waitFor(() => JSON.parse(kubectlOk(['-n', ns, 'get', 'deployment', 'snap', '-o', 'json'])).status?.availableReplicas === 2, { timeoutMs: 150_000, what: 'the restored Deployment scaled to 2' });
    const st = mkctl(['etcd', 'status'], 30_000);
    assert.equal(st.status, 0, st.stdout + st.stderr);
    assert.equal(st.stdout.split('\n').filter((l) => /^etcd-\d\s.*\strue\s/.test(l)).length, 1, 'one leader among the restored members');
  } finally {
    spawnSync('rm', ['-f', snap]);
  }
});

test('kubectl delete node: the pod GC force-deletes the pods bound to it after its quarantine', async () => {
  const ghost = `${ns}-ghost`;
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Node\nmetadata: {name: ${ghost}}\n` });
  try {
    // Bound to a node no kubelet runs: it stays Pending there until someone collects it.
    kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: `apiVersion: v1\nkind: Pod\nmetadata: {name: orphan}\nspec:\n  nodeName: ${ghost}\n  containers:\n  - {name: c, image: busybox, command: [sleep, "3600"]}\n` });
    assert.equal(kubectlOk(['-n', ns, 'get', 'pod', 'orphan', '-o', 'jsonpath={.spec.nodeName}']), ghost);
    kubectlOk(['delete', 'node', ghost]);
    // Upstream: 40 s of quarantine, a GC pass every 20 s.
    await waitFor(() => kubectl(['-n', ns, 'get', 'pod', 'orphan', '-o', 'name']).code !== 0, { timeoutMs: 150_000, intervalMs: 2_000, what: 'the orphaned pod deleted by the pod GC' });
  } finally {
    kubectl(['delete', 'node', ghost, '--ignore-not-found']);
  }
});
