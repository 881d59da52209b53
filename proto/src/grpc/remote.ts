/**
 * gRPC clients of the CRI over a unix socket (kubelet `remote_runtime.go`). Every error is
 * rethrown as a CriError with the server's status code.
 */
import * as grpc from '@grpc/grpc-js';
import { CriError } from '../errors.js';
import type { ImageService, RuntimeService } from '../runtime-service.js';
import type {
  AuthConfig, Container, ContainerConfig, ContainerFilter, ContainerLogsOptions, ContainerStats, ContainerStatsFilter,
  ContainerStatus, ExecIO, ExecRequest, ExecSyncResult, Image, ImageFsInfo, ImageSpec, LogChunk, PodSandbox,
  PodSandboxConfig, PodSandboxFilter, PodSandboxStats, PodSandboxStatsFilter, PodSandboxStatus, RuntimeConfig, RuntimeStatus, VersionInfo,
} from '../types.js';
import type { RuntimeServiceClient } from '../generated/runtime/v1/RuntimeService.js';
import type { ImageServiceClient } from '../generated/runtime/v1/ImageService.js';
import type { ContainerLogsResponse__Output } from '../generated/runtime/v1/ContainerLogsResponse.js';
import type { ExecResponse__Output } from '../generated/runtime/v1/ExecResponse.js';
import { CRI_CHANNEL_OPTIONS, loadCri, unixAddress } from './load.js';
import { containerFilterToWire, denull, fromGrpcError, podSandboxFilterToWire } from './wire.js';

/** Options for the remote services. */
export interface RemoteServiceOptions {
  /** Unix socket path of the CRI server (or a full gRPC target). */
  socketPath: string;
  /** Deadline of unary calls. @default 120_000 */
  timeoutMs?: number;
  /** Deadline of PullImage. @default 600_000 */
  pullTimeoutMs?: number;
}

type UnaryFn = (req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

function callUnary<Res>(client: grpc.Client, method: string, req: unknown, timeoutMs: number): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const fn = (client as unknown as Record<string, UnaryFn>)[method];
    if (!fn) return reject(new CriError('Unimplemented', `unknown method ${method}`));
    fn.call(client, req, { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(fromGrpcError(err)) : resolve(res as Res)));
  });
}

/** RemoteRuntimeService is a RuntimeService over gRPC. Safe to share; call close() when done. */
export class RemoteRuntimeService implements RuntimeService {
  private readonly client: RuntimeServiceClient;
  private readonly timeoutMs: number;

  constructor(o: RemoteServiceOptions) {
    const Ctor = loadCri().runtime.v1.RuntimeService;
    this.client = new Ctor(unixAddress(o.socketPath), grpc.credentials.createInsecure(), CRI_CHANNEL_OPTIONS);
    this.timeoutMs = o.timeoutMs ?? 120_000;
  }

  /** Closes the channel; calls in flight fail. */
  close(): void { this.client.close(); }

  private call<Res>(method: string, req: unknown): Promise<Res> {
    return callUnary<Res>(this.client, method, req, this.timeoutMs).then((r) => denull<Res>(r));
  }

