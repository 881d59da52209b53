import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@mk8s/component-base/testing';
import { FakeRuntimeService } from '@mk8s/proto/testing';
import { CriError } from '@mk8s/proto';
import type { Pod } from '@mk8s/api';
import { StatsProvider, parseNetDevStats, podStatsFromCri } from './stats-provider.js';
import { summaryToJson } from './stats-summary.js';
import { renderResourceMetrics } from './resource-metrics.js';
import type { ProcessSample } from './node-processes.js';

const MiB = 1024 * 1024;

async function fixture() {
  const clock = new FakeClock(1_700_000_000_000);
  const runtime = new FakeRuntimeService({ now: () => clock.now() });
  const sb = await runtime.runPodSandbox({ metadata: { name: 'web', namespace: 'ns', uid: 'u1', attempt: 0 }, labels: {}, annotations: {} });
  const config = { metadata: { name: 'web', namespace: 'ns', uid: 'u1', attempt: 0 } };
  const app = await runtime.createContainer(sb, { metadata: { name: 'app', attempt: 0 }, image: { image: 'busybox' }, labels: {}, annotations: {} }, config);
  const side = await runtime.createContainer(sb, { metadata: { name: 'side', attempt: 0 }, image: { image: 'busybox' }, labels: {}, annotations: {} }, config);
  await runtime.startContainer(app);
  await runtime.startContainer(side);
  const pod: Pod = {
    metadata: { name: 'web', namespace: 'ns', uid: 'u1' },
    status: { startTime: '2023-11-14T22:10:00Z', containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'busybox', imageID: '', state: { running: { startedAt: '2023-11-14T22:10:05Z' } } }] },
  } as Pod;
  let procs: ProcessSample[] = [
    { key: '10:1', pid: 10, role: 'kubelet', cpuNs: 2e9, rssBytes: 100 * MiB, startTimeMs: 1_699_999_000_000 },
    { key: '11:1', pid: 11, role: 'runtime', cpuNs: 1e9, rssBytes: 50 * MiB, startTimeMs: 1_699_999_000_000 },
  ];
  const provider = new StatsProvider({
    nodeName: 'node-1', runtime, pods: () => [pod], rootDir: '/var/lib/kubelet', clock, nodeStartTimeMs: 1_699_990_000_000,
    processes: { sample: async () => procs },
    readNetDev: async () => 'Inter-| Receive | Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n lo: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n cni0: 9 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0\n eth0: 1000 5 1 0 0 0 0 0 2000 6 2 0 0 0 0 0\n',
    statFs: async () => ({ capacityBytes: 100e9, availableBytes: 40e9, usedBytes: 60e9, inodes: 1000, inodesFree: 400 }),
    volumes: { podVolumes: async (p) => (p.metadata?.uid === 'u1' ? [{ name: 'cache', usedBytes: 1000, inodesUsed: 2, timeMs: clock.now() }] : []), retain: () => {} },
    memoryCapacityBytes: 8192 * MiB,
  });
  const set = (id: string, cpuS: number, ws: number, rate?: number) => runtime.containerUsage.set(id, { usageCoreNanoSeconds: cpuS * 1e9, workingSetBytes: ws, ...(rate !== undefined ? { usageNanoCores: rate } : {}), rootfsBytes: 4096 });
  return { clock, runtime, provider, app, side, sb, set, setProcs: (p: ProcessSample[]) => { procs = p; } };
}

