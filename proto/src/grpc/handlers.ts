/**
 * Server adapters: from our promise interfaces to the generated gRPC handlers (STYLE example 7).
 * Generated types stay here; implementations only see ./types.ts.
 */
import * as grpc from '@grpc/grpc-js';
import { CriError } from '../errors.js';
import type { ImageService, RuntimeService } from '../runtime-service.js';
import type { ExecInput, ContainerConfig, PodSandboxConfig, ImageSpec, AuthConfig, ContainerLogsOptions } from '../types.js';
import type { RuntimeServiceHandlers } from '../generated/runtime/v1/RuntimeService.js';
import type { ImageServiceHandlers } from '../generated/runtime/v1/ImageService.js';
import type { ExecRequest__Output } from '../generated/runtime/v1/ExecRequest.js';
import type { ExecResponse } from '../generated/runtime/v1/ExecResponse.js';
import { containerFilterFromWire, containerStatsFilterFromWire, podSandboxStatsFilterFromWire, denull, podSandboxFilterFromWire, toGrpcError } from './wire.js';
import { CRI_CHANNEL_OPTIONS, loadCri, unixAddress } from './load.js';

const unary = <Req, Res>(fn: (req: Req) => Promise<Res>): grpc.handleUnaryCall<Req, Res> =>
  (call, cb) => { fn(call.request).then((res) => cb(null, res), (err: unknown) => cb(toGrpcError(err))); };

function required<T>(v: T | null | undefined, field: string): T {
  if (v === null || v === undefined) throw new CriError('InvalidArgument', `${field} is required`);
  return v;
}
function id(v: string, field: string): string {
  if (!v) throw new CriError('InvalidArgument', `${field} is required`);
  return v;
}

/** Writes to a server stream, waiting for 'drain' when its buffer is full. */
async function writeWithBackpressure<T>(call: grpc.ServerWritableStream<unknown, T> | grpc.ServerDuplexStream<unknown, T>, msg: T): Promise<void> {
  if (!call.write(msg)) await new Promise<void>((resolve) => { call.once('drain', resolve); call.once('close', resolve); });
}

/** runtimeServiceHandlers adapts a RuntimeService to the generated gRPC service implementation. */
export function runtimeServiceHandlers(impl: RuntimeService): RuntimeServiceHandlers {
  return {
    Version: unary(async () => impl.version()),
    RunPodSandbox: unary(async (req) => ({
      podSandboxId: await impl.runPodSandbox(denull<PodSandboxConfig>(required(req.config, 'config')), req.runtimeHandler),
    })),
    StopPodSandbox: unary(async (req) => { await impl.stopPodSandbox(id(req.podSandboxId, 'podSandboxId')); return {}; }),
    RemovePodSandbox: unary(async (req) => { await impl.removePodSandbox(id(req.podSandboxId, 'podSandboxId')); return {}; }),
    PodSandboxStatus: unary(async (req) => ({ status: await impl.podSandboxStatus(id(req.podSandboxId, 'podSandboxId')), info: {} })),
    ListPodSandbox: unary(async (req) => ({ items: await impl.listPodSandbox(podSandboxFilterFromWire(req.filter)) })),
    CreateContainer: unary(async (req) => ({
      containerId: await impl.createContainer(
        id(req.podSandboxId, 'podSandboxId'),
        denull<ContainerConfig>(required(req.config, 'config')),
        denull<PodSandboxConfig>(required(req.sandboxConfig, 'sandboxConfig')),
      ),
    })),
    StartContainer: unary(async (req) => { await impl.startContainer(id(req.containerId, 'containerId')); return {}; }),
    StopContainer: unary(async (req) => { await impl.stopContainer(id(req.containerId, 'containerId'), req.timeout); return {}; }),
    RemoveContainer: unary(async (req) => { await impl.removeContainer(id(req.containerId, 'containerId')); return {}; }),
    ListContainers: unary(async (req) => ({ containers: await impl.listContainers(containerFilterFromWire(req.filter)) })),
    ContainerStatus: unary(async (req) => ({ status: await impl.containerStatus(id(req.containerId, 'containerId')), info: {} })),
    ExecSync: unary(async (req) => impl.execSync(id(req.containerId, 'containerId'), req.cmd, req.timeout)),
    Exec: (call) => { void serveExec(impl, call); },
    ContainerLogs: (call) => {
      const ac = new AbortController();
      call.on('cancelled', () => ac.abort(new CriError('Canceled', 'client cancelled')));
      void (async () => {
        try {
          const req = call.request;
          const opts: ContainerLogsOptions = { follow: req.follow, timestamps: req.timestamps };
          if (req.tailLines) opts.tailLines = req.tailLines.value;
          if (req.sinceTime) opts.sinceTime = req.sinceTime;
          for await (const chunk of impl.containerLogs(id(req.containerId, 'containerId'), opts, ac.signal)) {
            await writeWithBackpressure(call, { stream: chunk.stream, data: chunk.data });
          }
          call.end();
        } catch (err) {
          if (!ac.signal.aborted) call.emit('error', toGrpcError(err));
        }
      })();
    },
    ReopenContainerLog: unary(async (req) => { await impl.reopenContainerLog(id(req.containerId, 'containerId')); return {}; }),
    ContainerStats: unary(async (req) => ({ stats: await impl.containerStats(id(req.containerId, 'containerId')) })),
    ListContainerStats: unary(async (req) => ({ stats: await impl.listContainerStats(containerStatsFilterFromWire(req.filter)) })),
    PodSandboxStats: unary(async (req) => ({ stats: await impl.podSandboxStats(id(req.podSandboxId, 'podSandboxId')) })),
    ListPodSandboxStats: unary(async (req) => ({ stats: await impl.listPodSandboxStats(podSandboxStatsFilterFromWire(req.filter)) })),
    UpdateRuntimeConfig: unary(async (req) => {
      const podCidr = req.runtimeConfig?.networkConfig?.podCidr;
      await impl.updateRuntimeConfig(podCidr ? { networkConfig: { podCidr } } : {});
      return {};
    }),
    Status: unary(async () => ({ status: await impl.status(), info: {} })),
  };
}

