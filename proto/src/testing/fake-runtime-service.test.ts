import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CriError, isNotFound } from '../errors.js';
import { FakeImageService } from './fake-image-service.js';
import { FakeRuntimeService } from './fake-runtime-service.js';
import { defineRuntimeServiceConformance } from './conformance.js';

defineRuntimeServiceConformance('fake', async () => {
  const images = new FakeImageService({ images: ['busybox'] });
  return { runtime: new FakeRuntimeService({ images }), images, image: 'busybox:latest', expectPodIp: true, teardown: async () => {} };
});

const sandbox = { metadata: { name: 'p', namespace: 'default', uid: 'u1', attempt: 0 } };

test('injectError fails the next call once and called records it', async () => {
  const rt = new FakeRuntimeService();
  rt.injectError('runPodSandbox', new CriError('Internal', 'boom'));
  await assert.rejects(rt.runPodSandbox(sandbox), /boom/);
  const id = await rt.runPodSandbox(sandbox);
  assert.ok(id);
  assert.deepEqual(rt.called, ['runPodSandbox', 'runPodSandbox']);
});

test('exitContainer and appendLog drive status and logs, follow ends on exit', async () => {
  let now = 1_000;
  const rt = new FakeRuntimeService({ now: () => now });
  const sb = await rt.runPodSandbox(sandbox);
  const id = await rt.createContainer(sb, { metadata: { name: 'c', attempt: 0 }, image: { image: 'x' } }, sandbox);
  await rt.startContainer(id);
  rt.appendLog(id, 'stdout', 'one\n');
  const got: string[] = [];
  const follow = (async () => { for await (const c of rt.containerLogs(id, { follow: true })) got.push(c.data.toString()); })();
  await new Promise((r) => setImmediate(r));
  rt.appendLog(id, 'stderr', 'two\n');
  now = 2_000;
  rt.exitContainer(id, 1);
  await follow;
  assert.deepEqual(got, ['one\n', 'two\n']);
  const st = await rt.containerStatus(id);
  assert.equal(st.state, 'CONTAINER_EXITED');
  assert.equal(st.reason, 'Error');
  assert.equal(st.finishedAt, 2_000 * 1e6);
  const tail: string[] = [];
  for await (const c of rt.containerLogs(id, { tailLines: 1 })) tail.push(c.data.toString());
  assert.deepEqual(tail, ['two\n']);
  await rt.removeContainer(id);
  await assert.rejects(rt.containerStatus(id), isNotFound);
});