test('the Summary: pods from CRI sandbox stats, the node as its pods plus its processes, rates over the scrape window', async () => {
  const f = await fixture();
  f.set(f.app, 10, 70 * MiB, 1e9);
  f.set(f.side, 1, 10 * MiB);
  const s1 = await f.provider.summary();
  assert.equal(s1.pods.length, 1);
  const pod = s1.pods[0]!;
  assert.deepEqual(pod.podRef, { name: 'web', namespace: 'ns', uid: 'u1' });
  assert.deepEqual(pod.containers.map((c) => [c.name, c.cpu?.usageCoreNanoSeconds, c.cpu?.usageNanoCores, c.memory?.workingSetBytes]), [
    ['app', 10e9, 1e9, 70 * MiB], ['side', 1e9, undefined, 10 * MiB],
  ]);
  assert.equal(pod.containers[0]!.startTimeMs, Date.parse('2023-11-14T22:10:05Z'), 'from the pod status');
  assert.equal(pod.containers[1]!.startTimeMs, Date.parse('2023-11-14T22:10:00Z'), 'not running in the status: the pod start');
  assert.equal(pod.cpu?.usageCoreNanoSeconds, 11e9);
  assert.equal(pod.memory?.workingSetBytes, 80 * MiB);
  assert.equal(pod['ephemeral-storage']?.usedBytes, 8192 + 1000, 'writable layers + volumes');
  assert.equal(pod['ephemeral-storage']?.capacityBytes, 100e9);
  assert.deepEqual(pod.volume, [{ timeMs: f.clock.now(), availableBytes: 40e9, capacityBytes: 100e9, inodesFree: 400, inodes: 1000, usedBytes: 1000, inodesUsed: 2, name: 'cache' }]);
  assert.equal(s1.node.cpu?.usageCoreNanoSeconds, 14e9, 'pods 11 s + kubelet 2 s + runtime 1 s');
  assert.equal(s1.node.cpu?.usageNanoCores, undefined, 'no rate on the first sample');
  assert.equal(s1.node.memory?.workingSetBytes, 230 * MiB);
  assert.equal(s1.node.memory?.availableBytes, (8192 - 230) * MiB);
  assert.deepEqual(s1.node.systemContainers?.map((c) => c.name), ['kubelet', 'runtime', 'pods']);
  assert.deepEqual(s1.node.network, { timeMs: f.clock.now(), name: 'eth0', rxBytes: 1000, rxErrors: 1, txBytes: 2000, txErrors: 2, interfaces: [{ name: 'eth0', rxBytes: 1000, rxErrors: 1, txBytes: 2000, txErrors: 2 }] });
  assert.equal(s1.node.fs?.capacityBytes, 100e9);

  // 15 s later: the app burned 1.5 cores, the kubelet 0.1; the runtime process is gone (its 1 s stays).
  f.clock.step(15_000);
  f.set(f.app, 32.5, 70 * MiB, 1.5e9);
  f.setProcs([{ key: '10:1', pid: 10, role: 'kubelet', cpuNs: 3.5e9, rssBytes: 100 * MiB, startTimeMs: 1_699_999_000_000 }]);
  const s2 = await f.provider.summary();
  assert.equal(s2.node.cpu?.usageCoreNanoSeconds, 14e9 + 22.5e9 + 1.5e9);
  assert.equal(s2.node.cpu?.usageNanoCores, Math.round(24e9 / 15));
  assert.equal(s2.node.systemContainers?.find((c) => c.name === 'kubelet')?.cpu?.usageNanoCores, 1e8);
});

test('only_cpu_and_memory leaves out filesystems and networks', async () => {
  const f = await fixture();
  const s = await f.provider.summary({ onlyCpuAndMemory: true });
  assert.equal(s.node.fs, undefined);
  assert.equal(s.node.network, undefined);
  assert.equal(s.pods[0]!.network, undefined);
  assert.equal(s.pods[0]!.containers[0]!.rootfs, undefined);
  assert.ok(s.pods[0]!.cpu && s.node.cpu && s.node.memory);
});

test('a runtime that cannot be listed fails the summary; /metrics/resource then says scrape_error 1 and nothing else', async () => {
  const f = await fixture();
  f.runtime.injectError('listPodSandboxStats', new CriError('Unavailable', 'connection refused'));
  await assert.rejects(f.provider.summary(), /connection refused/);
  assert.equal(renderResourceMetrics(undefined, 1), [
    '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
    '# TYPE resource_scrape_error gauge', 'resource_scrape_error 1',
    '# HELP scrape_error [ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise',
    '# TYPE scrape_error gauge', 'scrape_error 1', ''].join('\n'));
});

test('the wire form: RFC 3339 times in whole seconds, upstream field names', async () => {
  const f = await fixture();
  f.set(f.app, 10, 70 * MiB, 1e9);
  const j = summaryToJson(await f.provider.summary()) as { node: Record<string, unknown>; pods: Record<string, unknown>[] };
  assert.equal(j.node['startTime'], '2023-11-14T19:26:40Z');
  assert.deepEqual((j.pods[0]!['containers'] as unknown[])[0], {
    name: 'app', startTime: '2023-11-14T22:10:05Z',
    cpu: { time: '2023-11-14T22:13:20Z', usageNanoCores: 1e9, usageCoreNanoSeconds: 10e9 },
    memory: { time: '2023-11-14T22:13:20Z', usageBytes: 70 * MiB, workingSetBytes: 70 * MiB, rssBytes: 70 * MiB },
    rootfs: { time: '2023-11-14T22:13:20Z', usedBytes: 4096, inodesUsed: 1 },
  });
  assert.ok('ephemeral-storage' in j.pods[0]! && 'process_stats' in j.pods[0]!);
});

test('podStatsFromCri keeps one sandbox per pod, the newest attempt', () => {
  const sb = (id: string, attempt: number) => ({ attributes: { id, metadata: { name: 'p', namespace: 'n', uid: 'u', attempt }, labels: {}, annotations: {} }, linux: { containers: [] } });
  const pods = podStatsFromCri([sb('old', 0), sb('new', 1)], [], 0);
  assert.equal(pods.length, 1);
});

test('parseNetDevStats leaves out loopback, veths, docker and cni bridges', () => {
  const text = ' lo: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n veth1234: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n cni0: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n eth0: 5 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n';
  assert.deepEqual(parseNetDevStats(text), [{ name: 'eth0', rxBytes: 5, rxErrors: 0, txBytes: 7, txErrors: 0 }]);
});
