/**
 * FakeRuntimeService keeps sandboxes and containers in memory with the CRI state machine
 * (kubelet `container/testing` FakeRuntimeService). It records every call in `called`, fails the
 * next call of a method with `injectError`, and lets tests drive what a real runtime would do on
 * its own: `exitContainer` (a process ends), `appendLog`, `execHandler`. The conformance suite
 * pins it to the Docker shim's behaviour.
 */
import { EventEmitter } from 'node:events';
import { CriError } from '../errors.js';
import type { RuntimeMethod, RuntimeService } from '../runtime-service.js';
import type {
  Container, ContainerConfig, ContainerFilter, ContainerLogsOptions, ContainerState, ContainerStats, ContainerStatsFilter,
  ContainerStatus, ExecIO, ExecRequest, ExecSyncResult, Labels, LogChunk, PodSandbox, PodSandboxConfig, PodSandboxFilter,
  PodSandboxStats, PodSandboxStatsFilter, PodSandboxStatus, RuntimeConfig, RuntimeStatus, VersionInfo,
} from '../types.js';
import type { FakeImageService } from './fake-image-service.js';

/** What an exec in the fake produces. */
export interface FakeExecResult { stdout?: string | Buffer; stderr?: string | Buffer; exitCode: number }
/** Decides the outcome of an exec (both execSync and streaming exec). */
export type FakeExecHandler = (containerId: string, cmd: string[], stdin: Buffer) => FakeExecResult | Promise<FakeExecResult>;

/**
 * The default exec handler understands just enough for the conformance suite and simple probe
 * tests: `echo ARGS`, `cat` (stdin to stdout), `true`, `false` and `sh -c 'exit N'`.
 */
export const defaultExecHandler: FakeExecHandler = (_id, cmd, stdin) => {
  const [bin, ...args] = cmd;
  if (bin === 'echo') return { stdout: `${args.join(' ')}\n`, exitCode: 0 };
  if (bin === 'cat') return { stdout: stdin, exitCode: 0 };
  if (bin === 'true') return { exitCode: 0 };
  if (bin === 'false') return { exitCode: 1 };
  const m = bin === 'sh' && args[0] === '-c' ? /^exit (\d+)$/.exec(args[1] ?? '') : null;
  if (m) return { exitCode: Number(m[1]) };
  return { stderr: `${bin}: not found\n`, exitCode: 127 };
};

export interface FakeSandbox {
  id: string;
  config: PodSandboxConfig;
  state: PodSandbox['state'];
  createdAt: number;
  ip: string;
  runtimeHandler: string;
}

export interface FakeContainer {
  id: string;
  podSandboxId: string;
  config: ContainerConfig;
  imageRef: string;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  logs: (LogChunk & { timeNs: number })[];
}

export interface FakeRuntimeServiceOptions {
  /** Milliseconds since the epoch (inject a FakeClock's now). @default Date.now */
  now?: () => number;
  /** When set, createContainer requires the image to be present there (as a real runtime does). */
  images?: FakeImageService;
  /** @default defaultExecHandler */
  execHandler?: FakeExecHandler;
  /** A message when the runtime refuses to create config (Docker: "No command specified"). */
  createError?: (config: ContainerConfig) => string | undefined;
  /**
   * A message when config's process cannot start (its command does not exist). As the Docker
   * shim and containerd: startContainer rejects and the container is exited, StartError, 128.
   */
  startError?: (config: ContainerConfig) => string | undefined;
}

const matches = (labels: Labels, selector: Labels | undefined): boolean =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

/** FakeRuntimeService: an in-memory RuntimeService for kubelet unit tests. */
export class FakeRuntimeService implements RuntimeService {
  /** Every call, in order. */
  readonly called: RuntimeMethod[] = [];
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  execHandler: FakeExecHandler;
  /** The last pod CIDR passed to updateRuntimeConfig. */
  podCidr = '';
  private readonly errors = new Map<RuntimeMethod, Error[]>();
  private readonly events = new EventEmitter();
  private readonly now: () => number;
  private readonly images: FakeImageService | undefined;
  private readonly createError: FakeRuntimeServiceOptions['createError'];
  private readonly startError: FakeRuntimeServiceOptions['startError'];
  private seq = 0;

