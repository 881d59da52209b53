/**
 * Pod status computation (upstream kubelet `generateAPIPodStatus`, `getPhase`, `status/generate.go`):
 * a pure function of the pod spec, what the runtime reports and the kubelet's in-memory facts
 * (waiting reasons such as CrashLoopBackOff, probe results). The status manager writes its result.
 */
import type { Container, ContainerStatus as ApiContainerStatus, ContainerState as ApiContainerState, Pod, PodCondition, PodStatus } from '@mk8s/api';
import { nsToMs, type ContainerStatus, type PodSandbox, type PodSandboxStatus } from '@mk8s/proto';
import { HASH_ANNOTATION, RESTART_COUNT_ANNOTATION } from './labels.js';

export interface PodRuntimeState {
  /** Every sandbox of the pod, newest first. */
  sandboxes: PodSandbox[];
  /** The newest sandbox's status, when there is one. */
  sandboxStatus?: PodSandboxStatus;
  /** Every container of the pod, newest first. */
  containers: ContainerStatus[];
}

export interface Waiting { reason: string; message?: string }

export interface StatusInput {
  pod: Pod;
  rt: PodRuntimeState;
  /** Waiting reasons the last sync decided, by container name. */
  waiting: ReadonlyMap<string, Waiting>;
  /** Readiness of a running container (probe result; true without a readiness probe). */
  ready: (containerName: string, containerId: string) => boolean;
  /** Whether a running container's startup probe passed (true without one). */
  started: (containerName: string, containerId: string) => boolean;
  hostIP: string;
  nowMs: number;
  /** The status last written (wins over pod.status, which an informer may not have caught up with). */
  previous?: PodStatus;
  /** The pod is being deleted: stopped containers make it Succeeded or Failed, not Running. */
  terminating?: boolean;
}

export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const restartCountOf = (c: ContainerStatus): number => Number(c.annotations[RESTART_COUNT_ANNOTATION] ?? c.metadata.attempt ?? 0) || 0;
export const specHashOf = (c: ContainerStatus): string | undefined => c.annotations[HASH_ANNOTATION];
export const containerIdUrl = (id: string): string => `docker://${id}`;

/** The containers of name, newest first. */
export const containersNamed = (rt: PodRuntimeState, name: string): ContainerStatus[] => rt.containers.filter((c) => c.metadata.name === name);

function terminated(c: ContainerStatus): ApiContainerState {
  return {
    terminated: {
      exitCode: c.exitCode,
      reason: c.reason || (c.exitCode === 0 ? 'Completed' : 'Error'),
      ...(c.message ? { message: c.message } : {}),
      ...(c.startedAt ? { startedAt: rfc3339(nsToMs(c.startedAt)) } : {}),
      ...(c.finishedAt ? { finishedAt: rfc3339(nsToMs(c.finishedAt)) } : {}),
      containerID: containerIdUrl(c.id),
    },
  };
}

/** Upstream's terminated state for a container that was running and is no longer in the runtime. */
export const CONTAINER_STATUS_UNKNOWN: ApiContainerState = {
  terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated' },
};

/**
 * What the API last said of a container the runtime no longer has (removed behind the kubelet's
 * back): its last state (ContainerStatusUnknown if it was running) and its restart count with
 * that loss counted, as upstream's convertToAPIContainerStatuses.
 */
function lostContainer(spec: Container, inp: StatusInput, init: boolean, curId: string | undefined): { lastState: ApiContainerState; restartCount: number } | undefined {
  const old = (init ? (inp.previous ?? inp.pod.status)?.initContainerStatuses : (inp.previous ?? inp.pod.status)?.containerStatuses)?.find((s) => s.name === spec.name);
  if (!old?.containerID || old.containerID === (curId && containerIdUrl(curId))) {
    return old?.lastState?.terminated?.reason === 'ContainerStatusUnknown' ? { lastState: old.lastState, restartCount: old.restartCount ?? 0 } : undefined;
  }
  if (inp.rt.containers.some((c) => containerIdUrl(c.id) === old.containerID)) return undefined;
  if (old.state?.running) return { lastState: CONTAINER_STATUS_UNKNOWN, restartCount: (old.restartCount ?? 0) + 1 };
  return old.lastState?.terminated?.reason === 'ContainerStatusUnknown' ? { lastState: old.lastState, restartCount: old.restartCount ?? 0 } : undefined;
}

function containerStatus(spec: Container, inp: StatusInput, init: boolean, initializing = false): ApiContainerStatus {
  const all = containersNamed(inp.rt, spec.name);
  const cur = all[0];
  const prev = all[1];
  const waiting = inp.waiting.get(spec.name);
  const lost = prev ? undefined : lostContainer(spec, inp, init, cur?.id);
  const base = { name: spec.name, image: spec.image ?? '', imageID: cur?.imageRef ?? '', restartCount: cur ? restartCountOf(cur) : lost?.restartCount ?? 0 };
  if (!cur) {
    return { ...base, imageID: '', ready: false, started: false, state: { waiting: { reason: waiting?.reason ?? (init || initializing ? 'PodInitializing' : 'ContainerCreating'), ...(waiting?.message ? { message: waiting.message } : {}) } }, lastState: lost?.lastState ?? {} };
  }
  const withId = { ...base, containerID: containerIdUrl(cur.id) };
  if (cur.state === 'CONTAINER_RUNNING') {
    const started = inp.started(spec.name, cur.id);
    return {
      ...withId, started, ready: started && inp.ready(spec.name, cur.id),
      state: { running: { startedAt: rfc3339(nsToMs(cur.startedAt || cur.createdAt)) } },
      lastState: prev && prev.state === 'CONTAINER_EXITED' ? terminated(prev) : lost?.lastState ?? {},
    };
  }
  if (cur.state === 'CONTAINER_EXITED') {
    // A container waiting to be restarted shows the wait and keeps the exit as lastState (upstream).
    if (waiting) {
      return { ...withId, ready: false, started: false, state: { waiting: { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } }, lastState: terminated(cur) };
    }
    return { ...withId, ready: false, started: false, state: terminated(cur), lastState: prev && prev.state === 'CONTAINER_EXITED' ? terminated(prev) : {} };
  }
  return { ...withId, ready: false, started: false, state: { waiting: { reason: waiting?.reason ?? 'ContainerCreating' } }, lastState: prev ? terminated(prev) : {} };
}

