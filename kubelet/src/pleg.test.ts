import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeRuntimeService } from '@mk8s/proto/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import { silentLogger } from '@mk8s/component-base';
import { GenericPleg, eventState, generateEvents, type PlegState } from './pleg.js';

const states: PlegState[] = ['running', 'exited', 'unknown', 'non-existent'];
const want: Record<string, string[]> = {
  'running>exited': ['ContainerDied'], 'running>unknown': ['ContainerChanged'], 'running>non-existent': ['ContainerDied', 'ContainerRemoved'],
  'exited>running': ['ContainerStarted'], 'exited>unknown': ['ContainerChanged'], 'exited>non-existent': ['ContainerRemoved'],
  'unknown>running': ['ContainerStarted'], 'unknown>exited': ['ContainerDied'], 'unknown>non-existent': ['ContainerDied', 'ContainerRemoved'],
  'non-existent>running': ['ContainerStarted'], 'non-existent>exited': ['ContainerDied'], 'non-existent>unknown': ['ContainerChanged'],
};
test('eventState: the last event of a transition names the state it ends in (the kubelet drops echoes of its own sync)', () => {
  for (const from of states) for (const to of states) {
    const evs = generateEvents('u', 'c', from, to);
    if (evs.length) assert.equal(eventState(evs[evs.length - 1]!.type), to, `${from} → ${to}`);
  }
});

for (const from of states) for (const to of states) {
  test(`generateEvents ${from} → ${to}`, () => {
    assert.deepEqual(generateEvents('u', 'c', from, to).map((e) => e.type), want[`${from}>${to}`] ?? []);
  });
}

test('relist reports a started and then a died container of a pod', async () => {
  const clock = new FakeClock();
  const rt = new FakeRuntimeService({ now: () => clock.now() });
  const seen: string[] = [];
  const pleg = new GenericPleg({ runtime: rt, clock, logger: silentLogger(), onEvent: (e) => seen.push(`${e.podUid} ${e.type}`) });
  await pleg.relist();
  const sb = await rt.runPodSandbox({ metadata: { name: 'p', namespace: 'd', uid: 'u1', attempt: 0 }, labels: { 'io.kubernetes.pod.uid': 'u1' } });
  const id = await rt.createContainer(sb, { metadata: { name: 'c', attempt: 0 }, image: { image: 'busybox:latest' }, labels: { 'io.kubernetes.pod.uid': 'u1' } }, { metadata: { name: 'p', namespace: 'd', uid: 'u1', attempt: 0 } });
  await rt.startContainer(id);
  await pleg.relist();
  assert.deepEqual(seen.sort(), ['u1 ContainerStarted', 'u1 ContainerStarted']); // sandbox and container
  seen.length = 0;
  rt.exitContainer(id, 1);
  await pleg.relist();
  assert.deepEqual(seen, ['u1 ContainerDied']);
  seen.length = 0;
  await pleg.relist();
  assert.deepEqual(seen, []);
  assert.equal(pleg.healthy(), true);
});