  constructor(o: FakeRuntimeServiceOptions = {}) {
    this.now = o.now ?? Date.now;
    this.images = o.images;
    this.createError = o.createError;
    this.startError = o.startError;
    this.execHandler = o.execHandler ?? defaultExecHandler;
    this.events.setMaxListeners(0);
  }

  /** The next call of method rejects with err (once; queue several by calling again). */
  injectError(method: RuntimeMethod, err: Error): void {
    const q = this.errors.get(method) ?? [];
    q.push(err);
    this.errors.set(method, q);
  }

  /** Simulates the container's process exiting on its own (crash, completion, OOM kill). */
  exitContainer(containerId: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error', message = ''): void {
    const c = this.mustContainer(containerId);
    if (c.state !== 'CONTAINER_RUNNING') throw new Error(`fake: container ${containerId} is ${c.state}, not running`);
    Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.nowNs(), exitCode, reason, message });
    this.events.emit(`change:${containerId}`);
  }

  /** Adds a log chunk to a container (what its process would have written). */
  appendLog(containerId: string, stream: 'stdout' | 'stderr', data: string | Buffer): void {
    const c = this.mustContainer(containerId);
    c.logs.push({ stream, data: Buffer.from(data), timeNs: this.nowNs() });
    this.events.emit(`change:${containerId}`);
  }

  private record(method: RuntimeMethod): void {
    this.called.push(method);
    const err = this.errors.get(method)?.shift();
    if (err) throw err;
  }
  private nowNs(): number { return this.now() * 1e6; }
  private nextId(kind: string): string { return `${kind}${(++this.seq).toString(16).padStart(12, '0')}`; }
  private mustSandbox(id: string): FakeSandbox {
    const s = this.sandboxes.get(id);
    if (!s) throw new CriError('NotFound', `pod sandbox ${id} not found`);
    return s;
  }
  private mustContainer(id: string): FakeContainer {
    const c = this.containers.get(id);
    if (!c) throw new CriError('NotFound', `container ${id} not found`);
    return c;
  }
  private stopOne(c: FakeContainer): void {
    if (c.state !== 'CONTAINER_RUNNING') return;
    Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.nowNs(), exitCode: 137, reason: 'Error' });
    this.events.emit(`change:${c.id}`);
  }

  async version(): Promise<VersionInfo> {
    this.record('version');
    return { version: '0.1.0', runtimeName: 'fake', runtimeVersion: '0.1.0', runtimeApiVersion: 'v1' };
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): Promise<string> {
    this.record('runPodSandbox');
    if (!config.metadata?.name || !config.metadata.uid || !config.metadata.namespace) {
      throw new CriError('InvalidArgument', 'sandbox metadata name, namespace and uid are required');
    }
    const id = this.nextId('sandbox');
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
    this.sandboxes.set(id, {
      id, config: structuredClone(config), state: 'SANDBOX_READY', createdAt: this.nowNs(),
      ip: hostNetwork ? '' : `10.88.${(this.seq >> 8) & 255}.${this.seq & 255}`, runtimeHandler,
    });
    return id;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    this.record('stopPodSandbox');
    const s = this.sandboxes.get(podSandboxId);
    if (!s) return;
    for (const c of this.containers.values()) if (c.podSandboxId === podSandboxId) this.stopOne(c);
    s.state = 'SANDBOX_NOTREADY';
    s.ip = '';
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    this.record('removePodSandbox');
    for (const c of [...this.containers.values()]) {
      if (c.podSandboxId === podSandboxId) { this.stopOne(c); this.containers.delete(c.id); }
    }
    this.sandboxes.delete(podSandboxId);
  }

  async podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    this.record('podSandboxStatus');
    const s = this.mustSandbox(podSandboxId);
    const st: PodSandboxStatus = {
      id: s.id, metadata: { ...s.config.metadata }, state: s.state, createdAt: s.createdAt,
      labels: { ...s.config.labels }, annotations: { ...s.config.annotations }, runtimeHandler: s.runtimeHandler,
    };
    if (s.ip) st.network = { ip: s.ip };
    return st;
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    this.record('listPodSandbox');
    return [...this.sandboxes.values()]
      .filter((s) => (!filter?.id || s.id === filter.id) && (!filter?.state || s.state === filter.state) && matches(s.config.labels ?? {}, filter?.labelSelector))
      .map((s) => ({
        id: s.id, metadata: { ...s.config.metadata }, state: s.state, createdAt: s.createdAt,
        labels: { ...s.config.labels }, annotations: { ...s.config.annotations }, runtimeHandler: s.runtimeHandler,
      }));
  }

  async createContainer(podSandboxId: string, config: ContainerConfig, _sandboxConfig: PodSandboxConfig): Promise<string> {
    this.record('createContainer');
    this.mustSandbox(podSandboxId);
    if (!config.metadata?.name) throw new CriError('InvalidArgument', 'container metadata name is required');
    let imageRef = config.image.image;
    if (this.images) {
      const img = this.images.find(config.image.image);
      if (!img) throw new CriError('NotFound', `image "${config.image.image}" not found`);
      imageRef = img.id;
    }
    const refused = this.createError?.(config);
    if (refused) throw new CriError('Unknown', refused);
    const id = this.nextId('container');
    this.containers.set(id, {
      id, podSandboxId, config: structuredClone(config), imageRef, state: 'CONTAINER_CREATED', createdAt: this.nowNs(),
      startedAt: 0, finishedAt: 0, exitCode: 0, reason: '', message: '', logs: [],
    });
    return id;
  }

  async startContainer(containerId: string): Promise<void> {
    this.record('startContainer');
    const c = this.mustContainer(containerId);
    if (c.state !== 'CONTAINER_CREATED') throw new CriError('FailedPrecondition', `container ${containerId} is ${c.state}, not created`);
    const failed = this.startError?.(c.config);
    if (failed) {
      Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.nowNs(), exitCode: 128, reason: 'StartError', message: failed });
      this.events.emit(`change:${containerId}`);
      throw new CriError('Unknown', failed);
    }
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = this.nowNs();
    this.events.emit(`change:${containerId}`);
  }

  async stopContainer(containerId: string, _timeoutSeconds: number): Promise<void> {
    this.record('stopContainer');
    this.stopOne(this.mustContainer(containerId));
  }

  async removeContainer(containerId: string): Promise<void> {
    this.record('removeContainer');
    const c = this.containers.get(containerId);
    if (!c) return;
    this.stopOne(c);
    this.containers.delete(containerId);
    this.events.emit(`change:${containerId}`);
  }

  private toContainer(c: FakeContainer): Container {
    return {
      id: c.id, podSandboxId: c.podSandboxId, metadata: { ...c.config.metadata }, image: { ...c.config.image }, imageRef: c.imageRef,
      state: c.state, createdAt: c.createdAt, labels: { ...c.config.labels }, annotations: { ...c.config.annotations },
    };
  }

  async listContainers(filter?: ContainerFilter): Promise<Container[]> {
    this.record('listContainers');
    return [...this.containers.values()]
      .filter((c) => (!filter?.id || c.id === filter.id) && (!filter?.podSandboxId || c.podSandboxId === filter.podSandboxId)
        && (!filter?.state || c.state === filter.state) && matches(c.config.labels ?? {}, filter?.labelSelector))
      .map((c) => this.toContainer(c));
  }

  async containerStatus(containerId: string): Promise<ContainerStatus> {
    this.record('containerStatus');
    const c = this.mustContainer(containerId);
    const st: ContainerStatus = {
      ...this.toContainer(c), startedAt: c.startedAt, finishedAt: c.finishedAt, exitCode: c.exitCode, reason: c.reason,
      message: c.message, mounts: structuredClone(c.config.mounts ?? []), logPath: c.config.logPath ?? '',
    };
    if (c.config.linux?.resources) st.resources = { linux: { ...c.config.linux.resources } };
    return st;
  }

  private async runExec(containerId: string, cmd: string[], stdin: Buffer): Promise<FakeExecResult> {
    const c = this.mustContainer(containerId);
    if (c.state !== 'CONTAINER_RUNNING') throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
    return this.execHandler(containerId, cmd, stdin);
  }

  async execSync(containerId: string, cmd: string[], _timeoutSeconds?: number): Promise<ExecSyncResult> {
    this.record('execSync');
    const r = await this.runExec(containerId, cmd, Buffer.alloc(0));
    return { stdout: Buffer.from(r.stdout ?? ''), stderr: Buffer.from(r.stderr ?? ''), exitCode: r.exitCode };
  }

  async exec(req: ExecRequest, io: ExecIO): Promise<{ exitCode: number }> {
    this.record('exec');
    this.mustContainer(req.containerId);
    const chunks: Buffer[] = [];
    // Drain the input even without stdin, as a real runtime does (resizes may come anyway).
    for await (const m of io.input ?? []) {
      if ('stdin' in m) { if (req.stdin) chunks.push(m.stdin); } else if ('closeStdin' in m) break;
    }
    const r = await this.runExec(req.containerId, req.cmd, Buffer.concat(chunks));
    if (io.signal?.aborted) throw io.signal.reason;
    if (r.stdout?.length && req.stdout !== false) io.onStdout?.(Buffer.from(r.stdout));
    if (r.stderr?.length && req.stderr !== false) io.onStderr?.(Buffer.from(r.stderr));
    return { exitCode: r.exitCode };
  }

  async *containerLogs(containerId: string, opts: ContainerLogsOptions = {}, signal?: AbortSignal): AsyncIterable<LogChunk> {
    this.record('containerLogs');
    const c = this.mustContainer(containerId);
    const fmt = (l: FakeContainer['logs'][number]): LogChunk =>
      ({ stream: l.stream, data: opts.timestamps ? Buffer.concat([Buffer.from(`${new Date(l.timeNs / 1e6).toISOString()} `), l.data]) : l.data });
    let logs = c.logs.filter((l) => !opts.sinceTime || l.timeNs >= opts.sinceTime);
    if (opts.tailLines !== undefined) logs = opts.tailLines === 0 ? [] : logs.slice(-opts.tailLines);
    for (const l of logs) yield fmt(l);
    if (!opts.follow) return;
    let seen = c.logs.length;
    while (!signal?.aborted && this.containers.has(containerId)) {
      for (; seen < c.logs.length; seen++) yield fmt(c.logs[seen]!);
      if (c.state === 'CONTAINER_EXITED') return;
      await new Promise<void>((resolve) => {
        const done = () => { signal?.removeEventListener('abort', done); this.events.off(`change:${containerId}`, done); resolve(); };
        this.events.once(`change:${containerId}`, done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  async reopenContainerLog(containerId: string): Promise<void> {
    this.record('reopenContainerLog');
    const c = this.mustContainer(containerId);
    if (c.state !== 'CONTAINER_RUNNING') throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
  }

  /**
   * What the stats methods report for a container, by container id (tests set them; the cumulative
   * CPU counter and the memory working set; usageNanoCores only when set, as a real runtime omits
   * it on a first sample). Unset: zeros.
   */
  readonly containerUsage = new Map<string, { usageCoreNanoSeconds: number; usageNanoCores?: number; workingSetBytes: number; rssBytes?: number; rootfsBytes?: number }>();

  private stats(c: FakeContainer): ContainerStats {
    const timestamp = this.nowNs();
    const u = this.containerUsage.get(c.id) ?? { usageCoreNanoSeconds: 0, workingSetBytes: 0 };
    return {
      attributes: { id: c.id, metadata: { ...c.config.metadata }, labels: { ...c.config.labels }, annotations: { ...c.config.annotations } },
      cpu: { timestamp, usageCoreNanoSeconds: { value: u.usageCoreNanoSeconds }, ...(u.usageNanoCores !== undefined ? { usageNanoCores: { value: u.usageNanoCores } } : {}) },
      memory: { timestamp, workingSetBytes: { value: u.workingSetBytes }, usageBytes: { value: u.workingSetBytes }, rssBytes: { value: u.rssBytes ?? u.workingSetBytes } },
      ...(u.rootfsBytes !== undefined ? { writableLayer: { timestamp, fsId: { mountpoint: '/var/lib/fake' }, usedBytes: { value: u.rootfsBytes }, inodesUsed: { value: 1 } } } : {}),
    };
  }

  async containerStats(containerId: string): Promise<ContainerStats> {
    this.record('containerStats');
    return this.stats(this.mustContainer(containerId));
  }

  async listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
    this.record('listContainerStats');
    return [...this.containers.values()]
      .filter((c) => c.state === 'CONTAINER_RUNNING' && (!filter?.id || c.id === filter.id)
        && (!filter?.podSandboxId || c.podSandboxId === filter.podSandboxId) && matches(c.config.labels ?? {}, filter?.labelSelector))
      .map((c) => this.stats(c));
  }

  /** Network counters the sandbox stats report for a sandbox (eth0), by sandbox id; tests set them. */
  readonly sandboxNetwork = new Map<string, { rxBytes: number; txBytes: number }>();

  private sandboxStats(s: FakeSandbox): PodSandboxStats {
    const timestamp = this.nowNs();
    const n = this.sandboxNetwork.get(s.id) ?? { rxBytes: 0, txBytes: 0 };
    const eth0 = { name: 'eth0', rxBytes: { value: n.rxBytes }, rxErrors: { value: 0 }, txBytes: { value: n.txBytes }, txErrors: { value: 0 } };
    const containers = [...this.containers.values()].filter((c) => c.podSandboxId === s.id && c.state === 'CONTAINER_RUNNING').map((c) => this.stats(c));
    const sum = (f: (c: ContainerStats) => number | undefined) => containers.reduce((a, c) => a + (f(c) ?? 0), 0);
    const rates = containers.map((c) => c.cpu?.usageNanoCores?.value);
    return {
      attributes: { id: s.id, metadata: { ...s.config.metadata }, labels: { ...s.config.labels }, annotations: { ...s.config.annotations } },
      linux: {
        cpu: {
          timestamp, usageCoreNanoSeconds: { value: sum((c) => c.cpu?.usageCoreNanoSeconds?.value) },
          ...(rates.length && rates.every((r) => r !== undefined) ? { usageNanoCores: { value: sum((c) => c.cpu?.usageNanoCores?.value) } } : {}),
        },
        memory: { timestamp, workingSetBytes: { value: sum((c) => c.memory?.workingSetBytes?.value) }, usageBytes: { value: sum((c) => c.memory?.usageBytes?.value) }, rssBytes: { value: sum((c) => c.memory?.rssBytes?.value) } },
        network: { timestamp, defaultInterface: eth0, interfaces: [eth0] },
        process: { timestamp, processCount: { value: containers.length + 1 } },
        containers,
      },
    };
  }

  async podSandboxStats(podSandboxId: string): Promise<PodSandboxStats> {
    this.record('podSandboxStats');
    const s = this.sandboxes.get(podSandboxId);
    if (!s || s.state !== 'SANDBOX_READY') throw new CriError('NotFound', `pod sandbox ${podSandboxId} not found`);
    return this.sandboxStats(s);
  }

  async listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]> {
    this.record('listPodSandboxStats');
    return [...this.sandboxes.values()]
      .filter((s) => s.state === 'SANDBOX_READY' && (!filter?.id || s.id === filter.id) && matches(s.config.labels ?? {}, filter?.labelSelector))
      .map((s) => this.sandboxStats(s));
  }

  async updateRuntimeConfig(config: RuntimeConfig): Promise<void> {
    this.record('updateRuntimeConfig');
    if (config.networkConfig?.podCidr) this.podCidr = config.networkConfig.podCidr;
  }

  async status(): Promise<RuntimeStatus> {
    this.record('status');
    return {
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: true, reason: '', message: '' },
      ],
    };
  }
}
