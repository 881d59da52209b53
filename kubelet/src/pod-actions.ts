/**
 * computePodActions (upstream kuberuntime `computePodActions` plus `doBackOff`): what one sync of
 * a live pod must do, decided from the pod, its runtime state (the pod cache's), the back-off
 * entries and the time. Pure: no CRI call, no clock, no mutation; table-tested in
 * pod-actions.test.ts. The runtime manager executes the plan (runtime-manager.ts).
 *
 * Order, as upstream: a pod in a terminal phase only has its containers stopped; a dead or missing
 * sandbox means kill everything and start over in a new one (init containers first); otherwise
 * the next init container, then every regular container by its state and restartPolicy. A
 * container that exited is restarted only outside its back-off window (CrashLoopBackOff: 10 s
 * doubling to 5 min, rebuilt from the restart count after a kubelet restart); a container the
 * runtime refused to create and a sandbox that could not be made wait for theirs the same way.
 */
import { createHash } from 'node:crypto';
import type { Container, Pod } from '@mk8s/api';
import { nsToMs, type ContainerStatus } from '@mk8s/proto';
import { containersNamed, restartCountOf, specHashOf, type PodRuntimeState, type Waiting } from './status.js';

/** specHash identifies the container spec a container was created from (a change restarts it). */
export const specHash = (c: Container): string =>
  createHash('sha256').update(JSON.stringify({ n: c.name, i: c.image, c: c.command, a: c.args, e: c.env, ef: c.envFrom, w: c.workingDir, p: c.ports, v: c.volumeMounts, r: c.resources })).digest('hex').slice(0, 16);

export const podFullName = (pod: Pod): string => `${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`;

/** Back-off keys: per container spec (crash and create) and per pod (sandbox). */
export const crashKey = (uid: string, c: Container): string => `${uid}/${c.name}/${specHash(c)}`;
export const createKey = (uid: string, c: Container): string => `${crashKey(uid, c)}/create`;
export const sandboxKey = (uid: string): string => `${uid}/sandbox`;

/** What the plan reads of the back-off (client-go `flowcontrol.Backoff`, read only). */
export interface BackoffReader {
  readonly initialMs: number;
  readonly maxMs: number;
  /** The live entry of key at nowMs (an entry untouched for 2 × max is gone). */
  entry(key: string, nowMs: number): { durationMs: number; lastUpdateMs: number } | undefined;
}

export type KillReason = 'Terminal' | 'SandboxChanged' | 'Liveness' | 'Startup' | 'SpecChanged' | 'Unknown';

export interface KillAction { id: string; name: string; reason: KillReason; message: string }

export interface StartAction {
  container: Container;
  init: boolean;
  /** The restart count the new container carries. */
  restartCount: number;
  /** A container being restarted: the back-off entry to advance when it starts (and seed, after a kubelet restart). */
  backoff?: { key: string; atMs: number; seedMs?: number };
  /** A CREATED container left half-made to remove first. */
  removeFirst?: string;
}

export interface PodActions {
  /** Stop every container and sandbox of the pod (its sandbox is gone or dead). */
  killPod: boolean;
  createSandbox: boolean;
  /** The newest sandbox's id when it is kept ('' when one is created). */
  sandboxId: string;
  /** The attempt number of the sandbox to create. */
  attempt: number;
  /** The sandbox is wanted but its back-off has this long to run: nothing else this sync. */
  sandboxBackoffMs?: number;
  containersToKill: KillAction[];
  /** Init container first (at most one), then regular containers. */
  containersToStart: StartAction[];
  /** Waiting reasons this plan decided (CrashLoopBackOff), by container name. */
  waiting: Map<string, Waiting>;
  /** Waiting reasons to drop (the container runs, or is done for good). */
  clearWaiting: string[];
  /** Sync again after this long (a back-off window ends). */
  requeueAfterMs?: number;
  /** An init container failed and restartPolicy is Never: the pod fails, nothing more starts. */
  initFailed: boolean;
}

export interface PodActionsInput {
  pod: Pod;
  state: PodRuntimeState;
  backoff: BackoffReader;
  nowMs: number;
  /** A probe that failed for a running container (liveness or startup), undefined otherwise. */
  probeFailed?: (containerName: string, containerId: string) => 'liveness' | 'startup' | undefined;
}

const shouldRestart = (policy: string, cur: ContainerStatus): boolean =>
  policy === 'Always' || (policy === 'OnFailure' && cur.exitCode !== 0);

