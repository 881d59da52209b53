import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeRuntimeService, FakeImageService } from '@mk8s/proto/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import { silentLogger } from '@mk8s/component-base';
import { FakeEventRecorder } from '@mk8s/client/testing';
import type { Pod, PodStatus, ConfigMap } from '@mk8s/api';
import { KubeRuntimeManager } from './runtime-manager.js';
import { ProbeManager } from './prober.js';
import { computePodStatus } from './status.js';
import { FakeProber } from './testing/fake-prober.js';

const roots: string[] = [];
after(() => { for (const r of roots) rmSync(r, { recursive: true, force: true }); });

function fixture(o: { configMaps?: Record<string, ConfigMap>; beforeConfigMap?: () => Promise<void> } = {}) {
  const clock = new FakeClock();
  const now = () => clock.now();
  const images = new FakeImageService({ images: ['busybox:1.36', 'mk8s/testserver:1.0', 'mk8s/nocmd:1.0'], now });
  // As Docker: an image without a default command needs one from the spec; a missing binary fails the start.
  const runtime = new FakeRuntimeService({
    now, images,
    createError: (c) => (c.image.image.includes('nocmd') && !c.command?.length && !c.args?.length ? 'Error response from daemon: No command specified' : undefined),
    startError: (c) => (c.command?.[0]?.startsWith('/no/such') ? `exec: "${c.command[0]}": stat ${c.command[0]}: no such file or directory` : undefined),
  });
  const recorder = new FakeEventRecorder();
  const prober = new FakeProber();
  const changed: string[] = [];
  const probes = new ProbeManager({ prober, clock, logger: silentLogger(), onChange: (u) => changed.push(u), onFailure: (pod, _c, kind, out) => recorder.event(pod, 'Warning', 'Unhealthy', `${kind} probe failed: ${out}`) });
  const rootDir = mkdtempSync(join(tmpdir(), 'kubelet-test-'));
  roots.push(rootDir);
  const configMapReads: string[] = [];
  const newSyncer = () => new KubeRuntimeManager({
    runtime, images, recorder, probes, prober, clock, logger: silentLogger(), nodeName: 'node-1', nodeIP: () => '10.240.0.11', rootDir,
    configs: { configMap: async (_ns, n) => { configMapReads.push(n); await o.beforeConfigMap?.(); return o.configMaps?.[n]; }, secret: async () => undefined },
  });
  const syncer = newSyncer();
  let last: PodStatus | undefined;
  const sync = async (pod: Pod, s = syncer) => {
    const { result, rt } = await s.syncPod(pod, new AbortController().signal);
    const uid = pod.metadata!.uid!;
    last = computePodStatus({
      pod, rt, waiting: s.waitingOf(uid), hostIP: '10.240.0.11', nowMs: clock.now(), ...(last ? { previous: last } : {}),
      ready: (n, id) => (probes.has(uid, n, id, 'readiness') ? probes.result(uid, n, id, 'readiness') === true : true),
      started: (n, id) => (probes.has(uid, n, id, 'startup') ? probes.result(uid, n, id, 'startup') === true : true),
    });
    return { result, status: last, rt };
  };
  const running = () => [...runtime.containers.values()].filter((c) => c.state === 'CONTAINER_RUNNING' && c.config.metadata.name !== 'POD');
  return { clock, runtime, images, recorder, prober, probes, syncer, newSyncer, sync, running, rootDir, changed, configMapReads };
}

const flush = async () => { for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); };

const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}, name = 'web'): Pod => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] },
});

test('starts the sandbox, then the container; status Running with the pod IP', async () => {
  const f = fixture();
  const { status } = await f.sync(pod());
  assert.deepEqual(f.runtime.called.filter((m) => ['runPodSandbox', 'createContainer', 'startContainer'].includes(m)), ['runPodSandbox', 'createContainer', 'startContainer']);
  assert.equal(status.phase, 'Running');
  assert.match(status.podIP ?? '', /^10\.88\./);
  assert.equal(status.hostIP, '10.240.0.11');
  assert.ok(status.containerStatuses?.[0]?.state?.running);
  assert.equal(status.containerStatuses?.[0]?.ready, true);
  assert.deepEqual(status.conditions?.map((c) => `${c.type}=${c.status}`), ['PodReadyToStartContainers=True', 'Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True']);
  assert.equal(status.qosClass, 'BestEffort');
  assert.ok(f.recorder.events.includes('Normal Started Started container c'));
  // A second sync changes nothing.
  const before = f.runtime.called.length;
  await f.sync(pod());
  assert.equal(f.runtime.called.slice(before).filter((m) => m === 'createContainer' || m === 'runPodSandbox').length, 0);
});