/** messageReader reads a stream's messages one by one; undefined after its end (or an error). */
function messageReader<T>(stream: NodeJS.EventEmitter): () => Promise<T | undefined> {
  const queue: T[] = [];
  let ended = false;
  let waiter: ((m: T | undefined) => void) | undefined;
  const wake = (m: T | undefined) => { const w = waiter; waiter = undefined; w?.(m); };
  stream.on('data', (m: T) => { if (waiter) wake(m); else queue.push(m); });
  const finish = () => { ended = true; wake(undefined); };
  stream.on('end', finish);
  stream.on('error', finish);
  stream.on('close', finish);
  return () => {
    if (queue.length) return Promise.resolve(queue.shift());
    if (ended) return Promise.resolve(undefined);
    return new Promise((resolve) => { waiter = resolve; });
  };
}

async function serveExec(impl: RuntimeService, call: grpc.ServerDuplexStream<ExecRequest__Output, ExecResponse>): Promise<void> {
  const ac = new AbortController();
  call.on('cancelled', () => ac.abort(new CriError('Canceled', 'client cancelled')));
  // Not the stream's async iterator: it destroys the call when the client half-closes, and then
  // the exit message could no longer be written.
  const next = messageReader<ExecRequest__Output>(call);
  try {
    const first = await next();
    const start = first?.start;
    if (!start) throw new CriError('InvalidArgument', 'the first Exec message must carry start');
    // Later messages become the input iterable; the client's half-close ends it (= close stdin).
    const input: AsyncIterable<ExecInput> = {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const m = await next();
          if (!m) return;
          if (m.stdin) yield { stdin: m.stdin };
          else if (m.resize) yield { resize: { width: m.resize.width, height: m.resize.height } };
          else if (m.closeStdin) { yield { closeStdin: true }; return; }
        }
      },
    };
    const { exitCode } = await impl.exec(
      { containerId: id(start.containerId, 'containerId'), cmd: start.cmd, tty: start.tty, stdin: start.stdin, stdout: start.stdout, stderr: start.stderr },
      {
        input,
        onStdout: (b) => { call.write({ stdout: b }); },
        onStderr: (b) => { call.write({ stderr: b }); },
        signal: ac.signal,
      },
    );
    call.write({ exit: { exitCode } });
    call.end();
  } catch (err) {
    if (!ac.signal.aborted) call.emit('error', toGrpcError(err));
  }
}

/** imageServiceHandlers adapts an ImageService to the generated gRPC service implementation. */
export function imageServiceHandlers(impl: ImageService): ImageServiceHandlers {
  return {
    ListImages: unary(async (req) => ({ images: await impl.listImages(req.filter?.image ? denull<ImageSpec>(req.filter.image) : undefined) })),
    ImageStatus: unary(async (req) => {
      const image = await impl.imageStatus(denull<ImageSpec>(required(req.image, 'image')));
      return { image: image ?? null, info: {} };
    }),
    PullImage: unary(async (req) => {
      const spec = denull<ImageSpec>(required(req.image, 'image'));
      if (!spec.image) throw new CriError('InvalidArgument', 'image.image is required');
      const auth = req.auth ? denull<AuthConfig>(req.auth) : undefined;
      const sandbox = req.sandboxConfig ? denull<PodSandboxConfig>(req.sandboxConfig) : undefined;
      return { imageRef: await impl.pullImage(spec, auth, sandbox) };
    }),
    RemoveImage: unary(async (req) => { await impl.removeImage(denull<ImageSpec>(required(req.image, 'image'))); return {}; }),
    ImageFsInfo: unary(async () => impl.imageFsInfo()),
  };
}

/** Options for {@link serveCri}. */
export interface CriServerOptions {
  /** Unix socket path; an existing file there is replaced. */
  socketPath: string;
  runtime: RuntimeService;
  image: ImageService;
}

/**
 * serveCri serves both services on a unix socket. Resolves once listening; `close()` stops
 * accepting, waits up to graceMs for calls in flight, then cancels the rest.
 */
export async function serveCri(o: CriServerOptions): Promise<{ server: grpc.Server; close(graceMs?: number): Promise<void> }> {
  const { rmSync } = await import('node:fs');
  rmSync(o.socketPath, { force: true });
  const pkg = loadCri();
  const server = new grpc.Server(CRI_CHANNEL_OPTIONS);
  server.addService(pkg.runtime.v1.RuntimeService.service, runtimeServiceHandlers(o.runtime));
  server.addService(pkg.runtime.v1.ImageService.service, imageServiceHandlers(o.image));
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(unixAddress(o.socketPath), grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
  return {
    server,
    close: (graceMs = 2_000) => new Promise<void>((resolve) => {
      const t = setTimeout(() => { server.forceShutdown(); resolve(); }, graceMs);
      server.tryShutdown(() => { clearTimeout(t); resolve(); });
    }),
  };
}