  version(): Promise<VersionInfo> { return this.call('Version', { version: '0.1.0' }); }
  async runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string> {
    return (await this.call<{ podSandboxId: string }>('RunPodSandbox', { config, runtimeHandler: runtimeHandler ?? '' })).podSandboxId;
  }
  async stopPodSandbox(podSandboxId: string): Promise<void> { await this.call('StopPodSandbox', { podSandboxId }); }
  async removePodSandbox(podSandboxId: string): Promise<void> { await this.call('RemovePodSandbox', { podSandboxId }); }
  async podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    return (await this.call<{ status: PodSandboxStatus }>('PodSandboxStatus', { podSandboxId })).status;
  }
  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    return (await this.call<{ items?: PodSandbox[] }>('ListPodSandbox', { filter: podSandboxFilterToWire(filter) })).items ?? [];
  }
  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    return (await this.call<{ containerId: string }>('CreateContainer', { podSandboxId, config, sandboxConfig })).containerId;
  }
  async startContainer(containerId: string): Promise<void> { await this.call('StartContainer', { containerId }); }
  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    // The call outlives the grace period: give it that much more deadline.
    await callUnary(this.client, 'StopContainer', { containerId, timeout: timeoutSeconds }, this.timeoutMs + timeoutSeconds * 1000);
  }
  async removeContainer(containerId: string): Promise<void> { await this.call('RemoveContainer', { containerId }); }
  async listContainers(filter?: ContainerFilter): Promise<Container[]> {
    return (await this.call<{ containers?: Container[] }>('ListContainers', { filter: containerFilterToWire(filter) })).containers ?? [];
  }
  async containerStatus(containerId: string): Promise<ContainerStatus> {
    return (await this.call<{ status: ContainerStatus }>('ContainerStatus', { containerId })).status;
  }
  async execSync(containerId: string, cmd: string[], timeoutSeconds = 0): Promise<ExecSyncResult> {
    const deadline = timeoutSeconds > 0 ? timeoutSeconds * 1000 + 5_000 : 24 * 3600_000;
    const r = await callUnary<ExecSyncResult>(this.client, 'ExecSync', { containerId, cmd, timeout: timeoutSeconds }, deadline);
    return { stdout: r.stdout ?? Buffer.alloc(0), stderr: r.stderr ?? Buffer.alloc(0), exitCode: r.exitCode ?? 0 };
  }

  exec(req: ExecRequest, io: ExecIO): Promise<{ exitCode: number }> {
    return new Promise((resolve, reject) => {
      if (io.signal?.aborted) return reject(io.signal.reason);
      const call = this.client.Exec();
      let exitCode: number | undefined;
      let settled = false;
      const settle = (fn: () => void) => { if (!settled) { settled = true; io.signal?.removeEventListener('abort', onAbort); fn(); } };
      const onAbort = () => { call.cancel(); settle(() => reject(io.signal?.reason)); };
      io.signal?.addEventListener('abort', onAbort, { once: true });
      call.on('data', (m: ExecResponse__Output) => {
        if (m.stdout) io.onStdout?.(m.stdout);
        else if (m.stderr) io.onStderr?.(m.stderr);
        else if (m.exit) exitCode = m.exit.exitCode;
      });
      call.on('error', (err) => settle(() => reject(fromGrpcError(err))));
      call.on('status', (s: grpc.StatusObject) => {
        if (s.code !== grpc.status.OK) return;
        settle(() => (exitCode === undefined ? reject(new CriError('Internal', 'exec ended without an exit code')) : resolve({ exitCode })));
      });
      call.write({
        start: {
          containerId: req.containerId, cmd: req.cmd, tty: req.tty ?? false, stdin: req.stdin ?? false,
          stdout: req.stdout ?? true, stderr: req.stderr ?? true,
        },
      });
      void (async () => {
        try {
          if (io.input) {
            for await (const m of io.input) {
              if (settled) return;
              if ('stdin' in m) call.write({ stdin: m.stdin });
              else if ('resize' in m) call.write({ resize: m.resize });
              else { call.write({ closeStdin: true }); break; }
            }
          }
        } catch { /* input failure = end of stdin */ }
        if (!settled) call.end();
      })();
    });
  }

  async *containerLogs(containerId: string, opts: ContainerLogsOptions = {}, signal?: AbortSignal): AsyncIterable<LogChunk> {
    const call = this.client.ContainerLogs({
      containerId, follow: opts.follow ?? false, timestamps: opts.timestamps ?? false,
      tailLines: opts.tailLines === undefined ? null : { value: opts.tailLines }, sinceTime: opts.sinceTime ?? 0,
    });
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const m of call as AsyncIterable<ContainerLogsResponse__Output>) {
        yield { stream: m.stream === 'stderr' ? 'stderr' : 'stdout', data: m.data };
      }
    } catch (err) {
      if (signal?.aborted) return;
      throw fromGrpcError(err);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      call.cancel();
    }
  }

  async reopenContainerLog(containerId: string): Promise<void> { await this.call('ReopenContainerLog', { containerId }); }
  async containerStats(containerId: string): Promise<ContainerStats> {
    return denull((await this.call<{ stats: ContainerStats }>('ContainerStats', { containerId })).stats) as ContainerStats;
  }
  async listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
    const wire = filter ? { id: filter.id ?? '', podSandboxId: filter.podSandboxId ?? '', labelSelector: filter.labelSelector ?? {} } : null;
    return ((await this.call<{ stats?: ContainerStats[] }>('ListContainerStats', { filter: wire })).stats ?? []).map((s) => denull(s) as ContainerStats);
  }
  async podSandboxStats(podSandboxId: string): Promise<PodSandboxStats> {
    return denull((await this.call<{ stats: PodSandboxStats }>('PodSandboxStats', { podSandboxId })).stats) as PodSandboxStats;
  }
  async listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]> {
    const wire = filter ? { id: filter.id ?? '', labelSelector: filter.labelSelector ?? {} } : null;
    return ((await this.call<{ stats?: PodSandboxStats[] }>('ListPodSandboxStats', { filter: wire })).stats ?? []).map((s) => denull(s) as PodSandboxStats);
  }
  async updateRuntimeConfig(config: RuntimeConfig): Promise<void> { await this.call('UpdateRuntimeConfig', { runtimeConfig: config }); }
  async status(): Promise<RuntimeStatus> {
    const s = (await this.call<{ status?: RuntimeStatus }>('Status', { verbose: false })).status;
    return { conditions: s?.conditions ?? [] };
  }
}