test('a new pod: image presence is asked while the sandbox starts, volumes are read once', async () => {
  const f = fixture({ configMaps: { cm: { metadata: { name: 'cm' }, data: { 'a.txt': 'hello' } } } });
  const asked: boolean[] = [];
  const imageStatus = f.images.imageStatus.bind(f.images);
  f.images.imageStatus = (spec) => { asked.push(f.runtime.called.includes('podSandboxStatus')); return imageStatus(spec); };
  const { status } = await f.sync(pod({
    volumes: [{ name: 'cfg', configMap: { name: 'cm' } }],
    containers: [{ name: 'c', image: 'busybox:1.36', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }],
  }));
  assert.equal(status.phase, 'Running');
  assert.deepEqual(asked, [false], 'one imageStatus, made before the sandbox was read back');
  assert.deepEqual(f.configMapReads, ['cm'], 'the volume set up before the sandbox is not set up again in the same sync');
  assert.ok(f.recorder.events.includes('Normal Pulled Container image "busybox:1.36" already present on machine'));
  // Later syncs refresh the volume (ConfigMap changes reach the files) and ask for images only to start one.
  await f.sync(pod({
    volumes: [{ name: 'cfg', configMap: { name: 'cm' } }],
    containers: [{ name: 'c', image: 'busybox:1.36', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }],
  }));
  assert.deepEqual(f.configMapReads, ['cm', 'cm']);
  assert.equal(asked.length, 1);
});

test('a new pod: no sandbox is asked for before its volumes are set up (upstream waits for the mounts)', async () => {
  let runtime!: ReturnType<typeof fixture>['runtime'];
  const sandboxAskedEarly: boolean[] = [];
  const f = fixture({ configMaps: { cm: { metadata: { name: 'cm' }, data: { 'a.txt': 'hello' } } }, beforeConfigMap: async () => { sandboxAskedEarly.push(runtime.called.includes('runPodSandbox')); } });
  runtime = f.runtime;
  const { status } = await f.sync(pod({ volumes: [{ name: 'cfg', configMap: { name: 'cm' } }], containers: [{ name: 'c', image: 'busybox:1.36', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }] }));
  assert.equal(status.phase, 'Running');
  assert.deepEqual(sandboxAskedEarly, [false]);
});

