/**
 * The kubelet against the real cri-docker shim (in a throwaway netns, real dockerd) and the real
 * apiserver on a real etcd: pod start, container death → PLEG → restart policy, logs and exec
 * through the kubelet API, graceful delete and cleanup.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { startTestShim, ensureImages, waitFor, type TestShim } from '@mk8s/cri-docker/testing';
import { createClientset, type RestClientset } from '@mk8s/client';
import { Pods, Nodes, type Pod, type KubeObject } from '@mk8s/api';
import { silentLogger } from '@mk8s/component-base';
import { createKubelet, type Kubelet } from '../src/index.js';

type PodObj = Pod & KubeObject;
let api: TestApiServer; let shim: TestShim; let client: RestClientset; let kubelet: Kubelet;
const ac = new AbortController();
let running: Promise<void>;
let rootDir: string;

before(async () => {
  ensureImages();
  api = await startTestApiServer();
  shim = await startTestShim();
  client = createClientset({ server: api.url, userAgent: 'kubelet-int-test' });
  rootDir = mkdtempSync(join(tmpdir(), 'mk8s-kubelet-int-'));
  kubelet = createKubelet({
    nodeName: shim.nodeName, nodeIP: '127.0.0.1', rootDir, client, runtime: shim.runtime, images: shim.images,
    logger: silentLogger(), port: 0, address: '127.0.0.1', crashBackoffInitialMs: 1000,
  });
  running = kubelet.run(ac.signal);
  await kubelet.ready;
});

after(async () => {
  ac.abort();
  await running?.catch(() => undefined);
  await shim?.teardown();
  await api?.stop();
  if (rootDir) rmSync(rootDir, { recursive: true, force: true });
});

const pods = () => client.resource<PodObj>(Pods, 'default');
const podOf = (name: string, spec: Partial<NonNullable<Pod['spec']>>): PodObj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { nodeName: shim.nodeName, terminationGracePeriodSeconds: 5, containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo hello; exec sleep 3600'] }], ...spec },
});

test('registers the node with capacity, addresses and a Ready condition', async () => {
  const node = await waitFor(async () => {
    const n = await client.resource<KubeObject>(Nodes).get(shim.nodeName).catch(() => undefined);
    return (n?.['status'] as { conditions?: { type: string }[] } | undefined)?.conditions?.length ? n : undefined;
  }, 'node registration');
  const st = node['status'] as { capacity: Record<string, string>; addresses: { type: string }[]; nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string } };
  assert.equal(st.capacity['pods'], '110');
  assert.deepEqual(st.addresses.map((a) => a.type), ['InternalIP', 'Hostname']);
  assert.equal(st.nodeInfo.kubeletVersion, 'v1.32.0-mk8s');
  assert.match(st.nodeInfo.containerRuntimeVersion, /^docker:\/\//);
  assert.equal(node.metadata.labels?.['kubernetes.io/hostname'], shim.nodeName);
});

test('runs a pod, restarts a killed container, serves logs and exec, deletes gracefully', async () => {
  await pods().create(podOf('int-web', {}));
  const runningPod = await waitFor(async () => {
    const p = await pods().get('int-web');
    return p.status?.phase === 'Running' && p.status.podIP && p.status.containerStatuses?.[0]?.ready ? p : undefined;
  }, 'pod Running', 60_000);
  assert.ok(runningPod.status?.podIP?.startsWith(shim.podCidr.split('.').slice(0, 3).join('.')));
  const firstId = runningPod.status?.containerStatuses?.[0]?.containerID ?? '';

  // Logs through the kubelet API.
  const logs = await waitFor(async () => {
    const r = await fetch(`http://127.0.0.1:${kubelet.port()}/containerLogs/default/int-web/c`);
    const t = await r.text();
    return t.includes('hello') ? t : undefined;
  }, 'logs');
  assert.equal(logs, 'hello\n');

  // Exec over WebSocket v5.channel.k8s.io with the exit code in the channel-3 Status.
  const exec = await new Promise<{ out: string; status: { status: string; details?: { causes?: { message: string }[] } } }>((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${kubelet.port()}/exec/default/int-web/c?command=sh&command=-c&command=echo%20out%3B%20exit%203&stdout=true&stderr=true`, ['v5.channel.k8s.io']);
    let out = ''; let status: unknown;
    ws.on('message', (d: Buffer) => { if (d[0] === 1) out += d.subarray(1).toString(); if (d[0] === 3) status = JSON.parse(d.subarray(1).toString()); });
    ws.on('close', () => resolve({ out, status: status as never }));
    ws.on('error', reject);
  });
  assert.equal(exec.out, 'out\n');
  assert.equal(exec.status.status, 'Failure');
  assert.equal(exec.status.details?.causes?.[0]?.message, '3');

  // Container death → PLEG → restart (restartPolicy Always).
  await shim.docker.getContainer(firstId.replace('docker://', '')).kill();
  const restarted = await waitFor(async () => {
    const p = await pods().get('int-web');
    const cs = p.status?.containerStatuses?.[0];
    return cs?.restartCount === 1 && cs.state?.running ? p : undefined;
  }, 'restart after kill', 60_000);
  assert.notEqual(restarted.status?.containerStatuses?.[0]?.containerID, firstId);
  assert.equal(restarted.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode, 137);

  // Graceful delete: the kubelet stops the containers and removes the object.
  await pods().delete('int-web');
  await waitFor(async () => { try { await pods().get('int-web'); return false; } catch { return true; } }, 'pod gone', 30_000);
  await waitFor(async () => (await shim.runtime.listContainers({ labelSelector: { 'io.kubernetes.pod.name': 'int-web' } })).length === 0, 'containers removed', 30_000);
});

test('restartPolicy Never: a failing container makes the pod Failed with its exit code', async () => {
  await pods().create(podOf('int-fail', { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'exit 7'] }] }));
  const p = await waitFor(async () => { const x = await pods().get('int-fail'); return x.status?.phase === 'Failed' ? x : undefined; }, 'pod Failed', 60_000);
  const t = p.status?.containerStatuses?.[0]?.state?.terminated;
  assert.equal(t?.exitCode, 7);
  assert.equal(t?.reason, 'Error');
  await pods().delete('int-fail', { gracePeriodSeconds: 0 });
});
