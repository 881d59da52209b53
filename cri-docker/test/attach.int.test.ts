/**
 * Attach (an Exec with an empty cmd) against real Docker through the gRPC shim: the main
 * process's output from now on, stdin for a container created with stdin, detaching by abort.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerConfig, ExecInput } from '@mk8s/proto';
import { ensureImages, startTestShim, waitFor, type TestShim } from '../src/testing/index.js';

describe('attach through the cri-docker shim', () => {
  let shim: TestShim;
  let n = 0;

  before(async () => {
    ensureImages();
    shim = await startTestShim();
  });
  after(async () => { await shim?.teardown(); });

  const run = async (t: TestContext, c: Partial<ContainerConfig> & { command: string[] }) => {
    n++;
    const config = { metadata: { name: `attach-${n}`, namespace: 'int', uid: `uid-attach-${shim.nodeName}-${n}`, attempt: 0 }, hostname: `attach-${n}` };
    const sb = await shim.runtime.runPodSandbox(config);
    t.after(() => shim.runtime.removePodSandbox(sb));
    const id = await shim.runtime.createContainer(sb, { metadata: { name: 'c', attempt: 0 }, image: { image: 'mk8s/busybox:1.36' }, ...c }, config);
    await shim.runtime.startContainer(id);
    return id;
  };

  test('stdin reaches the main process and its output comes back; the session ends with it', async (t) => {
    // stdinOnce: closing the attached stdin closes the process's stdin, so `cat` exits.
    const id = await run(t, { command: ['sh', '-c', 'echo ready; exec cat'], stdin: true, stdinOnce: true });
    await waitFor(async () => (await shim.runtime.execSync(id, ['true'], 10)).exitCode === 0, 'container running');
    let out = '';
    let release: () => void = () => undefined;
    const echoed = new Promise<void>((r) => { release = r; });
    async function* input(): AsyncIterable<ExecInput> {
      yield { stdin: Buffer.from('hello attach\n') };
      await echoed;
      yield { closeStdin: true };
    }
    const r = await shim.runtime.exec({ containerId: id, cmd: [], stdin: true, stdout: true, stderr: true }, {
      input: input(),
      onStdout: (b) => { out += b.toString(); if (out.includes('hello attach\n')) release(); },
    });
    assert.equal(r.exitCode, 0);
    // Attach sees output from now on only: "ready" was printed before.
    assert.equal(out, 'hello attach\n');
    await waitFor(async () => (await shim.runtime.containerStatus(id)).state === 'CONTAINER_EXITED', 'cat to exit');
  });

  test('output is streamed as the process writes it, and aborting detaches without stopping it', async (t) => {
    const id = await run(t, { command: ['sh', '-c', 'i=0; while true; do echo tick $i; echo tock $i >&2; i=$((i+1)); sleep 0.2; done'] });
    const ac = new AbortController();
    let out = '';
    let err = '';
    const pending = shim.runtime.exec({ containerId: id, cmd: [], stdout: true, stderr: true }, {
      onStdout: (b) => { out += b.toString(); if (/tick \d+\n[\s\S]*tick \d+\n/.test(out) && err.includes('tock')) ac.abort(new Error('detached')); },
      onStderr: (b) => { err += b.toString(); },
      signal: ac.signal,
    });
    await assert.rejects(pending, /detached/);
    assert.match(err, /tock \d+/);
    assert.equal((await shim.runtime.containerStatus(id)).state, 'CONTAINER_RUNNING');
  });
});
