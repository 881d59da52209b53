/**
 * KubeRuntimeManager (upstream `kuberuntime_manager.go`): reads a pod's runtime state
 * (`getPodStatus`), and executes the plan `computePodActions` made for it (`syncPod`), kills pods
 * (`killPod`) and removes what a deleted pod left (`cleanupPod`). It decides nothing itself: what
 * to start, kill and wait for comes from pod-actions.ts; images from image-manager.ts; GC from
 * container-gc.ts; hooks and kill from container-kill.ts; CRI configs from sandbox-config.ts.
 *
 * Called only by the pod workers (never concurrently for one pod).
 */
import type { Clock, Logger } from '@mk8s/component-base';
import { Backoff, type EventRecorder } from '@mk8s/client';
import type { Pod } from '@mk8s/api';
import {
  nsToMs, isNotFound, normalizeImageRef,
  type RuntimeService, type ImageService, type Image, type ContainerStatus, type Container as CriContainer, type PodSandbox,
} from '@mk8s/proto';
import { ContainerConfigError, makeEnvironment, type ConfigSource } from './env.js';
import { ContainerGc } from './container-gc.js';
import { ContainerKiller } from './container-kill.js';
import { ImageManager, pullPolicyOf } from './image-manager.js';
import { POD_UID_LABEL } from './labels.js';
import { computePodActions, createKey, podFullName, sandboxKey, type PodActions, type StartAction } from './pod-actions.js';
import type { ProbeManager, Prober } from './prober.js';
import { containerConfig, sandboxConfig } from './sandbox-config.js';
import { containersNamed, isTerminalPhase, type PodRuntimeState, type Waiting } from './status.js';
import { MountRetry, VolumeError, containerMounts, podDir, setupVolumes, removePodDir, type VolumePaths } from './volumes.js';
import { etcHostsContent, etcHostsMounts, writeEtcHosts } from './dns.js';

export interface RuntimeManagerOptions {
  runtime: RuntimeService;
  images: ImageService;
  configs: ConfigSource;
  recorder: EventRecorder;
  probes: ProbeManager;
  prober: Prober;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  nodeIP: () => string;
  rootDir: string;
  /** @default ['10.96.0.10'] */
  clusterDNS?: string[];
  /** @default 'cluster.local' */
  clusterDomain?: string;
  /** CrashLoopBackOff (and refused creates, failed sandboxes): first delay. @default 10_000 */
  crashBackoffInitialMs?: number;
  /** @default 300_000 */
  crashBackoffMaxMs?: number;
}

export interface SyncResult { requeueAfterMs?: number }

