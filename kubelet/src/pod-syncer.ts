/**
 * PodSyncer: makes one pod real through the CRI and tears it down again (upstream kuberuntime
 * `SyncPod`/`KillPod`, `computePodActions`). Every sync reads the runtime's state for the pod and
 * does the next steps: sandbox, image pulls, init containers in order, containers with restart
 * policy and back-off, probe-driven restarts. Level-driven: a sync after a kubelet restart finds
 * the containers running and adopts them.
 *
 * Called only by PodWorkers (never concurrently for one pod).
 */
import { createHash } from 'node:crypto';
import type { Clock, Logger } from '@mk8s/component-base';
import type { EventRecorder } from '@mk8s/client';
import type { Container, Pod, LifecycleHandler } from '@mk8s/api';
import { parseCpuMillis, parseBytes } from '@mk8s/api';
import {
  nsToMs, normalizeImageRef, isNotFound,
  type RuntimeService, type ImageService, type Image, type ContainerConfig, type PodSandboxConfig, type ContainerStatus, type LinuxContainerResources,
} from '@mk8s/proto';
import { Backoff } from './backoff.js';
import { ContainerConfigError, envMap, expandVars, makeEnvironment, type ConfigSource } from './env.js';
import {
  CONTAINER_NAME_LABEL, CONTAINER_TYPE_LABEL, GRACE_ANNOTATION, HASH_ANNOTATION, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL,
  PRESTOP_ANNOTATION, RESTART_COUNT_ANNOTATION, TERMINATION_MESSAGE_PATH_ANNOTATION,
} from './labels.js';
import type { ProbeManager, Prober } from './prober.js';
import { containersNamed, restartCountOf, specHashOf, type PodRuntimeState, type Waiting } from './status.js';
import { VolumeError, containerMounts, setupVolumes, removePodDir } from './volumes.js';

export interface PodSyncerOptions {
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
  /** CrashLoopBackOff: first delay. @default 10_000 */
  crashBackoffInitialMs?: number;
  /** @default 300_000 */
  crashBackoffMaxMs?: number;
}

export interface SyncResult { requeueAfterMs?: number }

/** specHash identifies the container spec a container was created from (a change restarts it). */
export const specHash = (c: Container): string =>
  createHash('sha256').update(JSON.stringify({ n: c.name, i: c.image, c: c.command, a: c.args, e: c.env, ef: c.envFrom, w: c.workingDir, p: c.ports, v: c.volumeMounts, r: c.resources })).digest('hex').slice(0, 16);

const podFullName = (pod: Pod) => `${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`;

/** resources maps requests/limits to Docker's knobs (upstream `linuxContainerResources`). */
export function linuxResources(c: Container): LinuxContainerResources {
  const r: LinuxContainerResources = {};
  const req = c.resources?.requests ?? {}; const lim = c.resources?.limits ?? {};
  const cpuReq = req['cpu'] ?? lim['cpu'];
  r.cpuShares = cpuReq !== undefined ? Math.max(2, Math.floor(parseCpuMillis(cpuReq) * 1024 / 1000)) : 2;
  if (lim['cpu'] !== undefined) { r.cpuPeriod = 100_000; r.cpuQuota = Math.max(1000, Math.floor(parseCpuMillis(lim['cpu']) * 100_000 / 1000)); }
  if (lim['memory'] !== undefined) r.memoryLimitInBytes = parseBytes(lim['memory']);
  return r;
}

export class PodSyncer {
  /** Waiting reasons decided by syncs, by pod uid then container name. */
  readonly waiting = new Map<string, Map<string, Waiting>>();
  readonly crashBackoff: Backoff;
  readonly imageBackoff: Backoff;
  /** Pods whose volume setup failed: their sandbox waits for their volumes (no speculative start). */
  private readonly strictVolumes = new Set<string>();
  private readonly crashBackoffInitialMs: number;
  private readonly crashBackoffMaxMs: number;
  constructor(private readonly o: PodSyncerOptions) {
    this.crashBackoffInitialMs = o.crashBackoffInitialMs ?? 10_000;
    this.crashBackoffMaxMs = o.crashBackoffMaxMs ?? 300_000;
    this.crashBackoff = new Backoff({ clock: o.clock, initialMs: o.crashBackoffInitialMs ?? 10_000, maxMs: o.crashBackoffMaxMs ?? 300_000 });
    this.imageBackoff = new Backoff({ clock: o.clock, initialMs: 10_000, maxMs: 300_000 });
  }

