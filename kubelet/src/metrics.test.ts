import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { Container, PodSandbox } from '@mk8s/proto';
import { newKubeletMetrics, renderCadvisor } from './metrics.js';

const sandbox = (uid: string, state: PodSandbox['state']): PodSandbox =>
  ({ id: `sb-${uid}`, metadata: { name: uid, namespace: 'default', uid, attempt: 0 }, state, createdAt: 0, labels: { 'io.kubernetes.pod.uid': uid }, annotations: {}, runtimeHandler: '' });
const container = (id: string, state: Container['state']): Container =>
  ({ id, podSandboxId: 'sb', metadata: { name: id, attempt: 0 }, image: { image: 'x' }, imageRef: 'x', state, createdAt: 0, labels: {}, annotations: {} });

describe('kubelet metrics', () => {
  test('a relist sets running pods (ready sandboxes by pod) and containers by state', async () => {
    const reg = new Registry();
    const m = newKubeletMetrics(reg, 'node-1');
    m.observeRelist({ startMs: 1000, durationMs: 30, sandboxes: [sandbox('a', 'SANDBOX_READY'), sandbox('b', 'SANDBOX_NOTREADY')],
      containers: [container('1', 'CONTAINER_RUNNING'), container('2', 'CONTAINER_RUNNING'), container('3', 'CONTAINER_EXITED'), container('4', 'CONTAINER_CREATED')] });
    m.observeRelist({ startMs: 2000, durationMs: 10, sandboxes: [], containers: [] });
    const text = await reg.metrics();
    assert.match(text, /^kubelet_running_pods 0$/m, 'the latest relist wins');
    assert.match(text, /^kubelet_running_containers\{container_state="running"\} 0$/m);
    assert.match(text, /^kubelet_pleg_relist_duration_seconds_count 2$/m);
    assert.match(text, /^kubelet_pleg_relist_duration_seconds_bucket\{le="0.01"\} 1$/m);
    assert.match(text, /^kubelet_pleg_relist_interval_seconds_bucket\{le="1"\} 1$/m);
    assert.match(text, /^kubelet_node_name\{node="node-1"\} 1$/m);
    const reg2 = new Registry();
    newKubeletMetrics(reg2, 'n').observeRelist({ startMs: 0, durationMs: 1, sandboxes: [sandbox('a', 'SANDBOX_READY')], containers: [container('1', 'CONTAINER_RUNNING'), container('3', 'CONTAINER_EXITED')] });
    const t2 = await reg2.metrics();
    assert.match(t2, /^kubelet_running_pods 1$/m);
    assert.match(t2, /^kubelet_running_containers\{container_state="running"\} 1$/m);
    assert.match(t2, /^kubelet_running_containers\{container_state="exited"\} 1$/m);
  });

  test('pod start duration: first sight to the first Running status, once per pod', async () => {
    const reg = new Registry();
    const m = newKubeletMetrics(reg, 'n');
    m.podSeen('u1', 1_000);
    m.podSeen('u1', 5_000);                                  // seen again: the first time counts
    m.podPhase('u1', 'Pending', 2_000);
    m.podPhase('u1', 'Running', 4_500);
    m.podPhase('u1', 'Running', 9_000);
    m.podPhase('unseen', 'Running', 9_000);
    const text = await reg.metrics();
    assert.match(text, /^kubelet_pod_start_duration_seconds_count 1$/m);
    assert.match(text, /^kubelet_pod_start_duration_seconds_sum 3.5$/m);
  });
});

describe('renderCadvisor', () => {
  test('per-container CPU and memory, per-pod network by interface', async () => {
    const labels = { 'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'prod', 'io.kubernetes.container.name': 'app' };
    const text = await renderCadvisor({
      containers: [{ attributes: { id: 'abcdef0123456789', metadata: { name: 'app', attempt: 0 }, labels, annotations: {} },
        cpu: { timestamp: 0, usageCoreNanoSeconds: { value: 2_500_000_000 } }, memory: { timestamp: 0, workingSetBytes: { value: 4096 }, usageBytes: { value: 8192 }, rssBytes: { value: 1024 } } }],
      sandboxes: [{ attributes: { id: 'sb0123456789abcd', metadata: { name: 'web', namespace: 'prod', uid: 'u1', attempt: 0 }, labels, annotations: {} },
        linux: { network: { timestamp: 0, interfaces: [{ name: 'eth0', rxBytes: { value: 10 }, rxErrors: { value: 1 }, txBytes: { value: 20 }, txErrors: { value: 0 } }] } } }],
      pods: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'prod', uid: 'u1' }, spec: { containers: [{ name: 'app', image: 'mk8s/testserver:1' }] } }],
    });
    const want = 'container="app",id="/abcdef0123456789",image="mk8s/testserver:1",name="abcdef012345",namespace="prod",pod="web"';
    assert.match(text, new RegExp(`^container_cpu_usage_seconds_total\\{${want}\\} 2.5$`, 'm'));
    assert.match(text, new RegExp(`^container_memory_working_set_bytes\\{${want}\\} 4096$`, 'm'));
    assert.match(text, new RegExp(`^container_memory_usage_bytes\\{${want}\\} 8192$`, 'm'));
    assert.match(text, /^container_network_receive_bytes_total\{container="",id="\/sb0123456789abcd",image="",name="sb0123456789",namespace="prod",pod="web",interface="eth0"\} 10$/m);
    assert.match(text, /^container_network_receive_errors_total\{.*interface="eth0"\} 1$/m);
    assert.match(text, /^container_network_transmit_bytes_total\{.*interface="eth0"\} 20$/m);
  });
});
