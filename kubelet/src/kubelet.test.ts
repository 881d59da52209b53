import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { FakeClientset, FakeEventRecorder, FakeInformerFactory } from '@mk8s/client/testing';
import { FakeImageService, FakeRuntimeService } from '@mk8s/proto/testing';
import { Pods, type PodStatus } from '@mk8s/api';
import { createKubelet } from './kubelet.js';
import type { PodObj } from './objects.js';
import { FakeProber } from './testing/fake-prober.js';

const roots: string[] = [];
after(() => { for (const r of roots) rmSync(r, { recursive: true, force: true }); });

/** A whole kubelet (informers, pod workers, PLEG, status manager) on fakes and a FakeClock. */
function fixture(o: { startError?: (c: import('@mk8s/proto').ContainerConfig) => string | undefined } = {}) {
  const clock = new FakeClock();
  const now = () => clock.now();
  const images = new FakeImageService({ images: ['busybox:1.36'], now });
  const runtime = new FakeRuntimeService({ now, images, ...(o.startError ? { startError: o.startError } : {}) });
  const client = new FakeClientset({ clock });
  const informers = new FakeInformerFactory(client);
  const rootDir = mkdtempSync(join(tmpdir(), 'kubelet-test-'));
  roots.push(rootDir);
  const kubelet = createKubelet({
    nodeName: 'node-1', nodeIP: '10.240.0.11', rootDir, client, runtime, images, clock, informers,
    recorder: new FakeEventRecorder(), prober: new FakeProber(), logger: silentLogger(), port: -1, registerNode: false,
  });
  const podInformer = informers.informerFor<PodObj>(Pods, { fieldSelector: 'spec.nodeName=node-1' });
  /** Lets every sync, relist and status write that is due run to its end. */
  const settle = async () => {
    for (let i = 0; i < 4; i++) {
      await kubelet.workers.idle();
      for (let j = 0; j < 20; j++) await new Promise((r) => setImmediate(r));
    }
  };
  /** Runs the kubelet, lets its first relist find an empty runtime, then hands it pod. */
  const start = async (pod: PodObj) => {
    const ctl = new AbortController();
    const running = kubelet.run(ctl.signal);
    await kubelet.ready;
    await settle();
    podInformer.add(pod);
    await settle();
    return { stop: async () => { ctl.abort(); await running; } };
  };
  return { clock, runtime, images, client, rootDir, kubelet, podInformer, settle, start };
}

test('a container that exits before its start is read back still gets every CrashLoopBackOff window reported', async () => {
  const f = fixture();
  // `sh -c "echo crashing; exit 1"`: the process is gone before the kubelet's containerStatus
  // after startContainer, so the sync that started it already reads it exited.
  const starts: number[] = [];
  const start = f.runtime.startContainer.bind(f.runtime);
  f.runtime.startContainer = async (id) => {
    await start(id);
    starts.push(f.clock.now());
    f.runtime.exitContainer(id, 1);
  };
  const [pod] = f.client.seed({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'crash', namespace: 'default' },
    spec: { nodeName: 'node-1', restartPolicy: 'Always', containers: [{ name: 'c', image: 'busybox:1.36' }] },
    status: { phase: 'Pending' },
  } as PodObj);
  const ctl = new AbortController();
  const running = f.kubelet.run(ctl.signal);
  await f.kubelet.ready;
  await f.settle(); // the first relist: the runtime holds nothing
  f.podInformer.add(pod as PodObj);
  await f.settle();
  const t0 = f.clock.now();
  for (let t = 0; t < 80_000; t += 100) { f.clock.step(100); await f.settle(); }
  ctl.abort();
  await running;

  const written = f.client.actions().filter((a) => a.verb === 'patch' && a.subresource === 'status')
    .map((a) => ({ status: (a.object as { status: PodStatus }).status }));
  const restarts = starts.map((t) => t - t0);
  // First restart at the next relist, then 10 s, 20 s, 40 s after each exit (upstream's back-off).
  assert.ok(restarts.length >= 4, `restarts at ${restarts.join(', ')} ms`);
  const gaps = restarts.slice(1).map((t, i) => t - restarts[i]!);
  assert.ok(gaps[0]! <= 1_100, `first restart ${gaps[0]} ms after the first exit`);
  for (const [i, d] of [10_000, 20_000, 40_000].entries()) {
    assert.ok(gaps[i + 1]! >= d && gaps[i + 1]! <= d + 1_100, `restart ${i + 2} came ${gaps[i + 1]} ms after the exit before it, want ${d}`);
  }
  // Every window reached the API as waiting/CrashLoopBackOff with its own message, the exit in
  // lastState and the restart count of the container that exited.
  for (const [i, d] of [10, 20, 40].entries()) {
    const restartCount = i + 1;
    const seen = written.map((w) => w.status.containerStatuses?.[0]).find((c) =>
      c?.state?.waiting?.reason === 'CrashLoopBackOff' && c.restartCount === restartCount);
    assert.ok(seen, `no CrashLoopBackOff status written for the ${d}s window; written: ${JSON.stringify(written.map((w) => w.status.containerStatuses?.[0]?.state))}`);
    assert.match(seen.state?.waiting?.message ?? '', new RegExp(`^back-off ${d}s restarting failed container=c pod=crash_default\\(${pod!.metadata.uid}\\)$`));
    assert.equal(seen.lastState?.terminated?.exitCode, 1);
  }
});