  waitingOf(uid: string): Map<string, Waiting> {
    let m = this.waiting.get(uid);
    if (!m) { m = new Map(); this.waiting.set(uid, m); }
    return m;
  }

  /** Reads the pod's sandboxes and containers (newest first) from the runtime. */
  async podRuntime(uid: string): Promise<PodRuntimeState> {
    const sel = { labelSelector: { [POD_UID_LABEL]: uid } };
    const [sandboxes, list] = await Promise.all([this.o.runtime.listPodSandbox(sel), this.o.runtime.listContainers(sel)]);
    sandboxes.sort((a, b) => b.createdAt - a.createdAt || b.metadata.attempt - a.metadata.attempt);
    const containers = (await Promise.all(list.map((c) => this.o.runtime.containerStatus(c.id).catch((err: unknown) => { if (isNotFound(err)) return undefined; throw err; }))))
      .filter((c): c is ContainerStatus => !!c).sort((a, b) => b.createdAt - a.createdAt || b.metadata.attempt - a.metadata.attempt);
    const newest = sandboxes[0];
    const sandboxStatus = newest ? await this.o.runtime.podSandboxStatus(newest.id).catch((err: unknown) => { if (isNotFound(err)) return undefined; throw err; }) : undefined;
    return { sandboxes, containers, ...(sandboxStatus ? { sandboxStatus } : {}) };
  }

  sandboxConfig(pod: Pod, attempt: number): PodSandboxConfig {
    const m = pod.metadata ?? {};
    const ns = m.namespace ?? 'default';
    const domain = this.o.clusterDomain ?? 'cluster.local';
    const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
    const dns = pod.spec?.hostNetwork && policy !== 'ClusterFirstWithHostNet' ? undefined : policy === 'None' ? {
      servers: pod.spec?.dnsConfig?.nameservers ?? [], searches: pod.spec?.dnsConfig?.searches ?? [],
      options: (pod.spec?.dnsConfig?.options ?? []).map((x) => (x.value ? `${x.name}:${x.value}` : x.name ?? '')),
    } : policy === 'Default' ? undefined : {
      servers: this.o.clusterDNS ?? ['10.96.0.10'],
      searches: [`${ns}.svc.${domain}`, `svc.${domain}`, domain, ...(pod.spec?.dnsConfig?.searches ?? [])],
      options: ['ndots:5'],
    };
    const hostname = pod.spec?.hostname ?? m.name ?? '';
    return {
      metadata: { name: m.name ?? '', namespace: ns, uid: m.uid ?? '', attempt },
      hostname: pod.spec?.hostNetwork ? '' : hostname.slice(0, 63),
      ...(dns ? { dnsConfig: dns } : {}),
      labels: { ...(m.labels ?? {}), [POD_NAME_LABEL]: m.name ?? '', [POD_NAMESPACE_LABEL]: ns, [POD_UID_LABEL]: m.uid ?? '' },
      annotations: { ...(m.annotations ?? {}) },
      portMappings: (pod.spec?.containers ?? []).flatMap((c) => (c.ports ?? []).filter((p) => p.hostPort).map((p) => ({
        containerPort: p.containerPort, hostPort: p.hostPort!, protocol: (p.protocol ?? 'TCP') as 'TCP', ...(p.hostIP ? { hostIp: p.hostIP } : {}),
      }))),
      linux: { securityContext: { namespaceOptions: { network: pod.spec?.hostNetwork ? 'NODE' : 'POD', pid: pod.spec?.shareProcessNamespace ? 'POD' : 'CONTAINER', ipc: 'POD' } } },
    };
  }

  /**
   * Syncs a live (not terminating) pod. Rejecting retries with the worker's backoff. `current` is
   * the pod's runtime state if the caller just read it. The returned state is the runtime's after
   * the sync (re-read only when the sync changed something).
   */
  async syncPod(pod: Pod, signal: AbortSignal, current?: PodRuntimeState): Promise<{ result: SyncResult; rt: PodRuntimeState }> {
    const uid = pod.metadata?.uid ?? '';
    const log = this.o.logger.child({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, podUid: uid });
    const waiting = this.waitingOf(uid);
    let rt = current ?? await this.podRuntime(uid);
    const policy = pod.spec?.restartPolicy ?? 'Always';
    const requeue: number[] = [];

    // A pod that reached a terminal phase keeps its final state: stop what still runs, start nothing.
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
      await this.stopAll(pod, rt, 0, 'terminal phase');
      return { result: {}, rt: await this.podRuntime(uid) };
    }

