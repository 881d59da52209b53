import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, Pod } from '@mk8s/api';
import { getPhase, qosClass } from './status.js';

const running: ContainerStatus = { name: 'c', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } };
const waiting: ContainerStatus = { name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } };
const exited = (code: number): ContainerStatus => ({ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: code } } });
const crashLoop: ContainerStatus = { name: 'c', image: 'i', imageID: '', ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1 } } };
const pod = (restartPolicy: 'Always' | 'OnFailure' | 'Never'): Pod => ({ metadata: { name: 'p' }, spec: { restartPolicy, containers: [{ name: 'c' }] } });

for (const tc of [
  { name: 'waiting → Pending', policy: 'Always' as const, init: [], cs: [waiting], want: 'Pending' },
  { name: 'running → Running', policy: 'Always' as const, init: [], cs: [running], want: 'Running' },
  { name: 'crash loop with Always → Running', policy: 'Always' as const, init: [], cs: [crashLoop], want: 'Running' },
  { name: 'Never, exit 0 → Succeeded', policy: 'Never' as const, init: [], cs: [exited(0)], want: 'Succeeded' },
  { name: 'Never, exit 1 → Failed', policy: 'Never' as const, init: [], cs: [exited(1)], want: 'Failed' },
  { name: 'OnFailure, exit 1 → Running (will restart)', policy: 'OnFailure' as const, init: [], cs: [exited(1)], want: 'Running' },
  { name: 'OnFailure, exit 0 → Succeeded', policy: 'OnFailure' as const, init: [], cs: [exited(0)], want: 'Succeeded' },
  { name: 'Always, all exited → Running', policy: 'Always' as const, init: [], cs: [exited(0)], want: 'Running' },
  { name: 'init running → Pending', policy: 'Always' as const, init: [running], cs: [waiting], want: 'Pending' },
  { name: 'init failed with Never → Failed', policy: 'Never' as const, init: [exited(1)], cs: [waiting], want: 'Failed' },
  { name: 'one running, one crash-looping → Running', policy: 'Always' as const, init: [], cs: [running, crashLoop], want: 'Running' },
]) {
  test(`getPhase: ${tc.name}`, () => assert.equal(getPhase(pod(tc.policy), tc.init, tc.cs), tc.want));
}

test('getPhase: a terminating pod whose containers stopped is Succeeded or Failed, never Running', () => {
  assert.equal(getPhase(pod('Always'), [], [exited(0)], true), 'Succeeded');
  assert.equal(getPhase(pod('Always'), [], [exited(137)], true), 'Failed');
});

for (const tc of [
  { name: 'BestEffort', res: {}, want: 'BestEffort' },
  { name: 'Guaranteed', res: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '100m', memory: '32Mi' } }, want: 'Guaranteed' },
  { name: 'Guaranteed from limits only', res: { limits: { cpu: '1', memory: '1Gi' } }, want: 'Guaranteed' },
  { name: 'Burstable', res: { limits: { memory: '32Mi' } }, want: 'Burstable' },
]) test(`qosClass: ${tc.name}`, () => assert.equal(qosClass({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', resources: tc.res }] } }), tc.want));

test('a container that vanished while running: lastState ContainerStatusUnknown (137), its loss counted, kept once it runs again', async () => {
  const { computePodStatus: compute } = await import('./status.js');
  const pod: import('@mk8s/api').Pod = {
    metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] },
    status: { phase: 'Running', containerStatuses: [{ name: 'c', image: 'busybox:1.36', imageID: 'x', ready: true, restartCount: 2, containerID: 'docker://gone', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }] },
  };
  const base = { pod, waiting: new Map(), ready: () => true, started: () => true, hostIP: '10.240.0.11', nowMs: 1_700_000_000_000 };
  const sb = { id: 's', metadata: { name: 'p', namespace: 'default', uid: 'u', attempt: 0 }, state: 'SANDBOX_READY' as const, createdAt: 1, labels: {}, annotations: {} };
  const gone = compute({ ...base, rt: { sandboxes: [sb], containers: [] } });
  const cs = gone.containerStatuses![0]!;
  assert.equal(cs.lastState?.terminated?.reason, 'ContainerStatusUnknown');
  assert.equal(cs.lastState?.terminated?.exitCode, 137);
  assert.equal(cs.restartCount, 3);
  assert.equal(cs.state?.waiting?.reason, 'ContainerCreating');
  const again = { id: 'new', podSandboxId: 's', metadata: { name: 'c', attempt: 3 }, state: 'CONTAINER_RUNNING' as const, createdAt: 2e15, startedAt: 2e15, finishedAt: 0, exitCode: 0,
    image: { image: 'busybox:1.36' }, imageRef: 'x', reason: '', message: '', labels: {}, annotations: { 'io.kubernetes.container.restartCount': '3' }, mounts: [], logPath: '' };
  const back = compute({ ...base, previous: gone, rt: { sandboxes: [sb], containers: [again] } }).containerStatuses![0]!;
  assert.ok(back.state?.running);
  assert.equal(back.restartCount, 3);
  assert.equal(back.lastState?.terminated?.reason, 'ContainerStatusUnknown');
  const later = compute({ ...base, previous: compute({ ...base, previous: gone, rt: { sandboxes: [sb], containers: [again] } }), rt: { sandboxes: [sb], containers: [again] } }).containerStatuses![0]!;
  assert.equal(later.lastState?.terminated?.reason, 'ContainerStatusUnknown');
});