test('a missing ConfigMap volume: FailedMount, no sandbox left, none tried again until the volume can be set up', async () => {
  const cms: Record<string, ConfigMap> = {};
  const f = fixture({ configMaps: cms });
  const p = pod({ volumes: [{ name: 'cfg', configMap: { name: 'late' } }], containers: [{ name: 'c', image: 'busybox:1.36', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }] });
  const first = await f.sync(p);
  assert.deepEqual(first.result, { requeueAfterMs: 5_000 });
  assert.ok(f.recorder.events.includes('Warning FailedMount MountVolume.SetUp failed: configmap "late" not found'));
  assert.equal(f.runtime.sandboxes.size, 0, 'no sandbox while a volume cannot be set up');
  assert.ok(!f.runtime.called.includes('runPodSandbox'));
  assert.equal(first.status.phase, 'Pending');
  assert.equal(first.status.podIP, undefined);
  assert.equal(first.status.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  const runs = f.runtime.called.filter((m) => m === 'runPodSandbox').length;
  await f.sync(p);
  assert.equal(f.runtime.called.filter((m) => m === 'runPodSandbox').length, runs, 'later syncs wait for the volumes before any sandbox');
  cms['late'] = { metadata: { name: 'late' }, data: { k: 'v' } };
  const { status } = await f.sync(p);
  assert.equal(status.phase, 'Running');
});

test('a crashing container restarts, then waits in CrashLoopBackOff with a doubling delay', async () => {
  const f = fixture();
  const p = pod();
  await f.sync(p);
  f.runtime.exitContainer(f.running()[0]!.id, 1);
  let r = await f.sync(p);
  assert.equal(r.status.containerStatuses?.[0]?.restartCount, 1);
  assert.ok(r.status.containerStatuses?.[0]?.state?.running);
  f.clock.step(1000);
  f.runtime.exitContainer(f.running()[0]!.id, 1);
  r = await f.sync(p);
  const cs = r.status.containerStatuses?.[0];
  assert.equal(cs?.state?.waiting?.reason, 'CrashLoopBackOff');
  assert.match(cs?.state?.waiting?.message ?? '', /^back-off 10s restarting failed container=c pod=web_default\(uid-web\)$/);
  assert.equal(cs?.lastState?.terminated?.exitCode, 1);
  assert.equal(cs?.lastState?.terminated?.reason, 'Error');
  assert.equal(r.status.phase, 'Running');
  assert.ok(r.result.requeueAfterMs! > 9_000 && r.result.requeueAfterMs! <= 10_100);
  assert.ok(f.recorder.events.some((e) => e.startsWith('Warning BackOff Back-off restarting failed container c')));
  f.clock.step(10_000);
  r = await f.sync(p);
  assert.equal(r.status.containerStatuses?.[0]?.restartCount, 2);
  f.clock.step(1000);
  f.runtime.exitContainer(f.running()[0]!.id, 1);
  r = await f.sync(p);
  assert.match(r.status.containerStatuses?.[0]?.state?.waiting?.message ?? '', /^back-off 20s/);
});

test('an image without a command and none in the spec: CreateContainerError, tried again only after the back-off', async () => {
  const f = fixture();
  const p = pod({ containers: [{ name: 'c', image: 'mk8s/nocmd:1.0' }] });
  let r = await f.sync(p);
  const cs = () => r.status.containerStatuses?.[0];
  assert.equal(cs()?.state?.waiting?.reason, 'CreateContainerError');
  assert.match(cs()?.state?.waiting?.message ?? '', /No command specified/);
  assert.ok(f.recorder.events.includes('Warning Failed Error: Error response from daemon: No command specified'));
  assert.ok(r.result.requeueAfterMs! >= 10_000 && r.result.requeueAfterMs! <= 10_100);
  const creates = () => f.runtime.called.filter((m) => m === 'createContainer').length;
  assert.equal(creates(), 1);
  f.clock.step(5_000);
  r = await f.sync(p);
  assert.equal(creates(), 1, 'no create inside the back-off');
  assert.equal(cs()?.state?.waiting?.reason, 'CreateContainerError');
  f.clock.step(5_100);
  r = await f.sync(p);
  assert.equal(creates(), 2);
  assert.ok(r.result.requeueAfterMs! >= 20_000 && r.result.requeueAfterMs! <= 20_100, 'the back-off doubles');
});

test('a command that does not exist: StartError (128), RunContainerError, then CrashLoopBackOff with restarts counted', async () => {
  const f = fixture();
  const p = pod({ containers: [{ name: 'c', image: 'busybox:1.36', command: ['/no/such/binary'] }] });
  let r = await f.sync(p);
  const cs = () => r.status.containerStatuses?.[0];
  assert.equal(cs()?.state?.waiting?.reason, 'RunContainerError');
  assert.match(cs()?.state?.waiting?.message ?? '', /no such file or directory/);
  assert.equal(cs()?.lastState?.terminated?.reason, 'StartError');
  assert.equal(cs()?.lastState?.terminated?.exitCode, 128);
  // The first restart is at once (as upstream), the next waits 10 s.
  r = await f.sync(p);
  assert.equal(cs()?.restartCount, 1);
  r = await f.sync(p);
  assert.equal(cs()?.state?.waiting?.reason, 'CrashLoopBackOff');
  assert.match(cs()?.state?.waiting?.message ?? '', /^back-off 10s /);
  assert.equal(cs()?.lastState?.terminated?.reason, 'StartError');
  const creates = () => f.runtime.called.filter((m) => m === 'createContainer').length;
  assert.equal(creates(), 2);
  for (let i = 0; i < 5; i++) { f.clock.step(1000); r = await f.sync(p); }
  assert.equal(creates(), 2, 'no create inside the back-off');
  f.clock.step(5_100);
  r = await f.sync(p);
  assert.equal(creates(), 3);
  r = await f.sync(p);
  assert.match(cs()?.state?.waiting?.message ?? '', /^back-off 20s /);
  assert.equal(cs()?.restartCount, 2);
});

for (const tc of [
  { policy: 'Never' as const, exit: 1, phase: 'Failed', reason: 'Error' },
  { policy: 'Never' as const, exit: 0, phase: 'Succeeded', reason: 'Completed' },
  { policy: 'OnFailure' as const, exit: 0, phase: 'Succeeded', reason: 'Completed' },
]) {
  test(`restartPolicy ${tc.policy}, exit ${tc.exit} → ${tc.phase}`, async () => {
    const f = fixture();
    const p = pod({ restartPolicy: tc.policy });
    await f.sync(p);
    f.runtime.exitContainer(f.running()[0]!.id, tc.exit);
    const r = await f.sync(p);
    assert.equal(r.status.phase, tc.phase);
    assert.equal(r.status.containerStatuses?.[0]?.state?.terminated?.reason, tc.reason);
    assert.equal(r.status.containerStatuses?.[0]?.restartCount, 0);
    assert.equal(f.running().length, 0);
  });
}

test('an unknown image gives ErrImagePull, then ImagePullBackOff', async () => {
  const f = fixture();
  const p = pod({ containers: [{ name: 'c', image: 'nosuch/image:1.0' }] });
  let r = await f.sync(p);
  assert.equal(r.status.containerStatuses?.[0]?.state?.waiting?.reason, 'ErrImagePull');
  assert.equal(r.status.phase, 'Pending');
  assert.ok(f.recorder.events.includes('Warning Failed Error: ErrImagePull'));
  r = await f.sync(p);
  assert.equal(r.status.containerStatuses?.[0]?.state?.waiting?.reason, 'ImagePullBackOff');
  assert.ok(f.recorder.events.includes('Normal BackOff Back-off pulling image "nosuch/image:1.0"'));
  f.images.registry.add('nosuch/image:1.0');
  f.clock.step(10_000);
  r = await f.sync(p);
  assert.ok(r.status.containerStatuses?.[0]?.state?.running);
});

test('a missing ConfigMap in env is CreateContainerConfigError; configMap volumes are written', async () => {
  const f = fixture({ configMaps: { cm: { metadata: { name: 'cm' }, data: { 'a.txt': 'hello' } } } });
  const bad = pod({ containers: [{ name: 'c', image: 'busybox:1.36', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'missing', key: 'k' } } }] }] }, 'bad');
  const r = await f.sync(bad);
  assert.equal(r.status.containerStatuses?.[0]?.state?.waiting?.reason, 'CreateContainerConfigError');
  assert.equal(r.status.containerStatuses?.[0]?.state?.waiting?.message, 'configmap "missing" not found');
  const good = pod({ volumes: [{ name: 'v', configMap: { name: 'cm' } }, { name: 'e', emptyDir: {} }], containers: [{ name: 'c', image: 'busybox:1.36', volumeMounts: [{ name: 'v', mountPath: '/cfg' }, { name: 'e', mountPath: '/data' }] }] }, 'good');
  await f.sync(good);
  const c = [...f.runtime.containers.values()].find((x) => x.config.labels?.['io.kubernetes.pod.name'] === 'good')!;
  const mount = c.config.mounts?.find((m) => m.containerPath === '/cfg')!;
  assert.equal(readFileSync(join(mount.hostPath, 'a.txt'), 'utf8'), 'hello');
  assert.ok(c.config.mounts?.some((m) => m.containerPath === '/data' && m.hostPath.includes('empty-dir')));
});

