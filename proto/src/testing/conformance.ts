/**
 * One CRI conformance suite for every RuntimeService/ImageService (apiserver
 * `storage/testing/store_tests.go`): the fake passes it in a unit test, the Docker shim over its
 * real socket in an integration test. What the suite asserts is the contract the kubelet relies on.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isFailedPrecondition, isNotFound } from '../errors.js';
import type { ImageService, RuntimeService } from '../runtime-service.js';
import type { ContainerConfig, ExecInput, PodSandboxConfig } from '../types.js';

/** What a conformance run needs from an implementation. */
export interface ConformanceTarget {
  runtime: RuntimeService;
  images: ImageService;
  /** A present image with `sh`, `echo`, `cat` and `sleep` (busybox). */
  image: string;
  /** Whether sandboxes get a pod IP (a network plugin is configured). */
  expectPodIp: boolean;
  /** Removes everything the target made; runs even when tests fail. */
  teardown(): Promise<void>;
}

/** A sandbox id that no runtime will ever have issued. */
const UNKNOWN_ID = 'f'.repeat(64);

/**
 * defineRuntimeServiceConformance defines the suite under `describe(name)`. setup runs once
 * before all tests; each test makes sandboxes with its own labels and removes them.
 */
export function defineRuntimeServiceConformance(name: string, setup: () => Promise<ConformanceTarget>): void {
  describe(`CRI conformance: ${name}`, () => {
    let target: ConformanceTarget | undefined;
    const t = (): ConformanceTarget => { if (!target) throw new Error('setup failed'); return target; };
    const rt = (): RuntimeService => t().runtime;
    const run = randomBytes(4).toString('hex');

    before(async () => { target = await setup(); });
    after(async () => { await target?.teardown(); });

    let n = 0;
    const sandboxConfig = (extra: Partial<PodSandboxConfig> = {}): PodSandboxConfig => {
      n++;
      return {
        metadata: { name: `conf-${run}-${n}`, namespace: 'conformance', uid: `uid-${run}-${n}`, attempt: 0 },
        hostname: `conf-${n}`,
        labels: { 'mk8s.test/run': run, 'mk8s.test/n': String(n) },
        annotations: { 'mk8s.test/note': 'hello' },
        ...extra,
      };
    };
    /** Runs a sandbox removed after the test. */
    const newSandbox = async (tc: TestContext, extra: Partial<PodSandboxConfig> = {}) => {
      const config = sandboxConfig(extra);
      const id = await rt().runPodSandbox(config);
      tc.after(() => rt().removePodSandbox(id));
      return { id, config };
    };
    const containerConfig = (name: string, extra: Partial<ContainerConfig> = {}): ContainerConfig => ({
      metadata: { name, attempt: 0 },
      image: { image: t().image },
      command: ['sleep', '3600'],
      labels: { 'mk8s.test/run': run, 'mk8s.test/container': name },
      annotations: { 'mk8s.test/c': name },
      ...extra,
    });
    const newRunningContainer = async (tc: TestContext, name = 'app') => {
      const sb = await newSandbox(tc);
      const id = await rt().createContainer(sb.id, containerConfig(name), sb.config);
      await rt().startContainer(id);
      return { sandbox: sb, id };
    };

    test('version reports the runtime and CRI API version', async () => {
      const v = await rt().version();
      assert.equal(v.runtimeApiVersion, 'v1');
      assert.ok(v.runtimeName.length > 0);
      assert.ok(v.runtimeVersion.length > 0);
    });

    test('status reports RuntimeReady', async () => {
      const s = await rt().status();
      assert.equal(s.conditions.find((c) => c.type === 'RuntimeReady')?.status, true);
      assert.ok(s.conditions.some((c) => c.type === 'NetworkReady'));
    });

    test('runPodSandbox makes a ready sandbox that keeps its metadata, labels and annotations', async (tc) => {
      const { id, config } = await newSandbox(tc);
      const st = await rt().podSandboxStatus(id);
      assert.equal(st.id, id);
      assert.equal(st.state, 'SANDBOX_READY');
      assert.deepEqual(st.metadata, config.metadata);
      assert.equal(st.labels['mk8s.test/run'], run);
      assert.equal(st.annotations['mk8s.test/note'], 'hello');
      assert.ok(st.createdAt > 1.5e18, `createdAt ${st.createdAt} is in nanoseconds`);
      if (t().expectPodIp) assert.match(st.network?.ip ?? '', /^\d+\.\d+\.\d+\.\d+$/);
    });

    test('listPodSandbox filters by id, state and labels', async (tc) => {
      const a = await newSandbox(tc);
      const b = await newSandbox(tc);
      await rt().stopPodSandbox(b.id);
      const mine = await rt().listPodSandbox({ labelSelector: { 'mk8s.test/run': run } });
      assert.ok(mine.some((s) => s.id === a.id) && mine.some((s) => s.id === b.id));
      const byId = await rt().listPodSandbox({ id: a.id });
      assert.deepEqual(byId.map((s) => s.id), [a.id]);
      assert.deepEqual(byId[0]?.metadata, a.config.metadata);
      const ready = await rt().listPodSandbox({ state: 'SANDBOX_READY', labelSelector: { 'mk8s.test/run': run } });
      assert.ok(ready.some((s) => s.id === a.id));
      assert.ok(!ready.some((s) => s.id === b.id));
      const byLabel = await rt().listPodSandbox({ labelSelector: { 'mk8s.test/n': b.config.labels?.['mk8s.test/n'] ?? '' } });
      assert.deepEqual(byLabel.map((s) => s.id), [b.id]);
    });

    test('stopPodSandbox stops its containers and is idempotent', async (tc) => {
      const { sandbox, id } = await newRunningContainer(tc);
      await rt().stopPodSandbox(sandbox.id);
      await rt().stopPodSandbox(sandbox.id);
      assert.equal((await rt().podSandboxStatus(sandbox.id)).state, 'SANDBOX_NOTREADY');
      assert.equal((await rt().containerStatus(id)).state, 'CONTAINER_EXITED');
      await rt().stopPodSandbox(UNKNOWN_ID);
    });

    test('removePodSandbox removes the sandbox and its containers and is idempotent', async (tc) => {
      const { sandbox, id } = await newRunningContainer(tc);
      await rt().removePodSandbox(sandbox.id);
      await rt().removePodSandbox(sandbox.id);
      await assert.rejects(rt().podSandboxStatus(sandbox.id), isNotFound);
      await assert.rejects(rt().containerStatus(id), isNotFound);
      assert.deepEqual(await rt().listContainers({ podSandboxId: sandbox.id }), []);
      await rt().removePodSandbox(UNKNOWN_ID);
    });

    test('podSandboxStatus of an unknown sandbox is NotFound', async () => {
      await assert.rejects(rt().podSandboxStatus(UNKNOWN_ID), isNotFound);
    });

    test('a container goes created, running, exited with timestamps', async (tc) => {
      const sb = await newSandbox(tc);
      const cfg = containerConfig('web', { envs: [{ key: 'A', value: '1' }], workingDir: '/tmp' });
      const id = await rt().createContainer(sb.id, cfg, sb.config);
      let st = await rt().containerStatus(id);
      assert.equal(st.state, 'CONTAINER_CREATED');
      assert.deepEqual(st.metadata, { name: 'web', attempt: 0 });
      assert.equal(st.podSandboxId, sb.id);
      assert.equal(st.labels['mk8s.test/container'], 'web');
      assert.equal(st.annotations['mk8s.test/c'], 'web');
      assert.equal(st.startedAt, 0);
      assert.ok(st.imageRef.length > 0);
      await rt().startContainer(id);
      st = await rt().containerStatus(id);
      assert.equal(st.state, 'CONTAINER_RUNNING');
      assert.ok(st.startedAt >= st.createdAt);
      await rt().stopContainer(id, 0);
      st = await rt().containerStatus(id);
      assert.equal(st.state, 'CONTAINER_EXITED');
      assert.ok(st.finishedAt >= st.startedAt);
      assert.notEqual(st.exitCode, 0);
      await rt().stopContainer(id, 0);
      await assert.rejects(rt().startContainer(id), isFailedPrecondition);
    });

    test('startContainer of a running container is FailedPrecondition', async (tc) => {
      const { id } = await newRunningContainer(tc);
      await assert.rejects(rt().startContainer(id), isFailedPrecondition);
    });

    test('listContainers filters by sandbox, state, id and labels', async (tc) => {
      const sb = await newSandbox(tc);
      const a = await rt().createContainer(sb.id, containerConfig('a'), sb.config);
      const b = await rt().createContainer(sb.id, containerConfig('b'), sb.config);
      await rt().startContainer(b);
      const inSandbox = await rt().listContainers({ podSandboxId: sb.id });
      assert.deepEqual(inSandbox.map((c) => c.id).sort(), [a, b].sort());
      const running = await rt().listContainers({ podSandboxId: sb.id, state: 'CONTAINER_RUNNING' });
      assert.deepEqual(running.map((c) => c.id), [b]);
      assert.equal(running[0]?.metadata.name, 'b');
      assert.equal(running[0]?.podSandboxId, sb.id);
      assert.deepEqual((await rt().listContainers({ id: a })).map((c) => c.id), [a]);
      const byLabel = await rt().listContainers({ labelSelector: { 'mk8s.test/run': run, 'mk8s.test/container': 'a' } });
      assert.ok(byLabel.every((c) => c.metadata.name === 'a') && byLabel.some((c) => c.id === a));
      assert.ok(!(await rt().listPodSandbox()).some((s) => s.id === a), 'containers are not sandboxes');
      assert.ok(!(await rt().listContainers()).some((c) => c.id === sb.id), 'sandboxes are not containers');
    });

    test('createContainer in an unknown sandbox or with an absent image is NotFound', async (tc) => {
      const sb = await newSandbox(tc);
      await assert.rejects(rt().createContainer(UNKNOWN_ID, containerConfig('x'), sb.config), isNotFound);
      const noImage = containerConfig('y', { image: { image: `mk8s-absent/nothing-${run}:0` } });
      await assert.rejects(rt().createContainer(sb.id, noImage, sb.config), isNotFound);
    });

    test('removeContainer removes and is idempotent; stop and status of unknown are NotFound', async (tc) => {
      const { id } = await newRunningContainer(tc);
      await rt().removeContainer(id);
      await rt().removeContainer(id);
      await assert.rejects(rt().containerStatus(id), isNotFound);
      await assert.rejects(rt().stopContainer(UNKNOWN_ID, 0), isNotFound);
      await rt().removeContainer(UNKNOWN_ID);
    });

    test('execSync returns output and exit code', async (tc) => {
      const { id } = await newRunningContainer(tc);
      const r = await rt().execSync(id, ['echo', 'hello', 'cri'], 10);
      assert.equal(r.exitCode, 0);
      assert.equal(r.stdout.toString(), 'hello cri\n');
      assert.equal((await rt().execSync(id, ['sh', '-c', 'exit 3'], 10)).exitCode, 3);
    });

    test('execSync in a container that is not running is FailedPrecondition', async (tc) => {
      const sb = await newSandbox(tc);
      const id = await rt().createContainer(sb.id, containerConfig('idle'), sb.config);
      await assert.rejects(rt().execSync(id, ['echo', 'x'], 10), isFailedPrecondition);
      await assert.rejects(rt().execSync(UNKNOWN_ID, ['echo', 'x'], 10), isNotFound);
    });

    test('exec streams stdin to the process and returns its exit code', async (tc) => {
      const { id } = await newRunningContainer(tc);
      async function* input(): AsyncIterable<ExecInput> {
        yield { stdin: Buffer.from('ping ') };
        yield { stdin: Buffer.from('pong\n') };
        yield { closeStdin: true };
      }
      const out: Buffer[] = [];
      const r = await rt().exec({ containerId: id, cmd: ['cat'], stdin: true }, { input: input(), onStdout: (b) => out.push(b) });
      assert.equal(r.exitCode, 0);
      assert.equal(Buffer.concat(out).toString(), 'ping pong\n');
      const r2 = await rt().exec({ containerId: id, cmd: ['sh', '-c', 'exit 7'] }, {});
      assert.equal(r2.exitCode, 7);
    });

    test('containerStats and listContainerStats describe running containers', async (tc) => {
      const { id, sandbox } = await newRunningContainer(tc);
      const s = await rt().containerStats(id);
      assert.equal(s.attributes.id, id);
      assert.equal(s.attributes.metadata.name, 'app');
      assert.ok(s.cpu?.usageCoreNanoSeconds !== undefined);
      assert.ok(s.memory?.workingSetBytes !== undefined);
      const list = await rt().listContainerStats({ podSandboxId: sandbox.id });
      assert.deepEqual(list.map((x) => x.attributes.id), [id]);
      await assert.rejects(rt().containerStats(UNKNOWN_ID), isNotFound);
    });

    test('listPodSandboxStats describes ready sandboxes, with their network counters when readable', async (tc) => {
      const { sandbox } = await newRunningContainer(tc);
      const list = await rt().listPodSandboxStats({ id: sandbox.id });
      assert.deepEqual(list.map((x) => x.attributes.id), [sandbox.id]);
      assert.equal(list[0]!.attributes.metadata.uid, sandbox.config.metadata.uid);
      for (const i of list[0]!.linux?.network?.interfaces ?? []) assert.ok(i.name !== 'lo' && i.rxBytes !== undefined && i.txBytes !== undefined, i.name);
      assert.deepEqual(await rt().listPodSandboxStats({ id: UNKNOWN_ID }), []);
    });

    test('podSandboxStats sums the pod and lists its running containers', async (tc) => {
      const { sandbox, id } = await newRunningContainer(tc);
      const s = await rt().podSandboxStats(sandbox.id);
      assert.equal(s.attributes.id, sandbox.id);
      assert.deepEqual((s.linux?.containers ?? []).map((c) => c.attributes.id), [id]);
      const c = s.linux!.containers![0]!;
      assert.ok(s.linux?.cpu?.usageCoreNanoSeconds !== undefined && s.linux.memory?.workingSetBytes !== undefined);
      // The pod is at least its container (the pause container adds to it).
      assert.ok(s.linux.cpu.usageCoreNanoSeconds.value >= (c.cpu?.usageCoreNanoSeconds?.value ?? 0));
      assert.ok(s.linux.memory.workingSetBytes.value >= (c.memory?.workingSetBytes?.value ?? 0));
      await assert.rejects(rt().podSandboxStats(UNKNOWN_ID), isNotFound);
    });

    test('images: list, status, failed pull, fs info', async () => {
      const img = t().images;
      const present = await img.imageStatus({ image: t().image });
      assert.ok(present, `${t().image} is present`);
      assert.ok(present.id.length > 0 && present.size > 0);
      assert.ok((await img.listImages()).some((i) => i.id === present.id));
      assert.deepEqual((await img.listImages({ image: t().image })).map((i) => i.id), [present.id]);
      assert.equal(await img.imageStatus({ image: `mk8s-absent/nothing-${run}:0` }), undefined);
      assert.equal(await img.pullImage({ image: t().image }), present.id, 'pulling a present image is a no-op');
      await assert.rejects(img.pullImage({ image: `mk8s-absent/nothing-${run}:0` }));
      await img.removeImage({ image: `mk8s-absent/nothing-${run}:0` });
      const fs = await img.imageFsInfo();
      assert.ok(fs.imageFilesystems.length > 0);
    });
  });
}