test('a restarted kubelet whose pod informer has not synced yet leaves running pods alone', async () => {
  // The first kubelet runs a pod; a second one on the same runtime starts with its pod informer
  // not yet synced. Its first relist wakes the pod's worker; the pod is not known yet, which must
  // not read as "deleted" (that killed every running pod on a kubelet restart under load).
  const f = fixture();
  const [pod] = f.client.seed({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'keep', namespace: 'default' },
    spec: { nodeName: 'node-1', restartPolicy: 'Always', containers: [{ name: 'c', image: 'busybox:1.36' }] },
    status: { phase: 'Pending' },
  } as PodObj);
  const first = new AbortController();
  const running = f.kubelet.run(first.signal);
  await f.kubelet.ready;
  f.podInformer.add(pod as PodObj);
  for (let i = 0; i < 30; i++) { f.clock.step(100); await f.settle(); }
  const sandboxes = await f.runtime.listPodSandbox({ state: 'SANDBOX_READY' });
  const containers = await f.runtime.listContainers({ state: 'CONTAINER_RUNNING' });
  assert.equal(sandboxes.length, 1);
  assert.equal(containers.length, 1);
  first.abort();
  await running;

  const informers = new FakeInformerFactory(f.client);
  const podInformer = informers.informerFor<PodObj>(Pods, { fieldSelector: 'spec.nodeName=node-1' });
  let synced = false;
  podInformer.hasSynced = () => synced;
  const second = createKubelet({
    nodeName: 'node-1', nodeIP: '10.240.0.11', rootDir: f.rootDir, client: f.client, runtime: f.runtime, images: f.images, clock: f.clock, informers,
    recorder: new FakeEventRecorder(), prober: new FakeProber(), logger: silentLogger(), port: -1, registerNode: false,
  });
  const ctl = new AbortController();
  const running2 = second.run(ctl.signal);
  const settle2 = async () => { for (let i = 0; i < 4; i++) { await second.workers.idle(); for (let j = 0; j < 20; j++) await new Promise((r) => setImmediate(r)); } };
  for (let i = 0; i < 30; i++) { f.clock.step(100); await settle2(); }   // relists and housekeeping, unsynced
  assert.deepEqual((await f.runtime.listPodSandbox({ state: 'SANDBOX_READY' })).map((s) => s.id), sandboxes.map((s) => s.id));
  assert.deepEqual((await f.runtime.listContainers({ state: 'CONTAINER_RUNNING' })).map((c) => c.id), containers.map((c) => c.id));

  synced = true;
  podInformer.add(pod as PodObj);
  for (let i = 0; i < 30; i++) { f.clock.step(100); await settle2(); }
  assert.deepEqual((await f.runtime.listPodSandbox()).map((s) => s.id), sandboxes.map((s) => s.id), 'the running sandbox is adopted, no new one');
  assert.deepEqual((await f.runtime.listContainers({ state: 'CONTAINER_RUNNING' })).map((c) => c.id), containers.map((c) => c.id));
  ctl.abort();
  await running2;
});

test('a command that does not exist: RunContainerError, then CrashLoopBackOff; creates bounded by the back-off over 5 minutes', async () => {
  const f = fixture({ startError: (c) => (c.command?.[0] === '/no/such/binary' ? 'exec: "/no/such/binary": stat /no/such/binary: no such file or directory' : undefined) });
  const [pod] = f.client.seed({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nobin', namespace: 'default' },
    spec: { nodeName: 'node-1', restartPolicy: 'Always', containers: [{ name: 'c', image: 'busybox:1.36', command: ['/no/such/binary'] }] },
    status: { phase: 'Pending' },
  } as PodObj);
  const k = await f.start(pod as PodObj);
  for (let t = 0; t < 300_000; t += 500) { f.clock.step(500); await f.settle(); }
  await k.stop();
  const creates = f.runtime.called.filter((m) => m === 'createContainer').length;
  // Upstream: a first restart at once, then 10, 20, 40, 80, 160 s: 7 tries in 5 minutes (was: one every ~0.7 s).
  assert.ok(creates >= 5 && creates <= 8, `${creates} creates in 5 minutes`);
  const written = f.client.actions().filter((a) => a.verb === 'patch' && a.subresource === 'status').map((a) => (a.object as { status: PodStatus }).status.containerStatuses?.[0]);
  assert.ok(written.some((c) => c?.state?.waiting?.reason === 'RunContainerError' && c.lastState?.terminated?.reason === 'StartError' && c.lastState.terminated.exitCode === 128), 'RunContainerError with lastState StartError (128) written');
  const loops = written.filter((c) => c?.state?.waiting?.reason === 'CrashLoopBackOff');
  assert.ok(loops.some((c) => /^back-off 10s /.test(c?.state?.waiting?.message ?? '')));
  assert.ok(loops.some((c) => /^back-off 80s /.test(c?.state?.waiting?.message ?? '')));
  assert.ok(Math.max(...written.map((c) => c?.restartCount ?? 0)) >= 4, 'restarts counted');
});