test('an invalid image name is InvalidImageName (InspectFailed), and no container is ever created for it', async () => {
  const f = fixture();
  const p = pod({ containers: [{ name: 'c', image: 'Busybox:1.36' }] });
  for (let i = 0; i < 3; i++) {
    const r = await f.sync(p);
    assert.equal(r.status.containerStatuses?.[0]?.state?.waiting?.reason, 'InvalidImageName');
    assert.match(r.status.containerStatuses?.[0]?.state?.waiting?.message ?? '', /must be lowercase/);
    f.clock.step(10_000);
  }
  assert.ok(f.recorder.events.some((e) => e.startsWith('Warning InspectFailed Failed to apply default image tag "Busybox:1.36"')), f.recorder.events.join('\n'));
  assert.equal([...f.runtime.containers.values()].filter((c) => c.config.metadata.name !== 'POD').length, 0);
});

test('a missing Secret and a missing ConfigMap key are CreateContainerConfigError with upstream\'s messages', async () => {
  const f = fixture({ configMaps: { cm: { metadata: { name: 'cm' }, data: { k: 'v' } } } });
  const secret = await f.sync(pod({ containers: [{ name: 'c', image: 'busybox:1.36', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'absent', key: 'k' } } }] }] }, 'secret'));
  assert.equal(secret.status.containerStatuses?.[0]?.state?.waiting?.reason, 'CreateContainerConfigError');
  assert.equal(secret.status.containerStatuses?.[0]?.state?.waiting?.message, 'secret "absent" not found');
  const key = await f.sync(pod({ containers: [{ name: 'c', image: 'busybox:1.36', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'nope' } } }] }] }, 'key'));
  assert.equal(key.status.containerStatuses?.[0]?.state?.waiting?.reason, 'CreateContainerConfigError');
  assert.equal(key.status.containerStatuses?.[0]?.state?.waiting?.message, "couldn't find key nope in ConfigMap default/cm");
  assert.ok(f.recorder.events.includes('Warning Failed Error: secret "absent" not found'), f.recorder.events.join('\n'));
  assert.equal([...f.runtime.containers.values()].filter((c) => c.config.metadata.name !== 'POD').length, 0);
});

