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
