import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CriError, isNotFound, criErrorCode } from '../errors.js';
import { FakeImageService } from '../testing/fake-image-service.js';
import { FakeRuntimeService } from '../testing/fake-runtime-service.js';
import { defineRuntimeServiceConformance } from '../testing/conformance.js';
import { serveCri } from './handlers.js';
import { RemoteImageService, RemoteRuntimeService } from './remote.js';

async function serveFake() {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-cri-'));
  const socketPath = join(dir, 'cri.sock');
  const images = new FakeImageService({ images: ['busybox'] });
  const fake = new FakeRuntimeService({ images });
  const srv = await serveCri({ socketPath, runtime: fake, image: images });
  const runtime = new RemoteRuntimeService({ socketPath });
  const image = new RemoteImageService({ socketPath });
  return {
    fake, runtime, images: image,
    teardown: async () => { runtime.close(); image.close(); await srv.close(100); rmSync(dir, { recursive: true, force: true }); },
  };
}

// The same suite over the wire proves the adapters and the client lose nothing.
defineRuntimeServiceConformance('fake over gRPC', async () => {
  const s = await serveFake();
  return { runtime: s.runtime, images: s.images, image: 'busybox', expectPodIp: true, teardown: s.teardown };
});

test('CriError codes survive the wire', async (t) => {
  const s = await serveFake();
  t.after(s.teardown);
  s.fake.injectError('version', new CriError('Unavailable', 'docker is down'));
  await assert.rejects(s.runtime.version(), (e) => criErrorCode(e) === 'Unavailable' && (e as Error).message === 'docker is down');
  s.fake.injectError('version', new Error('plain'));
  await assert.rejects(s.runtime.version(), (e) => criErrorCode(e) === 'Internal');
  await assert.rejects(s.runtime.containerStatus('nope'), isNotFound);
});

test('containerLogs streams over the wire and follow ends when the container exits', async (t) => {
  const s = await serveFake();
  t.after(s.teardown);
  const sbc = { metadata: { name: 'p', namespace: 'default', uid: 'u', attempt: 0 } };
  const sb = await s.runtime.runPodSandbox(sbc);
  const id = await s.runtime.createContainer(sb, { metadata: { name: 'c', attempt: 0 }, image: { image: 'busybox' } }, sbc);
  await s.runtime.startContainer(id);
  s.fake.appendLog(id, 'stdout', 'a\n');
  s.fake.appendLog(id, 'stderr', 'b\n');
  const got: string[] = [];
  for await (const c of s.runtime.containerLogs(id, { follow: true })) {
    got.push(`${c.stream}:${c.data.toString()}`);
    if (got.length === 2) s.fake.exitContainer(id, 0);
  }
  assert.deepEqual(got, ['stdout:a\n', 'stderr:b\n']);
  const ac = new AbortController();
  const tail: string[] = [];
  for await (const c of s.runtime.containerLogs(id, { tailLines: 1 }, ac.signal)) tail.push(c.data.toString());
  assert.deepEqual(tail, ['b\n']);
});
