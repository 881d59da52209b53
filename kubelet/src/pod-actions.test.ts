/**
 * computePodActions, table-tested like upstream's kuberuntime_manager_test (TestComputePodActions,
 * TestComputePodActionsWithInitContainers, the back-off cases): a pod, its runtime state, the
 * back-off entries and the time in; the plan out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, PodStatus } from '@mk8s/api';
import type { ContainerState, ContainerStatus, PodSandbox } from '@mk8s/proto';
import { HASH_ANNOTATION, RESTART_COUNT_ANNOTATION } from './labels.js';
import { computePodActions, crashKey, createKey, sandboxKey, specHash, type BackoffReader, type PodActions } from './pod-actions.js';
import type { PodRuntimeState } from './status.js';

const NOW = 1_700_000_000_000;
const s = (ms: number) => ms * 1e6; // ms → ns, as the CRI reports times
const c1: Container = { name: 'c1', image: 'busybox:1.36' };
const c2: Container = { name: 'c2', image: 'busybox:1.36' };
const init1: Container = { name: 'init1', image: 'busybox:1.36' };
const init2: Container = { name: 'init2', image: 'busybox:1.36' };

const pod = (o: { init?: Container[]; containers?: Container[]; policy?: 'Always' | 'OnFailure' | 'Never'; status?: PodStatus } = {}): Pod => ({
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { containers: o.containers ?? [c1, c2], ...(o.init ? { initContainers: o.init } : {}), ...(o.policy ? { restartPolicy: o.policy } : {}) },
  ...(o.status ? { status: o.status } : {}),
});
const sandbox = (ready: boolean, attempt = 0, id = `sb${attempt}`): PodSandbox => ({
  id, metadata: { name: 'web', namespace: 'default', uid: 'u1', attempt }, state: ready ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY', createdAt: s(NOW - 60_000 + attempt), labels: {}, annotations: {},
});
let seq = 0;
const ctr = (spec: Container, state: ContainerState, o: { exitCode?: number; finishedAgoMs?: number; startedAgoMs?: number; restarts?: number; sandboxId?: string; hash?: string; reason?: string } = {}): ContainerStatus => ({
  id: `${spec.name}-${++seq}`, podSandboxId: o.sandboxId ?? 'sb0', metadata: { name: spec.name, attempt: o.restarts ?? 0 }, state,
  createdAt: s(NOW - 50_000 + seq), startedAt: state === 'CONTAINER_CREATED' ? 0 : s(NOW - (o.startedAgoMs ?? 50_000)),
  finishedAt: state === 'CONTAINER_EXITED' ? s(NOW - (o.finishedAgoMs ?? 1000)) : 0, exitCode: o.exitCode ?? 0,
  image: { image: 'busybox:1.36' }, imageRef: 'sha256:b', reason: o.reason ?? '', message: '', labels: {},
  annotations: { [HASH_ANNOTATION]: o.hash ?? specHash(spec), [RESTART_COUNT_ANNOTATION]: String(o.restarts ?? 0) }, mounts: [], logPath: '',
});
const rt = (sandboxes: PodSandbox[], containers: ContainerStatus[]): PodRuntimeState => ({
  sandboxes, containers, ...(sandboxes[0] ? { sandboxStatus: { id: sandboxes[0].id, metadata: sandboxes[0].metadata, state: sandboxes[0].state, createdAt: 0, network: { ip: '10.244.0.5' }, labels: {}, annotations: {} } as never } : {}),
});
const backoff = (entries: Record<string, { durationMs: number; agoMs: number }> = {}): BackoffReader => ({
  initialMs: 10_000, maxMs: 300_000,
  entry: (key) => { const e = entries[key]; return e ? { durationMs: e.durationMs, lastUpdateMs: NOW - e.agoMs } : undefined; },
});

/** The plan, reduced to what a reader checks: what is killed, started (restart count), waits, requeue. */
const summary = (a: PodActions) => ({
  killPod: a.killPod, createSandbox: a.createSandbox, attempt: a.attempt,
  kill: a.containersToKill.map((k) => `${k.name}:${k.reason}`),
  start: a.containersToStart.map((x) => `${x.container.name}#${x.restartCount}${x.backoff ? '+backoff' : ''}${x.removeFirst ? '+remove' : ''}`),
  waiting: [...a.waiting].map(([n, w]) => `${n}:${w.reason}:${w.message?.match(/back-off \d+s/)?.[0] ?? ''}`),
  requeueS: a.requeueAfterMs === undefined ? undefined : Math.round(a.requeueAfterMs / 1000),
  ...(a.sandboxBackoffMs !== undefined ? { sandboxBackoffS: Math.round(a.sandboxBackoffMs / 1000) } : {}),
  ...(a.initFailed ? { initFailed: true } : {}),
});
const want = (o: Partial<ReturnType<typeof summary>>) => ({ killPod: false, createSandbox: false, attempt: 0, kill: [], start: [], waiting: [], requeueS: undefined, ...o });