/** RemoteImageService is an ImageService over gRPC. Safe to share; call close() when done. */
export class RemoteImageService implements ImageService {
  private readonly client: ImageServiceClient;
  private readonly timeoutMs: number;
  private readonly pullTimeoutMs: number;

  constructor(o: RemoteServiceOptions) {
    const Ctor = loadCri().runtime.v1.ImageService;
    this.client = new Ctor(unixAddress(o.socketPath), grpc.credentials.createInsecure(), CRI_CHANNEL_OPTIONS);
    this.timeoutMs = o.timeoutMs ?? 120_000;
    this.pullTimeoutMs = o.pullTimeoutMs ?? 600_000;
  }

  /** Closes the channel; calls in flight fail. */
  close(): void { this.client.close(); }

  private call<Res>(method: string, req: unknown, timeoutMs = this.timeoutMs): Promise<Res> {
    return callUnary<Res>(this.client, method, req, timeoutMs).then((r) => denull<Res>(r));
  }

  async listImages(filter?: ImageSpec): Promise<Image[]> {
    return (await this.call<{ images?: Image[] }>('ListImages', { filter: filter ? { image: filter } : null })).images ?? [];
  }
  async imageStatus(image: ImageSpec): Promise<Image | undefined> {
    return (await this.call<{ image?: Image }>('ImageStatus', { image })).image;
  }
  async pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig): Promise<string> {
    return (await this.call<{ imageRef: string }>('PullImage', { image, auth: auth ?? null, sandboxConfig: sandboxConfig ?? null }, this.pullTimeoutMs)).imageRef;
  }
  async removeImage(image: ImageSpec): Promise<void> { await this.call('RemoveImage', { image }); }
  async imageFsInfo(): Promise<ImageFsInfo> {
    const r = await this.call<Partial<ImageFsInfo>>('ImageFsInfo', {});
    return { imageFilesystems: r.imageFilesystems ?? [], containerFilesystems: r.containerFilesystems ?? [] };
  }
}