/** Succeeded and Failed are final: the kubelet never starts anything of such a pod again. */
export const isTerminalPhase = (phase: string | undefined): boolean => phase === 'Succeeded' || phase === 'Failed';

/** getPhase mirrors upstream's getPhase for the pod's restartPolicy. */
export function getPhase(pod: Pod, init: ApiContainerStatus[], regular: ApiContainerStatus[], terminating = false): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  let pendingInit = 0; let failedInit = false;
  for (const s of init) {
    if (s.state?.terminated) { if (s.state.terminated.exitCode !== 0) { pendingInit++; failedInit = true; } }
    else pendingInit++;
  }
  let running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const s of regular) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) { stopped++; if (s.state.terminated.exitCode === 0) succeeded++; }
    else if (s.state?.waiting) { if (s.lastState?.terminated) stopped++; else waiting++; }
    else waiting++;
  }
  if (failedInit && policy === 'Never') return 'Failed';
  if (pendingInit > 0 && regular.every((s) => !s.state?.running && !s.lastState?.terminated)) return 'Pending';
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped === regular.length && regular.length > 0) {
    if (terminating) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (policy === 'OnFailure') return stopped === succeeded ? 'Succeeded' : 'Running';
    return stopped === succeeded ? 'Succeeded' : 'Failed';
  }
  return 'Pending';
}

/** qosClass as upstream: Guaranteed (limits = requests for cpu and memory everywhere), BestEffort (none), else Burstable. */
export function qosClass(pod: Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const cs = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  let any = false; let guaranteed = true;
  for (const c of cs) {
    const req = c.resources?.requests ?? {}; const lim = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      const q = req[r] ?? lim[r];
      if (req[r] !== undefined || lim[r] !== undefined) any = true;
      if (lim[r] === undefined || String(q) !== String(lim[r])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function condition(type: string, ok: boolean, old: PodStatus | undefined, nowMs: number, reason?: string, message?: string): PodCondition {
  const status = ok ? 'True' : 'False';
  const prev = old?.conditions?.find((c) => c.type === type);
  return {
    type, status,
    lastProbeTime: null as unknown as string,
    lastTransitionTime: prev && prev.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(nowMs),
    ...(!ok && reason ? { reason } : {}),
    ...(!ok && message ? { message } : {}),
  };
}

/** computePodStatus returns the pod status the kubelet reports (pure). */
export function computePodStatus(inp: StatusInput): PodStatus {
  const { pod, nowMs } = inp;
  const old = inp.previous ?? pod.status;
  const initStatuses = (pod.spec?.initContainers ?? []).map((c) => containerStatus(c, inp, true));
  const initializing = initStatuses.some((s) => s.state?.terminated?.exitCode !== 0);
  const regular = (pod.spec?.containers ?? []).map((c) => containerStatus(c, inp, false, initializing));
  const phase = getPhase(pod, initStatuses, regular, inp.terminating);
  const sb = inp.rt.sandboxStatus;
  const sandboxReady = sb?.state === 'SANDBOX_READY';
  const podIP = sandboxReady ? sb?.network?.ip ?? '' : '';
  const initialized = initStatuses.every((s) => s.state?.terminated?.exitCode === 0);
  const notReady = regular.filter((s) => !s.ready).map((s) => s.name);
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const containersReady = notReady.length === 0 && !terminal;
  const unready = `containers with unready status: [${notReady.join(' ')}]`;
  const uninit = (pod.spec?.initContainers ?? []).filter((_, i) => initStatuses[i]?.state?.terminated?.exitCode !== 0).map((c) => c.name);
  const ownTypes = new Set(['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady']);
  const conditions: PodCondition[] = [
    condition('PodReadyToStartContainers', sandboxReady, old, nowMs),
    condition('Initialized', initialized, old, nowMs, 'ContainersNotInitialized', `containers with incomplete status: [${uninit.join(' ')}]`),
    condition('Ready', containersReady, old, nowMs, terminal ? 'PodCompleted' : 'ContainersNotReady', terminal ? undefined : unready),
    condition('ContainersReady', containersReady, old, nowMs, terminal ? 'PodCompleted' : 'ContainersNotReady', terminal ? undefined : unready),
    // Conditions other writers own (PodScheduled from the scheduler, DisruptionTarget) are kept.
    ...(old?.conditions ?? []).filter((c) => !ownTypes.has(c.type)),
  ];
  if (terminal) for (const c of conditions) if (c.type === 'Initialized' && initialized) delete c.reason;
  return {
    phase,
    conditions,
    hostIP: inp.hostIP,
    hostIPs: [{ ip: inp.hostIP }],
    ...(podIP ? { podIP, podIPs: [{ ip: podIP }, ...(sb?.network?.additionalIps ?? []).map((a) => ({ ip: a.ip }))] } : old?.podIP && terminal ? { podIP: old.podIP, podIPs: old.podIPs ?? [{ ip: old.podIP }] } : {}),
    startTime: old?.startTime ?? rfc3339(nowMs),
    ...(initStatuses.length ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses: regular,
    qosClass: qosClass(pod),
  };
}
