/**
 * Real kubectl 1.32 against the apiserver with the controller-manager running: rollout status
 * returns when a rollout completes, rollout history / undo, scale and cascading delete behave as
 * on Kubernetes.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { Deployments, Pods, ReplicaSets, type Deployment } from '@mk8s/api';
import { createClientset, type Clientset } from '@mk8s/client';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { createControllerManager } from '../src/index.js';
import type { Obj } from '../src/util/meta.js';
import { createNamespace, PodSim, waitFor } from './helpers.js';

const run = promisify(execFile);
let server: TestApiServer;
let client: Clientset;
const ac = new AbortController();
let running: Promise<void>;
let sim: PodSim;
const NS = 'kubectl';

const kubectl = async (...args: string[]): Promise<string> => {
  const { stdout } = await run('kubectl', ['--kubeconfig', server.kubeconfigPath, '-n', NS, ...args], { timeout: 60_000 });
  return stdout;
};

before(async () => {
  server = await startTestApiServer();
  client = createClientset({ server: server.url, qps: 0 });
  const cm = createControllerManager({ client, healthPort: -1, leaderElect: false, controllers: ['replicaset', 'deployment', 'garbagecollector'] });
  running = cm.run(ac.signal);
  await cm.ready;
  await createNamespace(client, NS);
  sim = new PodSim(client, NS);
  await sim.start();
});
after(async () => {
  sim?.stop();
  ac.abort();
  await running?.catch(() => undefined);
  await server?.stop();
});

const manifest = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: web
        image: ${image}
`;

test('kubectl rollout status / history / undo / scale / delete', async () => {
  const file = join(tmpdir(), `mk8s-cm-kubectl-${process.pid}.yaml`);
  await writeFile(file, manifest('busybox:1'));
  await kubectl('apply', '-f', file);
  const status = await kubectl('rollout', 'status', 'deploy/web', '--timeout=60s');
  assert.match(status, /deployment "web" successfully rolled out/);

  await kubectl('set', 'image', 'deploy/web', 'web=busybox:2');
  assert.match(await kubectl('rollout', 'status', 'deploy/web', '--timeout=60s'), /successfully rolled out/);
  const history = await kubectl('rollout', 'history', 'deploy/web');
  assert.match(history, /REVISION\s+CHANGE-CAUSE/);
  assert.match(history, /^1\s/m);
  assert.match(history, /^2\s/m);

  assert.match(await kubectl('rollout', 'undo', 'deploy/web'), /deployment.apps\/web rolled back/);
  assert.match(await kubectl('rollout', 'status', 'deploy/web', '--timeout=60s'), /successfully rolled out/);
  const d = await client.resource<Obj<Deployment>>(Deployments, NS).get('web');
  assert.equal(d.spec?.template?.spec?.containers[0]?.image, 'busybox:1');
  assert.match(await kubectl('rollout', 'history', 'deploy/web'), /^3\s/m);

  assert.match(await kubectl('rollout', 'restart', 'deploy/web'), /deployment.apps\/web restarted/);
  assert.match(await kubectl('rollout', 'status', 'deploy/web', '--timeout=60s'), /successfully rolled out/);
  assert.match(await kubectl('rollout', 'history', 'deploy/web'), /^4\s/m);

  assert.match(await kubectl('scale', 'deploy/web', '--replicas=5'), /deployment.apps\/web scaled/);
  await waitFor('5 pods', async () => (await client.resource(Pods, NS).list()).items.filter((p) => !p.metadata.deletionTimestamp).length === 5);
  assert.match(await kubectl('rollout', 'status', 'deploy/web', '--timeout=60s'), /successfully rolled out/);

  await kubectl('delete', 'deploy/web');
  await waitFor('ReplicaSets and pods gone', async () => (await client.resource(ReplicaSets, NS).list()).items.length === 0 && (await client.resource(Pods, NS).list()).items.length === 0);
});