    let sandbox = rt.sandboxes[0];
    const sandboxReady = sandbox?.state === 'SANDBOX_READY' && rt.sandboxStatus?.state === 'SANDBOX_READY';
    /** Volumes set up by this sync before its new sandbox (not set up a second time after it). */
    let volumes: Map<string, string> | undefined;
    /** Image presence asked for while a new sandbox starts (pullImage reads it from here). */
    const imageChecks = new Map<string, Promise<Image | undefined>>();
    if (!sandboxReady) {
      // restartPolicy Never: a pod whose sandbox died after its containers ran is not restarted.
      if (sandbox && policy === 'Never' && rt.containers.length > 0) return { result: {}, rt };
      await this.stopAll(pod, rt, 0, 'sandbox changed');
      for (const s of rt.sandboxes) await this.o.runtime.stopPodSandbox(s.id).catch(() => undefined);
      const attempt = rt.sandboxes.length ? Math.max(...rt.sandboxes.map((s) => s.metadata.attempt)) + 1 : 0;
      // Volumes come before the sandbox (upstream waits for the mounts): a missing ConfigMap leaves
      // the pod ContainerCreating, FailedMount, without a sandbox. Their API reads (TokenRequest,
      // ConfigMaps) take about as long as an API round trip, and so, while Docker makes the
      // sandbox, they run alongside it: when they fail the new sandbox is removed again and the
      // pod's later syncs wait for its volumes first (no sandbox churn while a ConfigMap is missing).
      const speculate = !this.strictVolumes.has(uid);
      const volumesSetUp = setupVolumes(this.o.rootDir, pod, this.o.configs);
      volumesSetUp.catch(() => undefined); // awaited below
      if (!speculate) {
        try { volumes = await volumesSetUp; } catch (err) {
          if (!(err instanceof VolumeError)) throw err;
          this.o.recorder.event(pod, 'Warning', 'FailedMount', 'MountVolume.SetUp failed: %s', err.message);
          return { result: { requeueAfterMs: 5_000 }, rt };
        }
      }
      // The sandbox takes Docker a while: ask meanwhile whether the images are present, instead
      // of one round trip per container after it (read-only; the Pulled event is unchanged).
      for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
        const image = normalizeImageRef(c.image ?? '');
        if (pullPolicyOf(c, image) === 'Always' || imageChecks.has(image)) continue;
        const check = this.o.images.imageStatus({ image });
        check.catch(() => undefined); // awaited (and its error thrown) where it is used
        imageChecks.set(image, check);
      }
      const [vol, run] = await Promise.allSettled([volumesSetUp, this.o.runtime.runPodSandbox(this.sandboxConfig(pod, attempt))]);
      if (vol.status === 'rejected') {
        this.strictVolumes.add(uid);
        if (run.status === 'fulfilled') {
          await this.o.runtime.stopPodSandbox(run.value).catch(() => undefined);
          await this.o.runtime.removePodSandbox(run.value).catch((err: unknown) => log.warn({ err, sandboxId: run.value }, 'Could not remove pod sandbox'));
        }
        if (!(vol.reason instanceof VolumeError)) throw vol.reason;
        this.o.recorder.event(pod, 'Warning', 'FailedMount', 'MountVolume.SetUp failed: %s', vol.reason.message);
        return { result: { requeueAfterMs: 5_000 }, rt };
      }
      this.strictVolumes.delete(uid);
      volumes = vol.value;
      if (run.status === 'rejected') {
        const err: unknown = run.reason;
        this.o.recorder.event(pod, 'Warning', 'FailedCreatePodSandBox', 'Failed to create pod sandbox: %s', err instanceof Error ? err.message : String(err));
        throw err;
      }
      const id = run.value;
      log.info({ sandboxId: id, attempt }, 'Created pod sandbox');
      if (rt.sandboxes.length === 0 && rt.containers.length === 0) {
        // A new pod: its state is this one sandbox, and one status call says all about it.
        const st = await this.o.runtime.podSandboxStatus(id);
        rt = { sandboxes: [{ id: st.id, metadata: st.metadata, state: st.state, createdAt: st.createdAt, labels: st.labels, annotations: st.annotations }], containers: [], sandboxStatus: st };
      } else {
        // Containers of the old sandbox are history: new ones start at the next restart count.
        rt = await this.podRuntime(uid);
      }
      sandbox = rt.sandboxes[0];
    }
    if (!sandbox || signal.aborted) return { result: {}, rt };
    const podIP = rt.sandboxStatus?.network?.ip ?? '';
    try { volumes ??= await setupVolumes(this.o.rootDir, pod, this.o.configs); } catch (err) {
      if (!(err instanceof VolumeError)) throw err;
      this.o.recorder.event(pod, 'Warning', 'FailedMount', 'MountVolume.SetUp failed: %s', err.message);
      return { result: { requeueAfterMs: 5_000 }, rt };
    }
    const sbConfig = this.sandboxConfig(pod, sandbox.metadata.attempt);
    const ctx: StartCtx = { pod, podIP, sandboxId: sandbox.id, sbConfig, volumes, waiting, log, requeue, acted: false, started: [], imageChecks };

    // Init containers, in order: the next one starts only after the previous one succeeded.
    let initDone = true;
    for (const c of pod.spec?.initContainers ?? []) {
      const cur = containersNamed(rt, c.name).find((x) => x.podSandboxId === sandbox.id);
      if (cur?.state === 'CONTAINER_EXITED' && cur.exitCode === 0) continue;
      initDone = false;
      if (cur?.state === 'CONTAINER_RUNNING' || cur?.state === 'CONTAINER_CREATED') break;
      if (cur?.state === 'CONTAINER_EXITED') {
        if (policy === 'Never') break; // the pod fails (getPhase)
        await this.restartWithBackoff(c, cur, ctx);
        break;
      }
      await this.startContainer(c, undefined, ctx, true);
      break;
    }

    if (initDone) {
      for (const c of pod.spec?.containers ?? []) {
        if (signal.aborted) break;
        const all = containersNamed(rt, c.name);
        const cur = all[0];
        if (!cur || cur.podSandboxId !== sandbox.id && cur.state !== 'CONTAINER_RUNNING') {
          if (cur && !this.shouldRestart(policy, cur)) continue;
          if (cur) await this.restartWithBackoff(c, cur, ctx);
          else if (!this.inCreateBackoff(c, ctx)) await this.startContainer(c, undefined, ctx, false);
          continue;
        }
        if (cur.state === 'CONTAINER_CREATED') { ctx.acted = true; await this.o.runtime.removeContainer(cur.id); await this.startContainer(c, cur, ctx, false); continue; }
        if (cur.state === 'CONTAINER_RUNNING') {
          waiting.delete(c.name);
          const startedMs = nsToMs(cur.startedAt || cur.createdAt);
          const prevReady = pod.status?.containerStatuses?.find((s) => s.name === c.name && s.containerID === `docker://${cur.id}`)?.ready;
          this.o.probes.ensure(pod, c, cur.id, startedMs, podIP, prevReady);
          const startupFailed = this.o.probes.result(uid, c.name, cur.id, 'startup') === false;
          const liveFailed = this.o.probes.result(uid, c.name, cur.id, 'liveness') === false;
          const changed = specHashOf(cur) !== undefined && specHashOf(cur) !== specHash(c);
          if (startupFailed || liveFailed || changed) {
            ctx.acted = true;
            const why = changed ? `Container ${c.name} definition changed, will be restarted` : `Container ${c.name} failed ${startupFailed ? 'startup' : 'liveness'} probe, will be restarted`;
            await this.killContainer(pod, c, cur, this.graceSeconds(pod), why);
            this.o.probes.remove(uid, c.name);
            if (policy === 'Never') continue;
            const after = await this.o.runtime.containerStatus(cur.id);
            await this.restartWithBackoff(c, after, ctx);
          }
          continue;
        }
        // Exited.
        if (!this.shouldRestart(policy, cur)) { waiting.delete(c.name); continue; }
        await this.restartWithBackoff(c, cur, ctx);
      }
    }
    if (await this.gcContainers(rt)) ctx.acted = true;
    if (ctx.acted) {
      rt = await this.podRuntime(uid);
    } else if (ctx.started.length) {
      // Only new containers: their status is all that changed.
      const fresh = await Promise.all(ctx.started.map((id) => this.o.runtime.containerStatus(id)));
      rt = { ...rt, containers: [...fresh, ...rt.containers].sort((a, b) => b.createdAt - a.createdAt || b.metadata.attempt - a.metadata.attempt) };
    }
    // Probe workers exist from the moment a container runs, so Ready waits for the first success.
    for (const c of [...(pod.spec?.containers ?? [])]) {
      const cur = containersNamed(rt, c.name)[0];
      if (cur?.state !== 'CONTAINER_RUNNING') continue;
      const prevReady = pod.status?.containerStatuses?.find((s) => s.name === c.name && s.containerID === `docker://${cur.id}`)?.ready;
      this.o.probes.ensure(pod, c, cur.id, nsToMs(cur.startedAt || cur.createdAt), podIP, prevReady);
    }
    return { result: requeue.length ? { requeueAfterMs: Math.max(100, Math.min(...requeue)) } : {}, rt };
  }

  private shouldRestart(policy: string, cur: ContainerStatus): boolean {
    if (policy === 'Always') return true;
    if (policy === 'OnFailure') return cur.exitCode !== 0;
    return false;
  }

  private graceSeconds(pod: Pod): number {
    return pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
  }

  private async restartWithBackoff(c: Container, cur: ContainerStatus, ctx: StartCtx): Promise<void> {
    const uid = ctx.pod.metadata?.uid ?? '';
    const key = `${uid}/${c.name}/${specHash(c)}`;
    const finished = nsToMs(cur.finishedAt || cur.createdAt);
    // After a kubelet restart the back-off is rebuilt from the restart count the runtime kept.
    if (this.crashBackoff.get(key) === 0 && restartCountOf(cur) > 0) {
      this.crashBackoff.seed(key, Math.min(this.crashBackoffInitialMs * 2 ** (restartCountOf(cur) - 1), this.crashBackoffMaxMs), finished);
    }
    if (this.crashBackoff.isInBackOffSince(key, finished)) {
      const delay = this.crashBackoff.get(key);
      const msg = `back-off ${Math.round(delay / 1000)}s restarting failed container=${c.name} pod=${podFullName(ctx.pod)}`;
      if (ctx.waiting.get(c.name)?.reason !== 'CrashLoopBackOff' || ctx.waiting.get(c.name)?.message !== msg) {
        this.o.recorder.event(ctx.pod, 'Warning', 'BackOff', 'Back-off restarting failed container %s in pod %s', c.name, podFullName(ctx.pod));
      }
      ctx.waiting.set(c.name, { reason: 'CrashLoopBackOff', message: msg });
      ctx.requeue.push(this.crashBackoff.remaining(key, finished) + 50);
      return;
    }
    this.crashBackoff.next(key, finished);
    await this.startContainer(c, cur, ctx, false);
  }

  /** A container the runtime refused to create is not created again before its back-off ends. */
  private inCreateBackoff(c: Container, ctx: StartCtx): boolean {
    const key = `${ctx.pod.metadata?.uid ?? ''}/${c.name}/${specHash(c)}`;
    if (ctx.waiting.get(c.name)?.reason !== 'CreateContainerError' || !this.crashBackoff.isInBackOffSinceUpdate(key)) return false;
    ctx.requeue.push(this.crashBackoff.remainingSinceUpdate(key) + 50);
    return true;
  }

  private async pullImage(c: Container, ctx: StartCtx): Promise<string | undefined> {
    const image = normalizeImageRef(c.image ?? '');
    const policy = pullPolicyOf(c, image);
    const key = `${ctx.pod.metadata?.uid}/${image}`;
    const checked = ctx.imageChecks.get(image);
    ctx.imageChecks.delete(image); // an answer is used once: a later container asks afresh
    const present = policy !== 'Always' ? await (checked ?? this.o.images.imageStatus({ image })) : undefined;
    if (present) {
      this.o.recorder.event(ctx.pod, 'Normal', 'Pulled', 'Container image "%s" already present on machine', c.image);
      return present.id;
    }
    if (policy === 'Never') {
      const msg = `Container image "${c.image}" is not present with pull policy of Never`;
      ctx.waiting.set(c.name, { reason: 'ErrImageNeverPull', message: msg });
      this.o.recorder.event(ctx.pod, 'Warning', 'ErrImageNeverPull', msg);
      return undefined;
    }
    if (this.imageBackoff.isInBackOffSinceUpdate(key)) {
      const msg = `Back-off pulling image "${c.image}"`;
      if (ctx.waiting.get(c.name)?.reason !== 'ImagePullBackOff') this.o.recorder.event(ctx.pod, 'Normal', 'BackOff', msg);
      ctx.waiting.set(c.name, { reason: 'ImagePullBackOff', message: msg });
      ctx.requeue.push(this.imageBackoff.get(key));
      return undefined;
    }
    this.o.recorder.event(ctx.pod, 'Normal', 'Pulling', 'Pulling image "%s"', c.image);
    const t0 = this.o.clock.now();
    try {
      const id = await this.o.images.pullImage({ image }, undefined, ctx.sbConfig);
      this.o.recorder.event(ctx.pod, 'Normal', 'Pulled', 'Successfully pulled image "%s" in %dms', c.image, this.o.clock.now() - t0);
      return id;
    } catch (err) {
      this.imageBackoff.next(key);
      const msg = `Failed to pull image "${c.image}": ${err instanceof Error ? err.message : String(err)}`;
      this.o.recorder.event(ctx.pod, 'Warning', 'Failed', msg);
      this.o.recorder.event(ctx.pod, 'Warning', 'Failed', 'Error: ErrImagePull');
      ctx.waiting.set(c.name, { reason: 'ErrImagePull', message: msg });
      ctx.requeue.push(this.imageBackoff.get(key));
      return undefined;
    }
  }

  private async startContainer(c: Container, prev: ContainerStatus | undefined, ctx: StartCtx, init: boolean): Promise<void> {
    const { pod } = ctx;
    if (!(await this.pullImage(c, ctx))) return;
    let config: ContainerConfig;
    try {
      config = await this.containerConfig(c, prev, ctx, init);
    } catch (err) {
      if (!(err instanceof ContainerConfigError) && !(err instanceof VolumeError)) throw err;
      ctx.waiting.set(c.name, { reason: 'CreateContainerConfigError', message: err.message });
      this.o.recorder.event(pod, 'Warning', 'Failed', 'Error: %s', err.message);
      ctx.requeue.push(10_000);
      return;
    }
    let id: string;
    try {
      id = await this.o.runtime.createContainer(ctx.sandboxId, config, ctx.sbConfig);
    } catch (err) {
      // The runtime refused the container (no command, a bad mount): CreateContainerError, and
      // no new try before the container's back-off ends (10 s doubling to 5 min).
      ctx.acted = true;
      const msg = err instanceof Error ? err.message : String(err);
      const key = `${pod.metadata?.uid ?? ''}/${c.name}/${specHash(c)}`;
      this.crashBackoff.next(key);
      ctx.waiting.set(c.name, { reason: 'CreateContainerError', message: msg });
      this.o.recorder.event(pod, 'Warning', 'Failed', 'Error: %s', msg);
      ctx.requeue.push(this.crashBackoff.get(key) + 50);
      return;
    }
    this.o.recorder.event(pod, 'Normal', 'Created', 'Created container %s', c.name);
    ctx.started.push(id);
    try {
      await this.o.runtime.startContainer(id);
    } catch (err) {
      // The container exists but could not run (its command does not exist): the runtime reports
      // it exited (StartError, 128); the pod shows RunContainerError, and restarts of it go
      // through the back-off like any other exit (CrashLoopBackOff).
      ctx.acted = true;
      const msg = err instanceof Error ? err.message : String(err);
      ctx.waiting.set(c.name, { reason: 'RunContainerError', message: msg });
      this.o.recorder.event(pod, 'Warning', 'Failed', 'Error: %s', msg);
      ctx.requeue.push(0);
      return;
    }
    ctx.waiting.delete(c.name);
    this.o.recorder.event(pod, 'Normal', 'Started', 'Started container %s', c.name);
    ctx.log.info({ container: c.name, containerId: id }, 'Started container');
    if (c.lifecycle?.postStart) {
      const out = await this.runHook(c.lifecycle.postStart, id, ctx.podIP, c, 30_000);
      if (!out.ok) {
        this.o.recorder.event(pod, 'Warning', 'FailedPostStartHook', 'PostStartHook failed: %s', out.output);
        ctx.acted = true;
        await this.o.runtime.stopContainer(id, 2).catch(() => undefined);
      }
    }
  }

  private async containerConfig(c: Container, prev: ContainerStatus | undefined, ctx: StartCtx, init: boolean): Promise<ContainerConfig> {
    const { pod } = ctx;
    const restartCount = prev ? restartCountOf(prev) + 1 : 0;
    const envs = await makeEnvironment(c, { pod, podIP: ctx.podIP, podIPs: ctx.podIP ? [ctx.podIP] : [], hostIP: this.o.nodeIP(), nodeName: this.o.nodeName }, this.o.configs);
    const vars = envMap(envs);
    const mounts = containerMounts(c, ctx.volumes);
    const m = pod.metadata ?? {};
    return {
      metadata: { name: c.name, attempt: restartCount },
      image: { image: normalizeImageRef(c.image ?? '') },
      ...(c.command?.length ? { command: c.command.map((x) => expandVars(x, vars)) } : {}),
      ...(c.args?.length ? { args: c.args.map((x) => expandVars(x, vars)) } : {}),
      ...(c.workingDir ? { workingDir: c.workingDir } : {}),
      envs,
      mounts,
      labels: { [POD_NAME_LABEL]: m.name ?? '', [POD_NAMESPACE_LABEL]: m.namespace ?? 'default', [POD_UID_LABEL]: m.uid ?? '', [CONTAINER_NAME_LABEL]: c.name, [CONTAINER_TYPE_LABEL]: init ? 'init' : 'container' },
      annotations: {
        [HASH_ANNOTATION]: specHash(c),
        [RESTART_COUNT_ANNOTATION]: String(restartCount),
        [GRACE_ANNOTATION]: String(pod.spec?.terminationGracePeriodSeconds ?? 30),
        [TERMINATION_MESSAGE_PATH_ANNOTATION]: c.terminationMessagePath ?? '/dev/termination-log',
        ...(c.lifecycle?.preStop ? { [PRESTOP_ANNOTATION]: JSON.stringify(c.lifecycle.preStop) } : {}),
      },
      ...(c.stdin ? { stdin: true } : {}),
      ...(c.stdinOnce ? { stdinOnce: true } : {}),
      ...(c.tty ? { tty: true } : {}),
      linux: {
        resources: linuxResources(c),
        securityContext: {
          ...(c.securityContext?.privileged ? { privileged: true } : {}),
          ...(c.securityContext?.runAsUser !== undefined ? { runAsUser: { value: c.securityContext.runAsUser } } : pod.spec?.securityContext?.runAsUser !== undefined ? { runAsUser: { value: pod.spec.securityContext.runAsUser } } : {}),
          ...(c.securityContext?.readOnlyRootFilesystem ? { readonlyRootfs: true } : {}),
          ...(c.securityContext?.capabilities ? { capabilities: { addCapabilities: c.securityContext.capabilities.add ?? [], dropCapabilities: c.securityContext.capabilities.drop ?? [] } } : {}),
        },
      },
    };
  }

  private async runHook(h: LifecycleHandler, containerId: string, podIP: string, c: Container, timeoutMs: number) {
    return this.o.prober.probe(h, { containerId, podIP, container: c, timeoutMs });
  }

  /** Runs preStop (bounded by the grace period), then stops the container with what is left. */
  async killContainer(pod: Pod | undefined, spec: Container | undefined, cur: ContainerStatus, graceSeconds: number, message: string): Promise<void> {
    if (cur.state !== 'CONTAINER_RUNNING' && cur.state !== 'CONTAINER_CREATED') return;
    const name = cur.metadata.name;
    if (pod) this.o.recorder.event(pod, 'Normal', 'Killing', message || 'Stopping container %s', name);
    const t0 = this.o.clock.now();
    let preStop: LifecycleHandler | undefined = spec?.lifecycle?.preStop;
    if (!preStop && cur.annotations[PRESTOP_ANNOTATION]) { try { preStop = JSON.parse(cur.annotations[PRESTOP_ANNOTATION]) as LifecycleHandler; } catch { /* ignore */ } }
    if (preStop && graceSeconds > 0 && cur.state === 'CONTAINER_RUNNING') {
      const podIP = pod?.status?.podIP ?? '';
      const out = await Promise.race([
        this.runHook(preStop, cur.id, podIP, spec ?? ({ name } as Container), graceSeconds * 1000),
        this.o.clock.sleep(graceSeconds * 1000).then(() => ({ ok: false, output: 'timed out' })),
      ]);
      if (!out.ok && pod) this.o.recorder.event(pod, 'Warning', 'FailedPreStopHook', 'PreStopHook failed: %s', out.output);
    }
    // Upstream keeps a minimum of 2 s for the stop after the hook.
    const left = Math.max(graceSeconds > 0 ? 2 : 0, Math.ceil(graceSeconds - (this.o.clock.now() - t0) / 1000));
    try { await this.o.runtime.stopContainer(cur.id, left); } catch (err) {
      if (isNotFound(err)) return;
      // A busy Docker may fail the stop of a container that did exit: only a live one is an error.
      const st = await this.o.runtime.containerStatus(cur.id).catch(() => undefined);
      if (st?.state !== 'CONTAINER_EXITED') throw err;
    }
  }

  private async stopAll(pod: Pod | undefined, rt: PodRuntimeState, graceSeconds: number, why: string): Promise<void> {
    const running = rt.containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED');
    if (running.length) this.o.logger.debug({ podUid: rt.sandboxes[0]?.metadata.uid, why }, 'Stopping pod containers');
    await Promise.all(running.map((c) => this.killContainer(pod, pod?.spec?.containers?.find((s) => s.name === c.metadata.name), c, graceSeconds, `Stopping container ${c.metadata.name}`)));
  }

  /**
   * Terminates a pod: containers (with preStop and the grace period) in parallel, then the
   * sandbox. Containers and sandboxes stay (for status and logs) until cleanup removes them.
   */
  async terminatePod(pod: Pod | undefined, uid: string, graceSeconds: number): Promise<PodRuntimeState> {
    this.o.probes.remove(uid);
    const rt = await this.podRuntime(uid);
    await this.stopAll(pod, rt, graceSeconds, 'pod terminating');
    // The sandbox is stopped by cleanup, after the pod object is gone: clients waiting for the
    // delete need not wait for the network teardown.
    return this.podRuntime(uid);
  }

  /** Removes every container and sandbox of uid and its volumes (the pod is gone from the API). */
  async cleanupPod(uid: string): Promise<void> {
    const rt = await this.terminatePod(undefined, uid, 2);
    for (const s of rt.sandboxes) if (s.state === 'SANDBOX_READY') await this.o.runtime.stopPodSandbox(s.id);
    for (const c of rt.containers) await this.o.runtime.removeContainer(c.id);
    for (const s of rt.sandboxes) await this.o.runtime.removePodSandbox(s.id);
    await removePodDir(this.o.rootDir, uid);
    this.waiting.delete(uid);
    this.strictVolumes.delete(uid);
    this.crashBackoff.forgetPrefix(`${uid}/`);
    this.imageBackoff.forgetPrefix(`${uid}/`);
  }

  /** Keeps the newest two containers per name (current and previous, for `logs --previous`). */
  private async gcContainers(rt: PodRuntimeState): Promise<boolean> {
    const seen = new Map<string, number>();
    const removed = new Set<string>();
    for (const c of rt.containers) {
      const n = (seen.get(c.metadata.name) ?? 0) + 1;
      seen.set(c.metadata.name, n);
      if (n > 2 && c.state === 'CONTAINER_EXITED') { await this.o.runtime.removeContainer(c.id).catch(() => undefined); removed.add(c.id); }
    }
    // Dead sandboxes other than the newest go once none of their containers is kept.
    for (const s of rt.sandboxes.slice(1)) {
      if (s.state === 'SANDBOX_READY') continue;
      if (rt.containers.some((c) => c.podSandboxId === s.id && !removed.has(c.id))) continue;
      await this.o.runtime.removePodSandbox(s.id).catch(() => undefined);
      removed.add(s.id);
    }
    return removed.size > 0;
  }
}

interface StartCtx {
  pod: Pod;
  podIP: string;
  sandboxId: string;
  sbConfig: PodSandboxConfig;
  volumes: Map<string, string>;
  waiting: Map<string, Waiting>;
  log: Logger;
  requeue: number[];
  /** Set when the sync stopped or removed something, or may have left a container half-made. */
  acted: boolean;
  /** Containers this sync created (and started, unless that failed). */
  started: string[];
  /** imageStatus calls made while the sandbox started, by normalized image. */
  imageChecks: Map<string, Promise<Image | undefined>>;
}

/** The pull policy in effect (API defaulting: Always for :latest, else IfNotPresent). */
const pullPolicyOf = (c: Container, image: string): string => c.imagePullPolicy ?? (image.endsWith(':latest') ? 'Always' : 'IfNotPresent');
