/**
 * The short robustness subset of issue 21 (the one `make test` runs; `make chaos` runs this file
 * alone): T1 lost updates, T4 an etcd follower killed under writes, T9 a kubelet restart. Each
 * injects its fault through `mkctl chaos`, prints its figures with the goal beside them, and
 * asserts the goal (0 lost, 0 restarts). Wall-clock figures are printed, never asserted.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ConfigMaps, isConflict, type KubeObject } from '@mk8s/api';
import { createClientset, loadKubeConfig, restConfigFromKubeConfig } from '@mk8s/client';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor, waitForDefaultServiceAccount } from './lib/cluster.js';

const ns = uniqueName('e2e-robust');
const client = createClientset({ restConfig: restConfigFromKubeConfig(loadKubeConfig(KUBECONFIG)), userAgent: 'e2e-robustness', qps: 0 });
type Cm = KubeObject & { data?: Record<string, string> };
const cms = () => client.resource<Cm>(ConfigMaps, ns);
const figure = (line: string) => console.log(`FIGURE ${line}`);
const mkctl = (args: string[], timeoutMs = 180_000) => spawnSync(process.execPath, [join(ROOT, 'mkctl/dist/main.js'), ...args], { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, MK8S_ROOT: ROOT } });

before(() => {
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
  waitForDefaultServiceAccount(ns);
});
after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

test('T1: 8 clients racing read-modify-write on one object lose no update', async () => {
  const CLIENTS = 8, EACH = 15;
  await cms().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'counter', namespace: ns }, data: { n: '0' } });
  let conflicts = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    for (let i = 0; i < EACH; i++) {
      for (;;) {
        const cm = await cms().get('counter');
        try {
          await cms().update({ ...cm, data: { n: String(Number(cm.data?.['n'] ?? 0) + 1) } });
          break;
        } catch (err) { if (isConflict(err)) conflicts++; else throw err; }
      }
    }
  }));
  const n = Number((await cms().get('counter')).data?.['n']);
  figure(`T1 lost updates: ${CLIENTS * EACH - n} (goal 0); 409 Conflicts: ${conflicts}; ${CLIENTS * EACH} updates in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  assert.equal(n, CLIENTS * EACH);
});

test('T4: an etcd follower killed -9 under writes loses no acknowledged write', async () => {
  const acked: string[] = [];
  let failed = 0, stop = false, lastAck = Date.now(), maxGapMs = 0;
  const writer = (async () => {
    for (let i = 0; !stop; i++) {
      try {
        await cms().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}`, namespace: ns }, data: { i: String(i) } });
        acked.push(`w-${i}`);
        const now = Date.now(); maxGapMs = Math.max(maxGapMs, now - lastAck); lastAck = now;
      } catch { failed++; }
    }
  })();
  await waitFor(() => acked.length >= 20, { timeoutMs: 30_000, what: 'writes before the fault' });
  const chaos = spawn(process.execPath, [join(ROOT, 'mkctl/dist/main.js'), 'chaos', 'kill', 'etcd-follower', '--watch', '--timeout', '120'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MK8S_ROOT: ROOT } });
  let out = '';
  chaos.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  chaos.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const code = await new Promise<number | null>((r) => chaos.on('exit', r));
  const afterFault = acked.length;
  await waitFor(() => acked.length >= afterFault + 20, { timeoutMs: 30_000, what: 'writes after the member is back' });
  stop = true;
  await writer;
  assert.equal(code, 0, out);
  assert.match(out, /sent SIGKILL to etcd-\d/);
  const stored = new Set((await cms().list()).items.map((c) => c.metadata.name));
  const lost = acked.filter((n) => !stored.has(n));
  figure(`T4 etcd follower kill -9: acknowledged writes lost ${lost.length} (goal 0) of ${acked.length}; failed (uncertain) writes ${failed}; longest write stall ${(maxGapMs / 1000).toFixed(2)}s`);
  assert.deepEqual(lost, []);
});

test('T9: a kubelet killed -9 and restarted restarts no container', async () => {
  const node = kubectlOk(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
  kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: `apiVersion: apps/v1
kind: Deployment
metadata: {name: sleepers}
spec:
  replicas: 2
  selector: {matchLabels: {app: sleepers}}
  template:
    metadata: {labels: {app: sleepers}}
    spec:
      nodeSelector: {kubernetes.io/hostname: ${node}}
      terminationGracePeriodSeconds: 1
      containers:
      - {name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sleep, "3600"]}
` });
  kubectlOk(['-n', ns, 'rollout', 'status', 'deployment/sleepers', '--timeout=120s'], { timeoutMs: 130_000 });
  type Pods = { items: { metadata: { name: string }; status: { containerStatuses?: { restartCount: number; containerID?: string }[] } }[] };
  const look = () => (JSON.parse(kubectlOk(['-n', ns, 'get', 'pods', '-l', 'app=sleepers', '-o', 'json'])) as Pods).items
    .map((p) => `${p.metadata.name} ${p.status.containerStatuses?.map((c) => `${c.containerID}:${c.restartCount}`).join(',')}`).sort();
  const restarts = () => (JSON.parse(kubectlOk(['-n', ns, 'get', 'pods', '-l', 'app=sleepers', '-o', 'json'])) as Pods).items
    .reduce((s, p) => s + (p.status.containerStatuses ?? []).reduce((a, c) => a + c.restartCount, 0), 0);
  const before = look();
  const r0 = restarts();
  const renewed = (): string => kubectlOk(['-n', 'kube-node-lease', 'get', 'lease', node, '-o', 'jsonpath={.spec.renewTime}']);
  const l0 = renewed();
  const t0 = Date.now();
  const r = mkctl(['chaos', 'kill', `kubelet/${node}`, '--watch', '--timeout', '120']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  await waitFor(() => renewed() !== l0, { timeoutMs: 30_000, what: 'the Lease renewed by the new kubelet' });
  figure(`T9 kubelet kill -9: container restarts ${restarts() - r0} (goal 0); node Lease renewed ${((Date.now() - t0) / 1000).toFixed(1)}s after the kill`);
  assert.deepEqual(look(), before, 'same containers, same restart counts');
});