/** A local-path claim `data` Bound to its PV, whose directory is dir; and a pod that mounts it. */
function claimFixture(f: ReturnType<typeof fixture>, restartPolicy: 'Always' | 'Never') {
  const dir = join(f.rootDir, 'local-path', 'pvc-1_default_data');
  f.client.seed(
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default', uid: 'claim-uid' }, spec: { volumeName: 'pvc-1' }, status: { phase: 'Bound' } } as never,
    { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pvc-1', annotations: { 'pv.kubernetes.io/provisioned-by': 'mk8s.io/local-path' } },
      spec: { hostPath: { path: dir, type: 'DirectoryOrCreate' }, claimRef: { name: 'data', namespace: 'default', uid: 'claim-uid' } }, status: { phase: 'Bound' } } as never,
  );
  const [pod] = f.client.seed({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'user', namespace: 'default' },
    spec: { nodeName: 'node-1', restartPolicy, containers: [{ name: 'c', image: 'busybox:1.36', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] },
    status: { phase: 'Pending' },
  } as PodObj);
  return { dir, pod: pod as PodObj };
}

test('a pod the kubelet found Succeeded is never set up again: its claim\'s directory, once reclaimed, stays gone', async () => {
  // The informer's copy still says Running (our Succeeded not seen back yet, or a lagging watch)
  // when a later sync comes; the PVC and PV are still in the kubelet's object cache. A Delete
  // reclaim has meanwhile removed the directory: setting the volume up again would recreate it.
  const f = fixture();
  const { dir, pod } = claimFixture(f, 'Never');
  const k = await f.start(pod);
  for (let i = 0; i < 10; i++) { f.clock.step(100); await f.settle(); }
  assert.ok(existsSync(dir), 'the claim\'s directory made for the running pod');
  const [c] = await f.runtime.listContainers({ state: 'CONTAINER_RUNNING' });
  f.runtime.exitContainer(c!.id, 0);
  for (let i = 0; i < 20; i++) { f.clock.step(100); await f.settle(); }
  const phases = f.client.actions().filter((a) => a.verb === 'patch' && a.subresource === 'status').map((a) => (a.object as { status: PodStatus }).status.phase);
  assert.ok(phases.includes('Succeeded'), `Succeeded written (${phases.join(', ')})`);

  rmSync(dir, { recursive: true });
  f.podInformer.update({ ...pod, metadata: { ...pod.metadata, labels: { touched: 'yes' } }, status: { phase: 'Running' } });
  for (let i = 0; i < 20; i++) { f.clock.step(100); await f.settle(); }
  await k.stop();
  assert.equal(existsSync(dir), false, 'no volume set up again for a pod the kubelet knows is terminal');
  assert.equal((await f.runtime.listContainers()).filter((x) => x.state === 'CONTAINER_RUNNING').length, 0, 'nothing started again');
});

test('a pod deleted while its sync waits for the relist is cleaned up, not set up again from the copy read before', async () => {
  // A grace-0 delete removes the object at once (no deletionTimestamp is ever seen): the sync
  // already under way must not go on with the live-looking copy it read before it waited.
  const f = fixture();
  const { dir, pod } = claimFixture(f, 'Always');
  const k = await f.start(pod);
  for (let i = 0; i < 10; i++) { f.clock.step(100); await f.settle(); }
  assert.equal((await f.runtime.listContainers({ state: 'CONTAINER_RUNNING' })).length, 1, 'the pod runs');
  const touched = { ...pod, metadata: { ...pod.metadata, labels: { touched: 'yes' } } };
  f.podInformer.update(touched);
  await f.settle();                      // the sync has started and waits for a relist newer than its previous one
  rmSync(dir, { recursive: true });
  f.podInformer.delete(touched);
  for (let i = 0; i < 20; i++) { f.clock.step(100); await f.settle(); }
  await k.stop();
  assert.equal(existsSync(dir), false, 'no volume set up for a pod gone from the API');
  assert.equal((await f.runtime.listContainers()).filter((x) => x.state === 'CONTAINER_RUNNING').length, 0, 'its container stopped');
});
