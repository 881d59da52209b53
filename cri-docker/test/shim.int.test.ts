import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isNotFound, type ContainerConfig, type ExecInput, type PodSandboxConfig } from '@mk8s/proto';
import {
  CONTAINER_NAME_LABEL, NETWORK_LABEL, NODE_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, TYPE_LABEL, TYPE_SANDBOX,
  createCriDockerShim,
} from '../src/index.js';
import { ensureImages, startTestShim, waitFor, type TestShim } from '../src/testing/index.js';

describe('cri-docker shim against real Docker', () => {
  let shim: TestShim;
  let n = 0;

  before(async () => {
    ensureImages();
    shim = await startTestShim();
  });
  after(async () => { await shim?.teardown(); });

  const sandboxConfig = (): PodSandboxConfig => {
    n++;
    return { metadata: { name: `pod-${n}`, namespace: 'int', uid: `uid-${shim.nodeName}-${n}`, attempt: 0 }, hostname: `pod-${n}`, labels: { app: 'int' } };
  };
  const newSandbox = async (t: TestContext) => {
    const config = sandboxConfig();
    const id = await shim.runtime.runPodSandbox(config);
    t.after(() => shim.runtime.removePodSandbox(id));
    return { id, config };
  };
  const run = async (t: TestContext, c: Partial<ContainerConfig> & { command: string[] }, image = 'mk8s/busybox:1.36') => {
    const sb = await newSandbox(t);
    const id = await shim.runtime.createContainer(sb.id, { metadata: { name: 'c', attempt: 0 }, image: { image }, ...c }, sb.config);
    await shim.runtime.startContainer(id);
    return { sandbox: sb, id };
  };
  const waitExited = (id: string, timeoutMs = 30_000) =>
    waitFor(async () => { const s = await shim.runtime.containerStatus(id); return s.state === 'CONTAINER_EXITED' && s; }, `container ${id} to exit`, timeoutMs);
  const logsOf = async (id: string, opts = {}) => {
    const chunks: string[] = [];
    for await (const c of shim.runtime.containerLogs(id, opts)) chunks.push(`${c.stream}:${c.data.toString()}`);
    return chunks.join('');
  };

  test('a sandbox gets an IP from the pod CIDR that the node netns and other pods reach', async (t) => {
    const a = await run(t, { command: [] , args: [] }, 'mk8s/testserver:1.0');
    const ipA = (await shim.runtime.podSandboxStatus(a.sandbox.id)).network?.ip ?? '';
    assert.ok(ipA.startsWith(shim.podCidr.split('.').slice(0, 3).join('.') + '.'), `${ipA} in ${shim.podCidr}`);
    const b = await run(t, { command: ['sleep', '3600'] });
    const ipB = (await shim.runtime.podSandboxStatus(b.sandbox.id)).network?.ip ?? '';
    assert.notEqual(ipA, ipB);
    // From the node netns (where cni0 lives) to pod A's test server.
    // (Debian's busybox wget has no -T: that flag segfaults it.)
    await waitFor(async () => shim.inNetns(['busybox', 'timeout', '2', 'busybox', 'wget', '-qO-', `http://${ipA}:8080/hostname`]).stdout.trim() === a.sandbox.config.hostname, 'pod A to serve');
    // Pod to pod over the bridge, and the pod's own eth0 carries the reported IP.
    const r = await shim.runtime.execSync(b.id, ['timeout', '5', 'wget', '-qO-', `http://${ipA}:8080/echo?msg=from-b`], 10);
    assert.equal(r.stdout.toString(), 'from-b');
    const addr = await shim.runtime.execSync(b.id, ['ip', '-o', '-4', 'addr', 'show', 'dev', 'eth0'], 10);
    assert.match(addr.stdout.toString(), new RegExp(`inet ${ipB.replace(/\./g, '\\.')}/`));
    assert.equal((await shim.runtime.execSync(b.id, ['ping', '-c', '1', '-W', '2', shim.gateway], 10)).exitCode, 0);
  });

  test('command, args, env, workingDir and a hostPath mount reach the process; exit 0 is Completed', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'mk8s-cri-mount-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'f'), 'from-host');
    const { id } = await run(t, {
      command: ['sh', '-c'], args: ['echo "$GREETING $(pwd) $(cat /data/f)"; touch /data/ro 2>/dev/null || echo readonly'],
      envs: [{ key: 'GREETING', value: 'hi' }], workingDir: '/tmp',
      mounts: [{ hostPath: dir, containerPath: '/data', readonly: true }],
    });
    const st = await waitExited(id);
    assert.equal(st.exitCode, 0);
    assert.equal(st.reason, 'Completed');
    assert.ok(st.finishedAt >= st.startedAt && st.startedAt > 0);
    assert.deepEqual(st.mounts.map((m) => [m.containerPath, m.hostPath, m.readonly]), [['/data', dir, true]]);
    assert.equal(await logsOf(id), 'stdout:hi /tmp from-host\nstdout:readonly\n');
  });

  test('a failing process is Error with its exit code', async (t) => {
    const { id } = await run(t, { command: ['sh', '-c', 'echo bye >&2; exit 3'] });
    const st = await waitExited(id);
    assert.equal(st.exitCode, 3);
    assert.equal(st.reason, 'Error');
    assert.equal(await logsOf(id), 'stderr:bye\n');
  });

  test('requests and limits map to Docker cpu shares, quota, period and memory without swap', async (t) => {
    const { id } = await run(t, {
      command: ['sleep', '3600'],
      linux: { resources: { cpuShares: 512, cpuQuota: 50_000, cpuPeriod: 100_000, memoryLimitInBytes: 64 * 1024 * 1024 } },
    });
    const hc = (await shim.docker.getContainer(id).inspect()).HostConfig;
    assert.equal(hc.CpuShares, 512);
    assert.equal(hc.CpuQuota, 50_000);
    assert.equal(hc.CpuPeriod, 100_000);
    assert.equal(hc.Memory, 64 * 1024 * 1024);
    assert.equal(hc.MemorySwap, 64 * 1024 * 1024);
    const st = await shim.runtime.containerStatus(id);
    assert.equal(st.resources?.linux?.memoryLimitInBytes, 64 * 1024 * 1024);
    const stats = await shim.runtime.containerStats(id);
    assert.ok((stats.memory?.workingSetBytes?.value ?? 0) > 0, 'a running container uses memory');
    const again = await shim.runtime.containerStats(id);
    assert.ok(again.cpu?.usageNanoCores !== undefined, 'a second sample has a CPU rate');
  });

  test('exceeding a 32Mi memory limit gives OOMKilled', async (t) => {
    const { id } = await run(t, {
      command: ['sh', '-c', 'x=$(head -c 67108864 /dev/zero | tr "\\0" a); echo survived ${#x}'],
      linux: { resources: { memoryLimitInBytes: 32 * 1024 * 1024 } },
    });
    const st = await waitExited(id);
    assert.equal(st.reason, 'OOMKilled');
    assert.equal(st.exitCode, 137);
  });

  test('logs: tail, timestamps, since and follow', async (t) => {
    const { id } = await run(t, { command: ['sh', '-c', 'echo one; echo two; echo three; exec sleep 3600'] });
    await waitFor(async () => (await logsOf(id)).includes('three'), 'logs');
    assert.equal(await logsOf(id, { tailLines: 1 }), 'stdout:three\n');
    assert.equal(await logsOf(id, { tailLines: 0 }), '');
    const stamped = await logsOf(id, { timestamps: true });
    assert.match(stamped, /^stdout:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z one\n/);
    assert.equal(await logsOf(id, { sinceTime: (Date.now() + 60_000) * 1e6 }), '');
    const ac = new AbortController();
    const got: string[] = [];
    const follow = (async () => {
      for await (const c of shim.runtime.containerLogs(id, { follow: true, tailLines: 0 }, ac.signal)) {
        got.push(c.data.toString());
        if (got.join('').includes('four')) ac.abort();
      }
    })();
    await shim.runtime.execSync(id, ['sh', '-c', 'echo four > /proc/1/fd/1'], 10);
    await follow;
    assert.equal(got.join(''), 'four\n');
  });

  test('exec with a TTY honours resize and stdin and returns the exit code', async (t) => {
    const { id } = await run(t, { command: ['sleep', '3600'] });
    async function* input(): AsyncIterable<ExecInput> {
      yield { resize: { width: 100, height: 40 } };
      yield { stdin: Buffer.from('stty size; exit 5\n') };
    }
    const out: Buffer[] = [];
    const r = await shim.runtime.exec({ containerId: id, cmd: ['sh'], tty: true, stdin: true }, { input: input(), onStdout: (b) => out.push(b) });
    assert.equal(r.exitCode, 5);
    assert.match(Buffer.concat(out).toString(), /40 100/);
  });

  test('aborting a streaming exec rejects promptly and the shim keeps serving', async (t) => {
    const { id } = await run(t, { command: ['sleep', '3600'] });
    const ac = new AbortController();
    const out: string[] = [];
    const pending = shim.runtime.exec({ containerId: id, cmd: ['sh', '-c', 'echo started; exec sleep 30'] }, {
      onStdout: (b) => { out.push(b.toString()); if (out.join('').includes('started')) ac.abort(new Error('user detached')); },
      signal: ac.signal,
    });
    await assert.rejects(pending, /user detached/);
    assert.equal((await shim.runtime.execSync(id, ['echo', 'still'], 10)).stdout.toString(), 'still\n');
  });

  test('execSync times out with DeadlineExceeded', async (t) => {
    const { id } = await run(t, { command: ['sleep', '3600'] });
    await assert.rejects(shim.runtime.execSync(id, ['sleep', '30'], 1), (e) => (e as { code?: string }).code === 'DeadlineExceeded');
  });

  test('another node\'s containers are invisible', async (t) => {
    const other = createCriDockerShim({ socketPath: join(tmpdir(), 'unused.sock'), nodeName: `${shim.nodeName}-other`, networkPlugin: 'none' });
    const cfg = sandboxConfig();
    const otherId = await other.runtime.runPodSandbox(cfg);
    t.after(() => other.runtime.removePodSandbox(otherId));
    assert.ok(!(await shim.runtime.listPodSandbox()).some((s) => s.id === otherId));
    await assert.rejects(shim.runtime.podSandboxStatus(otherId), isNotFound);
    await shim.runtime.removePodSandbox(otherId);
    assert.equal((await other.runtime.podSandboxStatus(otherId)).state, 'SANDBOX_READY', 'removing another node\'s sandbox is a no-op');
  });

  test('the shim serves /healthz on its health port', async () => {
    const s = createCriDockerShim({ socketPath: join(tmpdir(), `mk8s-health-${process.pid}.sock`), nodeName: `${shim.nodeName}-h`, networkPlugin: 'none', healthPort: 0 });
    const ac = new AbortController();
    const running = s.run(ac.signal);
    try {
      await s.ready;
      const res = await fetch(`http://127.0.0.1:${s.healthPort()}/healthz`);
      assert.equal(res.status, 200);
    } finally {
      ac.abort();
      await running;
    }
  });

  test('a sandbox whose network setup never finished (shim died mid-run) is not ready and can be removed', async () => {
    // What a crash between `docker start` and CNI ADD leaves behind: a running pause container with our labels.
    const half = await shim.docker.createContainer({
      Image: 'mk8s/pause:3.9', HostConfig: { NetworkMode: 'none' },
      Labels: {
        [NODE_LABEL]: shim.nodeName, [TYPE_LABEL]: TYPE_SANDBOX, [NETWORK_LABEL]: 'cni', [POD_NAME_LABEL]: 'half',
        [POD_NAMESPACE_LABEL]: 'int', [POD_UID_LABEL]: `half-${shim.nodeName}`, [CONTAINER_NAME_LABEL]: 'POD',
      },
    });
    await half.start();
    try {
      assert.equal((await shim.runtime.podSandboxStatus(half.id)).state, 'SANDBOX_NOTREADY');
      const listed = await shim.runtime.listPodSandbox({ id: half.id });
      assert.deepEqual(listed.map((x) => [x.id, x.state]), [[half.id, 'SANDBOX_NOTREADY']]);
      await shim.runtime.removePodSandbox(half.id);
      await assert.rejects(shim.runtime.podSandboxStatus(half.id), isNotFound);
    } finally {
      await half.remove({ force: true }).catch(() => undefined);
    }
  });

  test('after a shim crash and restart, sandboxes, IPs and containers are rebuilt from Docker', async (t) => {
    const { sandbox, id } = await run(t, { command: ['sleep', '3600'] });
    const before = await shim.runtime.podSandboxStatus(sandbox.id);
    await shim.kill();
    await shim.start();
    const after = await shim.runtime.podSandboxStatus(sandbox.id);
    assert.equal(after.state, 'SANDBOX_READY');
    assert.equal(after.network?.ip, before.network?.ip);
    assert.deepEqual(after.metadata, sandbox.config.metadata);
    const cs = await shim.runtime.containerStatus(id);
    assert.equal(cs.state, 'CONTAINER_RUNNING');
    assert.deepEqual((await shim.runtime.listContainers({ podSandboxId: sandbox.id })).map((c) => c.id), [id]);
    await shim.runtime.stopPodSandbox(sandbox.id);
    assert.equal((await shim.runtime.containerStatus(id)).state, 'CONTAINER_EXITED');
    assert.equal((await shim.runtime.podSandboxStatus(sandbox.id)).network, undefined);
  });
});