/**
 * The effective back-off of key: its live entry, else (after a kubelet restart) rebuilt from the
 * restart count, unless the container ran for longer than 2 × max (10 min): then the back-off
 * was reset (upstream's entry expires 2 × max after its last update, the previous exit), and it
 * is restarted at once, the next window 10 s again.
 */
function backoffOf(inp: PodActionsInput, key: string, restartCount: number, prev: ContainerStatus): { durationMs: number; seedMs?: number } {
  const { backoff: b, nowMs } = inp;
  const finishedMs = nsToMs(prev.finishedAt || prev.createdAt);
  const ranMs = prev.startedAt ? finishedMs - nsToMs(prev.startedAt) : 0;
  if (ranMs > 2 * b.maxMs) return { durationMs: 0 };
  const e = b.entry(key, nowMs);
  if (e) return { durationMs: e.durationMs };
  if (restartCount <= 0 || nowMs - finishedMs > 2 * b.maxMs) return { durationMs: 0 };
  const seedMs = Math.min(b.initialMs * 2 ** (restartCount - 1), b.maxMs);
  return { durationMs: seedMs, seedMs };
}

export function computePodActions(inp: PodActionsInput): PodActions {
  const { pod, state: rt, nowMs } = inp;
  const uid = pod.metadata?.uid ?? '';
  const policy = pod.spec?.restartPolicy ?? 'Always';
  const a: PodActions = { killPod: false, createSandbox: false, sandboxId: '', attempt: 0, containersToKill: [], containersToStart: [], waiting: new Map(), clearWaiting: [], initFailed: false };
  const requeue: number[] = [];
  const done = (): PodActions => { if (requeue.length) a.requeueAfterMs = Math.max(100, Math.min(...requeue)); return a; };
  const live = (c: ContainerStatus) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED';
  const kill = (c: ContainerStatus, reason: KillReason, message: string) => a.containersToKill.push({ id: c.id, name: c.metadata.name, reason, message });

  // A pod in a terminal phase keeps its final state: stop what still runs, start nothing.
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
    for (const c of rt.containers.filter(live)) kill(c, 'Terminal', `Stopping container ${c.metadata.name}`);
    return done();
  }

  /**
   * Start c (prev: its newest exited instance) unless its back-off runs: then wait in
   * CrashLoopBackOff and sync again when the window ends.
   */
  const restart = (c: Container, prev: ContainerStatus | undefined, init: boolean, extra: Partial<StartAction> = {}): boolean => {
    const restartCount = prev ? restartCountOf(prev) + 1 : vanishedRestartCount(pod, c.name, init);
    if (!prev) {
      // Never ran (or vanished): only a create the runtime refused holds it back.
      const e = inp.backoff.entry(createKey(uid, c), nowMs);
      if (e && nowMs - e.lastUpdateMs < e.durationMs) { requeue.push(e.lastUpdateMs + e.durationMs - nowMs + 50); return false; }
      a.containersToStart.push({ container: c, init, restartCount, ...extra });
      return true;
    }
    const key = crashKey(uid, c);
    const finished = nsToMs(prev.finishedAt || prev.createdAt);
    const { durationMs, seedMs } = backoffOf(inp, key, restartCountOf(prev), prev);
    if (durationMs > 0 && nowMs - finished < durationMs) {
      a.waiting.set(c.name, { reason: 'CrashLoopBackOff', message: `back-off ${Math.round(durationMs / 1000)}s restarting failed container=${c.name} pod=${podFullName(pod)}` });
      requeue.push(finished + durationMs - nowMs + 50);
      return false;
    }
    a.containersToStart.push({ container: c, init, restartCount, backoff: { key, atMs: finished, ...(seedMs ? { seedMs } : {}) }, ...extra });
    return true;
  };

  const sandbox = rt.sandboxes[0];
  const sandboxReady = sandbox?.state === 'SANDBOX_READY' && rt.sandboxStatus?.state === 'SANDBOX_READY';
  if (!sandboxReady) {
    // restartPolicy Never: a pod whose sandbox died after its containers ran is not started again.
    if (sandbox && policy === 'Never' && rt.containers.length > 0) return done();
    const sb = inp.backoff.entry(sandboxKey(uid), nowMs);
    if (sb && nowMs - sb.lastUpdateMs < sb.durationMs) {
      a.sandboxBackoffMs = sb.lastUpdateMs + sb.durationMs - nowMs;
      requeue.push(a.sandboxBackoffMs + 50);
      return done();
    }
    a.killPod = rt.containers.some(live) || rt.sandboxes.some((s) => s.state === 'SANDBOX_READY');
    for (const c of rt.containers.filter(live)) kill(c, 'SandboxChanged', `Stopping container ${c.metadata.name}`);
    a.createSandbox = true;
    a.attempt = rt.sandboxes.length ? Math.max(...rt.sandboxes.map((s) => s.metadata.attempt)) + 1 : 0;
    // A new sandbox starts over: the first init container, else every container that should run.
    // Containers of the old sandbox are history: the new ones carry the next restart count.
    const first = pod.spec?.initContainers?.[0];
    if (first) { restart(first, containersNamed(rt, first.name).find((x) => !live(x)), true); return done(); }
    for (const c of pod.spec?.containers ?? []) {
      const prev = containersNamed(rt, c.name)[0];
      if (prev && policy === 'OnFailure' && prev.state === 'CONTAINER_EXITED' && prev.exitCode === 0) continue;
      if (prev && policy === 'Never' && prev.state === 'CONTAINER_EXITED') continue;
      // One still running in the dead sandbox is killed, not crashed: no back-off for it.
      if (prev && live(prev)) a.containersToStart.push({ container: c, init: false, restartCount: restartCountOf(prev) + 1 });
      else restart(c, prev, false);
    }
    return done();
  }
  a.sandboxId = sandbox.id;

  // Init containers, in order: the next one starts only after the previous one succeeded.
  for (const c of pod.spec?.initContainers ?? []) {
    const cur = containersNamed(rt, c.name).find((x) => x.podSandboxId === sandbox.id);
    if (cur?.state === 'CONTAINER_EXITED' && cur.exitCode === 0) continue;
    if (cur?.state === 'CONTAINER_RUNNING' || cur?.state === 'CONTAINER_CREATED') return done();
    if (cur?.state === 'CONTAINER_EXITED') {
      if (policy === 'Never') { a.initFailed = true; return done(); }
      restart(c, cur, true);
      return done();
    }
    restart(c, undefined, true);
    return done();
  }

  for (const c of pod.spec?.containers ?? []) {
    const cur = containersNamed(rt, c.name)[0];
    if (!cur || (cur.podSandboxId !== sandbox.id && cur.state !== 'CONTAINER_RUNNING')) {
      if (cur && !shouldRestart(policy, cur)) { a.clearWaiting.push(c.name); continue; }
      restart(c, cur, false);
      continue;
    }
    if (cur.state === 'CONTAINER_CREATED') {
      // Half-made by an interrupted sync: made again (its restart count kept).
      a.containersToStart.push({ container: c, init: false, restartCount: restartCountOf(cur), removeFirst: cur.id });
      continue;
    }
    if (cur.state === 'CONTAINER_RUNNING') {
      a.clearWaiting.push(c.name);
      const failed = inp.probeFailed?.(c.name, cur.id);
      const changed = specHashOf(cur) !== undefined && specHashOf(cur) !== specHash(c);
      if (!failed && !changed) continue;
      const message = changed ? `Container ${c.name} definition changed, will be restarted` : `Container ${c.name} failed ${failed} probe, will be restarted`;
      kill(cur, changed ? 'SpecChanged' : failed === 'liveness' ? 'Liveness' : 'Startup', message);
      // The restart waits for the back-off of the container's previous exit, as any other restart.
      if (!changed && policy === 'Never') continue;
      const prevExit = containersNamed(rt, c.name).find((x) => x.state === 'CONTAINER_EXITED');
      if (prevExit) { restart(c, prevExit, false, { restartCount: restartCountOf(cur) + 1 }); continue; }
      a.containersToStart.push({ container: c, init: false, restartCount: restartCountOf(cur) + 1, backoff: { key: crashKey(uid, c), atMs: nowMs } });
      continue;
    }
    // Exited (or unknown).
    if (!shouldRestart(policy, cur)) { a.clearWaiting.push(c.name); continue; }
    restart(c, cur, false);
  }
  return done();
}

/**
 * The restart count of a container with no instance in the runtime: 0 for one that never ran;
 * for one the API last saw running and that vanished (removed behind the kubelet's back), one
 * more than it had, as upstream counts a ContainerStatusUnknown.
 */
function vanishedRestartCount(pod: Pod, name: string, init: boolean): number {
  const old = (init ? pod.status?.initContainerStatuses : pod.status?.containerStatuses)?.find((s) => s.name === name);
  if (!old) return 0;
  // A status already showing the loss (ContainerStatusUnknown) carries the count that includes it.
  return (old.restartCount ?? 0) + (old.state?.running ? 1 : 0);
}