const cases: { name: string; pod: Pod; rt: PodRuntimeState; backoff?: BackoffReader; probe?: 'liveness' | 'startup'; want: ReturnType<typeof want> }[] = [
  { name: 'a new pod: create the sandbox and start every container', pod: pod(), rt: rt([], []),
    want: want({ createSandbox: true, start: ['c1#0', 'c2#0'] }) },
  { name: 'a new pod with init containers: sandbox and the first init container only', pod: pod({ init: [init1, init2] }), rt: rt([], []),
    want: want({ createSandbox: true, start: ['init1#0'] }) },
  { name: 'everything running: nothing to do', pod: pod(), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_RUNNING'), ctr(c2, 'CONTAINER_RUNNING')]),
    want: want({}) },
  { name: 'an exited container (Always), no back-off yet: restart at once', pod: pod(), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1 }), ctr(c2, 'CONTAINER_RUNNING')]),
    want: want({ start: ['c1#1+backoff'] }) },
  { name: 'an exited container inside its back-off: CrashLoopBackOff, requeued to the window end', pod: pod(),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1, finishedAgoMs: 4000, restarts: 1 }), ctr(c2, 'CONTAINER_RUNNING')]),
    backoff: backoff({ [crashKey('u1', c1)]: { durationMs: 10_000, agoMs: 4000 } }),
    want: want({ waiting: ['c1:CrashLoopBackOff:back-off 10s'], requeueS: 6 }) },
  { name: 'the back-off window over: restart', pod: pod(),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1, finishedAgoMs: 10_500, restarts: 1 }), ctr(c2, 'CONTAINER_RUNNING')]),
    backoff: backoff({ [crashKey('u1', c1)]: { durationMs: 10_000, agoMs: 10_500 } }),
    want: want({ start: ['c1#2+backoff'] }) },
  { name: 'a new kubelet (no entry): the back-off is rebuilt from the restart count (3 → 40 s)', pod: pod(),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1, finishedAgoMs: 5000, restarts: 3 }), ctr(c2, 'CONTAINER_RUNNING')]),
    want: want({ waiting: ['c1:CrashLoopBackOff:back-off 40s'], requeueS: 35 }) },
  { name: 'the back-off caps at 5 min', pod: pod(),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1, finishedAgoMs: 1000, restarts: 9 }), ctr(c2, 'CONTAINER_RUNNING')]),
    want: want({ waiting: ['c1:CrashLoopBackOff:back-off 300s'], requeueS: 299 }) },
  { name: 'a container that ran for over 10 minutes: its back-off was reset, restarted at once (the next window 10 s)', pod: pod(),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1, startedAgoMs: 11 * 60_000, finishedAgoMs: 1000, restarts: 6 }), ctr(c2, 'CONTAINER_RUNNING')]),
    want: want({ start: ['c1#7+backoff'] }) },
  { name: 'a container that ran for over 10 minutes, a reader still holding its 5 min entry: reset all the same', pod: pod({ containers: [c1] }),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1, startedAgoMs: 11 * 60_000, finishedAgoMs: 1000, restarts: 6 })]),
    backoff: backoff({ [crashKey('u1', c1)]: { durationMs: 300_000, agoMs: 12 * 60_000 } }),
    want: want({ start: ['c1#7+backoff'] }) },
  { name: 'a container that ran for 9 minutes: no reset, the back-off rebuilt from its restart count (6 → 300 s)', pod: pod(),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1, startedAgoMs: 9 * 60_000, finishedAgoMs: 1000, restarts: 6 }), ctr(c2, 'CONTAINER_RUNNING')]),
    want: want({ waiting: ['c1:CrashLoopBackOff:back-off 300s'], requeueS: 299 }) },
  { name: 'an OOMKilled container (137) restarts through the same back-off', pod: pod({ containers: [c1] }),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 137, reason: 'OOMKilled', finishedAgoMs: 15_000, restarts: 2 })]),
    backoff: backoff({ [crashKey('u1', c1)]: { durationMs: 20_000, agoMs: 15_000 } }),
    want: want({ waiting: ['c1:CrashLoopBackOff:back-off 20s'], requeueS: 5 }) },
  { name: 'a start that failed (StartError 128) restarts through the same back-off', pod: pod({ containers: [c1] }),
    rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 128, reason: 'StartError', finishedAgoMs: 2000, restarts: 1 })]),
    backoff: backoff({ [crashKey('u1', c1)]: { durationMs: 10_000, agoMs: 2000 } }),
    want: want({ waiting: ['c1:CrashLoopBackOff:back-off 10s'], requeueS: 8 }) },
  { name: 'a create the runtime refused: not tried again inside its back-off', pod: pod({ containers: [c1] }), rt: rt([sandbox(true)], []),
    backoff: backoff({ [createKey('u1', c1)]: { durationMs: 20_000, agoMs: 5000 } }),
    want: want({ requeueS: 15 }) },
  { name: 'a create the runtime refused: tried again after its back-off', pod: pod({ containers: [c1] }), rt: rt([sandbox(true)], []),
    backoff: backoff({ [createKey('u1', c1)]: { durationMs: 20_000, agoMs: 20_001 } }),
    want: want({ start: ['c1#0'] }) },
  { name: 'OnFailure, exit 0: done, not restarted', pod: pod({ containers: [c1], policy: 'OnFailure' }), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 0 })]),
    want: want({}) },
  { name: 'OnFailure, exit 1: restarted', pod: pod({ containers: [c1], policy: 'OnFailure' }), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1 })]),
    want: want({ start: ['c1#1+backoff'] }) },
  { name: 'Never, exit 1: not restarted', pod: pod({ containers: [c1], policy: 'Never' }), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 1 })]),
    want: want({}) },
  { name: 'a dead sandbox: kill everything, new sandbox (next attempt), containers at the next restart count', pod: pod(),
    rt: rt([sandbox(false)], [ctr(c1, 'CONTAINER_RUNNING'), ctr(c2, 'CONTAINER_EXITED', { exitCode: 137, finishedAgoMs: 60_000 })]),
    want: want({ killPod: true, createSandbox: true, attempt: 1, kill: ['c1:SandboxChanged'], start: ['c1#1', 'c2#1+backoff'] }) },
  { name: 'a dead sandbox, Never, containers ran: nothing (the pod is over)', pod: pod({ policy: 'Never' }),
    rt: rt([sandbox(false)], [ctr(c1, 'CONTAINER_EXITED', { exitCode: 0 })]), want: want({}) },
  { name: 'a sandbox that could not be made: nothing inside its back-off', pod: pod(), rt: rt([], []),
    backoff: backoff({ [sandboxKey('u1')]: { durationMs: 10_000, agoMs: 3000 } }),
    want: want({ requeueS: 7, sandboxBackoffS: 7 }) },
  { name: 'init: the first init container runs: wait', pod: pod({ init: [init1, init2] }), rt: rt([sandbox(true)], [ctr(init1, 'CONTAINER_RUNNING')]),
    want: want({}) },
  { name: 'init: the first succeeded: start the second', pod: pod({ init: [init1, init2] }), rt: rt([sandbox(true)], [ctr(init1, 'CONTAINER_EXITED', { exitCode: 0 })]),
    want: want({ start: ['init2#0'] }) },
  { name: 'init: all succeeded: start the app containers', pod: pod({ init: [init1] }), rt: rt([sandbox(true)], [ctr(init1, 'CONTAINER_EXITED', { exitCode: 0 })]),
    want: want({ start: ['c1#0', 'c2#0'] }) },
  { name: 'init: failed (Always): restarted through its back-off (Init:CrashLoopBackOff)', pod: pod({ init: [init1] }),
    rt: rt([sandbox(true)], [ctr(init1, 'CONTAINER_EXITED', { exitCode: 1, finishedAgoMs: 1000, restarts: 1 })]),
    backoff: backoff({ [crashKey('u1', init1)]: { durationMs: 10_000, agoMs: 1000 } }),
    want: want({ waiting: ['init1:CrashLoopBackOff:back-off 10s'], requeueS: 9 }) },
  { name: 'init: failed (Never): the pod fails, nothing starts (Init:Error)', pod: pod({ init: [init1], policy: 'Never' }),
    rt: rt([sandbox(true)], [ctr(init1, 'CONTAINER_EXITED', { exitCode: 1 })]), want: want({ initFailed: true }) },
  { name: 'a failed liveness probe: kill and restart', pod: pod({ containers: [c1] }), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_RUNNING')]), probe: 'liveness',
    want: want({ kill: ['c1:Liveness'], start: ['c1#1+backoff'] }) },
  { name: 'a failed startup probe, Never: kill only', pod: pod({ containers: [c1], policy: 'Never' }), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_RUNNING')]), probe: 'startup',
    want: want({ kill: ['c1:Startup'] }) },
  { name: 'a changed container spec: kill and restart', pod: pod({ containers: [c1] }), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_RUNNING', { hash: 'old' })]),
    want: want({ kill: ['c1:SpecChanged'], start: ['c1#1+backoff'] }) },
  { name: 'a container left created by an interrupted sync: removed and made again', pod: pod({ containers: [c1] }), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_CREATED', { restarts: 2 })]),
    want: want({ start: ['c1#2+remove'] }) },
  { name: 'a container that vanished while running (ContainerStatusUnknown): started again, counted as a restart', pod: pod({
    containers: [c1], status: { containerStatuses: [{ name: 'c1', image: 'busybox:1.36', imageID: '', ready: true, restartCount: 2, state: { running: {} }, containerID: 'docker://gone' }] },
  }), rt: rt([sandbox(true)], []), want: want({ start: ['c1#3'] }) },
  { name: 'a terminal pod: stop what runs, start nothing', pod: pod({ status: { phase: 'Failed' } }), rt: rt([sandbox(true)], [ctr(c1, 'CONTAINER_RUNNING'), ctr(c2, 'CONTAINER_EXITED', { exitCode: 1 })]),
    want: want({ kill: ['c1:Terminal'] }) },
];

for (const tc of cases) {
  test(tc.name, () => {
    const plan = computePodActions({ pod: tc.pod, state: tc.rt, backoff: tc.backoff ?? backoff(), nowMs: NOW, probeFailed: () => tc.probe });
    assert.deepEqual(summary(plan), tc.want);
  });
}

test('computePodActions mutates nothing it is given', () => {
  const p = pod({ init: [init1] });
  const r = rt([sandbox(true)], [ctr(init1, 'CONTAINER_EXITED', { exitCode: 1 })]);
  const frozen = <T>(o: T): T => { if (o && typeof o === 'object') { Object.freeze(o); for (const v of Object.values(o)) frozen(v); } return o; };
  computePodActions({ pod: frozen(p), state: frozen(r), backoff: backoff(), nowMs: NOW });
});
