/**
 * Attach: the container's main process stdio (upstream CRI `Attach`, served by dockershim with
 * Docker's attach). mk8s carries it on the Exec stream: an `ExecRequest` with an empty `cmd`
 * means "attach" (see RuntimeService.exec), so no new RPC is needed on the gRPC surface.
 * Docker's attach sees only output written from now on; the session ends when the container's
 * process exits (or the caller aborts) and then reports exit code 0, as upstream's attach
 * reports success rather than the process's exit code.
 */
import type { Duplex } from 'node:stream';
import { CriError, type ExecIO, type ExecRequest } from '@mk8s/proto';
import { inspectOwned, type ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';
import { FrameDecoder } from './frames.js';
import { TYPE_CONTAINER } from './labels.js';

export async function attach(ctx: ShimContext, req: ExecRequest, io: ExecIO): Promise<{ exitCode: number }> {
  const info = await inspectOwned(ctx, req.containerId, TYPE_CONTAINER, 'container');
  if (!info.State.Running) throw new CriError('FailedPrecondition', `container ${req.containerId} is not running`);
  // The container's own TTY setting decides the framing, not the request: a TTY container's
  // output is raw, any other is multiplexed.
  const tty = info.Config.Tty === true;
  // stdin only reaches a process whose container was created with `stdin: true`.
  const stdin = (req.stdin ?? false) && info.Config.OpenStdin === true;
  const container = ctx.docker.getContainer(info.Id);
  let stream: Duplex;
  try {
    stream = (await container.attach({ stream: true, stdin, stdout: req.stdout ?? true, stderr: req.stderr ?? true, hijack: true })) as unknown as Duplex;
  } catch (err) {
    throw toCriError(err, `attach to container ${req.containerId}`);
  }
  const onAbort = () => stream.destroy();
  io.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const dec = new FrameDecoder();
    const output = new Promise<void>((resolve, reject) => {
      stream.on('data', (chunk: Buffer) => {
        if (tty) { io.onStdout?.(chunk); return; }
        for (const f of dec.push(chunk)) (f.stream === 'stderr' ? io.onStderr : io.onStdout)?.(f.data);
      });
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', reject);
    });
    void (async () => {
      try {
        for await (const m of io.input ?? []) {
          if ('stdin' in m) { if (stdin) stream.write(m.stdin); }
          else if ('resize' in m) { if (tty) await container.resize({ h: m.resize.height, w: m.resize.width }).catch(() => undefined); }
          else break;
        }
      } catch { /* the input ended badly: treat as closed */ }
      // Detaching stdin must not end the session: output keeps flowing until the process exits.
      if (stdin && !tty) stream.end();
    })();
    await output;
    if (io.signal?.aborted) throw io.signal.reason;
    return { exitCode: 0 };
  } finally {
    io.signal?.removeEventListener('abort', onAbort);
  }
}