const byNewest = <T extends { createdAt: number; metadata: { attempt: number } }>(a: T, b: T) => b.createdAt - a.createdAt || b.metadata.attempt - a.metadata.attempt;
const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class KubeRuntimeManager {
  /** Waiting reasons of the last syncs (upstream's reasonCache), by pod uid then container name. */
  readonly waiting = new Map<string, Map<string, Waiting>>();
  /** Per container (crash, refused create) and per pod (sandbox) back-off. */
  readonly crashBackoff: Backoff;
  readonly imageManager: ImageManager;
  readonly killer: ContainerKiller;
  /** Retries of pods whose volumes failed (volumes.ts). */
  readonly mountRetry = new MountRetry();
  private readonly gc: ContainerGc;
  constructor(private readonly o: RuntimeManagerOptions) {
    this.crashBackoff = new Backoff({ clock: o.clock, initialMs: o.crashBackoffInitialMs ?? 10_000, maxMs: o.crashBackoffMaxMs ?? 300_000 });
    this.imageManager = new ImageManager({ images: o.images, recorder: o.recorder, clock: o.clock });
    this.killer = new ContainerKiller({ runtime: o.runtime, prober: o.prober, recorder: o.recorder, clock: o.clock });
    this.gc = new ContainerGc(o.runtime);
  }

  /** The image back-off (tests). */
  get imageBackoff(): Backoff { return this.imageManager.backoff; }

  waitingOf(uid: string): Map<string, Waiting> {
    let m = this.waiting.get(uid);
    if (!m) { m = new Map(); this.waiting.set(uid, m); }
    return m;
  }

  /** Reads the pod's sandboxes and containers (newest first) from the runtime (upstream GetPodStatus). */
  async getPodStatus(uid: string): Promise<PodRuntimeState> {
    const sel = { labelSelector: { [POD_UID_LABEL]: uid } };
    const [sandboxes, list] = await Promise.all([this.o.runtime.listPodSandbox(sel), this.o.runtime.listContainers(sel)]);
    return this.inspect(sandboxes, list);
  }

  /** The full state of a pod from its listed sandboxes and containers (the PLEG's relist has the lists). */
  async inspect(sandboxes: PodSandbox[], list: CriContainer[]): Promise<PodRuntimeState> {
    const sbs = [...sandboxes].sort(byNewest);
    const containers = (await Promise.all(list.map((c) => this.o.runtime.containerStatus(c.id).catch((err: unknown) => { if (isNotFound(err)) return undefined; throw err; }))))
      .filter((c): c is ContainerStatus => !!c).sort(byNewest);
    const newest = sbs[0];
    const sandboxStatus = newest ? await this.o.runtime.podSandboxStatus(newest.id).catch((err: unknown) => { if (isNotFound(err)) return undefined; throw err; }) : undefined;
    return { sandboxes: sbs, containers, ...(sandboxStatus ? { sandboxStatus } : {}) };
  }

  sandboxConfig(pod: Pod, attempt: number) {
    return sandboxConfig(pod, attempt, { ...(this.o.clusterDNS ? { clusterDNS: this.o.clusterDNS } : {}), ...(this.o.clusterDomain ? { clusterDomain: this.o.clusterDomain } : {}) });
  }

  /** The plan for pod on state now (pure; probe results and back-off read here). */
  computePodActions(pod: Pod, state: PodRuntimeState): PodActions {
    const uid = pod.metadata?.uid ?? '';
    return computePodActions({
      pod, state, backoff: this.crashBackoff, nowMs: this.o.clock.now(),
      probeFailed: (name, id) => (this.o.probes.result(uid, name, id, 'startup') === false ? 'startup' : this.o.probes.result(uid, name, id, 'liveness') === false ? 'liveness' : undefined),
    });
  }

  /**
   * Syncs a live (not terminating) pod from `state` (the pod cache's, or read now): its volumes
   * first (no sandbox before they are ready, as upstream), then the plan. Rejecting retries with
   * the worker's back-off. Returns the runtime's state after the sync, re-read only as far as
   * the sync changed it.
   */
  async syncPod(pod: Pod, signal: AbortSignal, current?: PodRuntimeState): Promise<{ result: SyncResult; rt: PodRuntimeState }> {
    const uid = pod.metadata?.uid ?? '';
    const log = this.o.logger.child({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, podUid: uid });
    const waiting = this.waitingOf(uid);
    let rt = current ?? await this.getPodStatus(uid);
    const terminal = isTerminalPhase(pod.status?.phase);

    let volumes: VolumePaths = new Map<string, string>();
    if (!terminal) {
      try { volumes = await setupVolumes(this.o.rootDir, pod, this.o.configs); } catch (err) {
        if (!(err instanceof VolumeError)) throw err;
        const retry = this.mountRetry.failed(uid, err, this.o.clock.now());
        if (retry.event) this.o.recorder.event(pod, 'Warning', 'FailedMount', 'MountVolume.SetUp failed: %s', err.message);
        return { result: { requeueAfterMs: retry.retryAfterMs }, rt };
      }
      this.mountRetry.forget(uid);
    }

    const plan = this.computePodActions(pod, rt);
    const requeue: number[] = plan.requeueAfterMs !== undefined ? [plan.requeueAfterMs] : [];
    for (const name of plan.clearWaiting) waiting.delete(name);
    for (const [name, w] of plan.waiting) {
      const old = waiting.get(name);
      if (w.reason === 'CrashLoopBackOff' && (old?.reason !== w.reason || old.message !== w.message)) {
        this.o.recorder.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container %s in pod %s', name, podFullName(pod));
      }
      waiting.set(name, w);
    }
    let acted = false;

    // Kill what the plan says (probe failures, spec changes, a dead sandbox, a terminal pod).
    const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    await Promise.all(plan.containersToKill.map(async (k) => {
      const cur = rt.containers.find((c) => c.id === k.id);
      if (!cur) return;
      acted = true;
      await this.killer.killContainer(pod, pod.spec?.containers?.find((s) => s.name === k.name), cur, k.reason === 'Terminal' || k.reason === 'SandboxChanged' ? 0 : grace, k.message);
      if (k.reason !== 'Terminal') this.o.probes.remove(uid, k.name);
    }));
    if (plan.killPod) {
      acted = true;
      for (const s of rt.sandboxes) if (s.state === 'SANDBOX_READY') await this.o.runtime.stopPodSandbox(s.id).catch(() => undefined);
    }
    if (terminal || plan.sandboxBackoffMs !== undefined || plan.initFailed || signal.aborted) {
      return { result: requeue.length ? { requeueAfterMs: Math.min(...requeue) } : {}, rt: acted ? await this.getPodStatus(uid) : rt };
    }

    /** Image presence asked for while a new sandbox starts (ensureImageExists reads it). */
    const imageChecks = new Map<string, Promise<Image | undefined>>();
    let sandboxId = plan.sandboxId;
    let attempt = plan.attempt;
    if (plan.createSandbox) {
      // The sandbox takes Docker a while: ask meanwhile whether the images are present (read only).
      for (const s of plan.containersToStart) {
        const image = normalizeImageRef(s.container.image ?? '');
        if (pullPolicyOf(s.container, image) === 'Always' || imageChecks.has(image)) continue;
        const check = this.imageManager.imageStatus(image);
        check.catch(() => undefined); // awaited (and its error thrown) where it is used
        imageChecks.set(image, check);
      }
      try {
        sandboxId = await this.o.runtime.runPodSandbox(this.sandboxConfig(pod, attempt));
      } catch (err) {
        // No new try before the pod's sandbox back-off ends (10 s doubling), as for containers.
        this.crashBackoff.next(sandboxKey(uid));
        this.o.recorder.event(pod, 'Warning', 'FailedCreatePodSandBox', 'Failed to create pod sandbox: %s', errMessage(err));
        log.warn({ err, attempt }, 'Could not create pod sandbox');
        return { result: { requeueAfterMs: this.crashBackoff.get(sandboxKey(uid)) + 50 }, rt: await this.getPodStatus(uid) };
      }
      log.info({ sandboxId, attempt }, 'Created pod sandbox');
      if (rt.sandboxes.length === 0 && rt.containers.length === 0) {
        // A new pod: its state is this one sandbox, and one status call says all about it.
        const st = await this.o.runtime.podSandboxStatus(sandboxId);
        rt = { sandboxes: [{ id: st.id, metadata: st.metadata, state: st.state, createdAt: st.createdAt, labels: st.labels, annotations: st.annotations }], containers: [], sandboxStatus: st };
      } else {
        rt = await this.getPodStatus(uid);
      }
    } else {
      attempt = rt.sandboxes[0]?.metadata.attempt ?? 0;
    }
    const podIP = rt.sandboxStatus?.network?.ip ?? '';
    const sbConfig = this.sandboxConfig(pod, attempt);
    // The managed /etc/hosts (the pod's own name): written once its IP is known, mounted into each container.
    if (podIP && !pod.spec?.hostNetwork) await writeEtcHosts(podDir(this.o.rootDir, uid), etcHostsContent(pod, [podIP], this.o.clusterDomain ?? 'cluster.local'));

    const started: string[] = [];
    for (const s of plan.containersToStart) {
      if (signal.aborted) break;
      const r = await this.startContainer(pod, s, { sandboxId, podIP, sbConfig, volumes, waiting, log, imageChecks });
      if (r.id) started.push(r.id);
      if (r.acted) acted = true;
      if (r.requeueAfterMs !== undefined) requeue.push(r.requeueAfterMs);
    }

    if (await this.gc.run(rt)) acted = true;
    if (acted) {
      rt = await this.getPodStatus(uid);
    } else if (started.length) {
      // Only new containers: their status is all that changed.
      const fresh = await Promise.all(started.map((id) => this.o.runtime.containerStatus(id)));
      rt = { ...rt, containers: [...fresh, ...rt.containers].sort(byNewest) };
    }
    // Probe workers exist from the moment a container runs, so Ready waits for the first success.
    for (const c of pod.spec?.containers ?? []) {
      const cur = containersNamed(rt, c.name)[0];
      if (cur?.state !== 'CONTAINER_RUNNING') continue;
      const prevReady = pod.status?.containerStatuses?.find((x) => x.name === c.name && x.containerID === `docker://${cur.id}`)?.ready;
      this.o.probes.ensure(pod, c, cur.id, nsToMs(cur.startedAt || cur.createdAt), podIP, prevReady);
    }
    return { result: requeue.length ? { requeueAfterMs: Math.max(100, Math.min(...requeue)) } : {}, rt };
  }

  /**
   * Starts one container of the plan (upstream `startContainer`): image, config, create, start,
   * postStart. Each failure is the container's waiting reason and an Event, never a throw.
   */
  private async startContainer(pod: Pod, s: StartAction, ctx: StartCtx): Promise<{ id?: string; acted?: boolean; requeueAfterMs?: number }> {
    const c = s.container;
    const uid = pod.metadata?.uid ?? '';
    const fail = (reason: string, message: string, requeueAfterMs?: number, event = true) => {
      ctx.waiting.set(c.name, { reason, message });
      if (event) this.o.recorder.event(pod, 'Warning', 'Failed', 'Error: %s', message);
      return requeueAfterMs !== undefined ? { requeueAfterMs } : {};
    };
    let acted = false;
    if (s.removeFirst) { acted = true; await this.o.runtime.removeContainer(s.removeFirst); }
    const image = await this.imageManager.ensureImageExists(pod, c, ctx.sbConfig, ctx.imageChecks.get(normalizeImageRef(c.image ?? '')));
    ctx.imageChecks.delete(normalizeImageRef(c.image ?? '')); // an answer is used once: a later container asks afresh
    if ('waiting' in image) {
      ctx.waiting.set(c.name, image.waiting);
      return { acted, ...(image.requeueAfterMs !== undefined ? { requeueAfterMs: image.requeueAfterMs } : {}) };
    }
    let config;
    try {
      const envs = await makeEnvironment(c, { pod, podIP: ctx.podIP, podIPs: ctx.podIP ? [ctx.podIP] : [], hostIP: this.o.nodeIP(), nodeName: this.o.nodeName }, this.o.configs);
      const mounts = [...containerMounts(c, ctx.volumes), ...etcHostsMounts(pod, c, ctx.podIP ? [ctx.podIP] : [], podDir(this.o.rootDir, uid))];
      config = containerConfig(pod, c, { restartCount: s.restartCount, init: s.init, envs, mounts });
    } catch (err) {
      if (!(err instanceof ContainerConfigError) && !(err instanceof VolumeError)) throw err;
      // Upstream retries at the next sync: no container is made, so nothing to back off.
      return { acted, ...fail('CreateContainerConfigError', err.message, 10_000) };
    }
    // A restart advances the container's back-off (rebuilt first after a kubelet restart).
    if (s.backoff) {
      if (s.backoff.seedMs && !this.crashBackoff.entry(s.backoff.key, this.o.clock.now())) this.crashBackoff.seed(s.backoff.key, s.backoff.seedMs, s.backoff.atMs);
      this.crashBackoff.next(s.backoff.key, s.backoff.atMs);
    }
    let id: string;
    try {
      id = await this.o.runtime.createContainer(ctx.sandboxId, config, ctx.sbConfig);
    } catch (err) {
      // The runtime refused the container (no command, a bad mount): CreateContainerError, and
      // no new try before the container's create back-off ends (10 s doubling to 5 min).
      const key = createKey(uid, c);
      this.crashBackoff.next(key);
      return { acted: true, ...fail('CreateContainerError', errMessage(err), this.crashBackoff.get(key) + 50) };
    }
    this.crashBackoff.forgetPrefix(createKey(uid, c));
    this.o.recorder.event(pod, 'Normal', 'Created', 'Created container %s', c.name);
    try {
      await this.o.runtime.startContainer(id);
    } catch (err) {
      // The container exists but could not run (its command does not exist): the runtime reports
      // it exited (StartError, 128); the pod shows RunContainerError, and its restarts go through
      // the back-off like any other exit (CrashLoopBackOff).
      return { id, acted: true, ...fail('RunContainerError', errMessage(err), 0) };
    }
    ctx.waiting.delete(c.name);
    this.o.recorder.event(pod, 'Normal', 'Started', 'Started container %s', c.name);
    ctx.log.info({ container: c.name, containerId: id }, 'Started container');
    if (!(await this.killer.postStart(pod, c, id, ctx.podIP))) acted = true;
    return { id, acted };
  }

  /**
   * Kills a pod (upstream `KillPod`): its containers in parallel with preStop and the grace
   * period. Sandboxes stay (for status and logs) until cleanup removes them.
   */
  async killPod(pod: Pod | undefined, rt: PodRuntimeState, graceSeconds: number): Promise<void> {
    const running = rt.containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED');
    if (running.length) this.o.logger.debug({ podUid: rt.sandboxes[0]?.metadata.uid, containers: running.length }, 'Stopping pod containers');
    await Promise.all(running.map((c) => this.killer.killContainer(pod, pod?.spec?.containers?.find((s) => s.name === c.metadata.name), c, graceSeconds, `Stopping container ${c.metadata.name}`)));
  }

  /** Kills the pod's containers and returns its state afterwards (read now, as upstream's syncTerminatingPod). */
  async terminatePod(pod: Pod | undefined, uid: string, graceSeconds: number, current?: PodRuntimeState): Promise<PodRuntimeState> {
    this.o.probes.remove(uid);
    await this.killPod(pod, current ?? await this.getPodStatus(uid), graceSeconds);
    return this.getPodStatus(uid);
  }

  /** Removes every container and sandbox of uid and its volumes (the pod is gone from the API). */
  async cleanupPod(uid: string): Promise<void> {
    const rt = await this.terminatePod(undefined, uid, 2);
    for (const s of rt.sandboxes) if (s.state === 'SANDBOX_READY') await this.o.runtime.stopPodSandbox(s.id);
    for (const c of rt.containers) await this.o.runtime.removeContainer(c.id);
    for (const s of rt.sandboxes) await this.o.runtime.removePodSandbox(s.id);
    await removePodDir(this.o.rootDir, uid);
    this.waiting.delete(uid);
    this.mountRetry.forget(uid);
    this.crashBackoff.forgetPrefix(`${uid}/`);
    this.imageManager.forgetPod(uid);
  }
}

interface StartCtx {
  sandboxId: string;
  podIP: string;
  sbConfig: ReturnType<typeof sandboxConfig>;
  volumes: VolumePaths;
  waiting: Map<string, Waiting>;
  log: Logger;
  imageChecks: Map<string, Promise<Image | undefined>>;
}