test('init containers run in order before the app container', async () => {
  const f = fixture();
  const p = pod({ initContainers: [{ name: 'i1', image: 'busybox:1.36' }, { name: 'i2', image: 'busybox:1.36' }] });
  let r = await f.sync(p);
  assert.deepEqual(f.running().map((c) => c.config.metadata.name), ['i1']);
  assert.equal(r.status.phase, 'Pending');
  assert.equal(r.status.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
  f.runtime.exitContainer(f.running()[0]!.id, 0);
  await f.sync(p);
  assert.deepEqual(f.running().map((c) => c.config.metadata.name), ['i2']);
  f.runtime.exitContainer(f.running()[0]!.id, 0);
  r = await f.sync(p);
  assert.deepEqual(f.running().map((c) => c.config.metadata.name), ['c']);
  assert.equal(r.status.phase, 'Running');
  assert.equal(r.status.conditions?.find((c) => c.type === 'Initialized')?.status, 'True');
});

test('a failing liveness probe restarts the container; readiness follows its probe', async () => {
  const f = fixture();
  const p = pod({ containers: [{ name: 'c', image: 'busybox:1.36', livenessProbe: { exec: { command: ['true'] }, periodSeconds: 1, failureThreshold: 2 }, readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 } }] });
  let r = await f.sync(p);
  assert.equal(r.status.containerStatuses?.[0]?.ready, false); // readiness not yet probed
  f.clock.step(0); await flush();
  r = await f.sync(p);
  assert.equal(r.status.containerStatuses?.[0]?.ready, true);
  assert.equal(r.status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  const id = f.running()[0]!.id;
  f.prober.results.set(id, false);
  f.clock.step(1000); await flush();
  f.clock.step(1000); await flush();
  assert.ok(f.changed.length > 0);
  assert.ok(f.recorder.events.some((e) => e.startsWith('Warning Unhealthy liveness probe failed')));
  r = await f.sync(p);
  assert.ok(f.recorder.events.includes('Normal Killing Container c failed liveness probe, will be restarted'));
  assert.notEqual(f.running()[0]!.id, id);
  assert.equal(r.status.containerStatuses?.[0]?.restartCount, 1);
});

test('a new kubelet adopts running containers instead of restarting them', async () => {
  const f = fixture();
  const p = pod();
  await f.sync(p);
  f.runtime.exitContainer(f.running()[0]!.id, 1);
  await f.sync(p);
  const id = f.running()[0]!.id;
  const fresh = f.newSyncer();
  const before = f.runtime.called.length;
  const r = await f.sync(p, fresh);
  assert.deepEqual(f.runtime.called.slice(before).filter((m) => m === 'createContainer' || m === 'runPodSandbox' || m === 'stopContainer'), []);
  assert.equal(f.running()[0]!.id, id);
  assert.equal(r.status.containerStatuses?.[0]?.restartCount, 1);
});

test('terminatePod stops containers with the grace period; cleanupPod removes everything', async () => {
  const f = fixture();
  const p = pod();
  await f.sync(p);
  const rt = await f.syncer.terminatePod(p, 'uid-web', 30);
  assert.ok(rt.containers.every((c) => c.state === 'CONTAINER_EXITED'));
  assert.ok(f.recorder.events.includes('Normal Killing Stopping container c'));
  await f.syncer.cleanupPod('uid-web');
  assert.equal(f.runtime.containers.size, 0);
  assert.equal(f.runtime.sandboxes.size, 0);
});
