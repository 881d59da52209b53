import type { Duplex } from 'node:stream';
import { CriError, type ExecIO, type ExecRequest, type ExecSyncResult } from '@mk8s/proto';
import { inspectOwned, type ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';
import { FrameDecoder } from './frames.js';
import { TYPE_CONTAINER } from './labels.js';

interface DockerExecSession {
  stream: Duplex;
  /** Resolves with the exit code once the process has ended (call after the stream ended). */
  exitCode(): Promise<number>;
  resize(size: { width: number; height: number }): Promise<void>;
}

/** startDockerExec checks the container runs, then creates and attaches a Docker exec. */
async function startDockerExec(ctx: ShimContext, req: ExecRequest): Promise<DockerExecSession> {
  if (!req.cmd.length) throw new CriError('InvalidArgument', 'cmd is required');
  const info = await inspectOwned(ctx, req.containerId, TYPE_CONTAINER, 'container');
  if (!info.State.Running) throw new CriError('FailedPrecondition', `container ${req.containerId} is not running`);
  try {
    const exec = await ctx.docker.getContainer(info.Id).exec({
      Cmd: req.cmd, AttachStdin: req.stdin ?? false, AttachStdout: req.stdout ?? true, AttachStderr: req.stderr ?? true, Tty: req.tty ?? false,
    });
    const stream = (await exec.start({ hijack: true, stdin: req.stdin ?? false, Tty: req.tty ?? false })) as Duplex;
    return {
      stream,
      async exitCode() {
        // Docker may report the exec as running for a moment after the stream closed.
        for (let i = 0; ; i++) {
          const st = await exec.inspect();
          if (!st.Running || i >= 100) return st.ExitCode ?? 0;
          await new Promise((r) => setTimeout(r, Math.min(5 * (i + 1), 50)));
        }
      },
      async resize({ width, height }) { await exec.resize({ w: width, h: height }); },
    };
  } catch (err) {
    throw toCriError(err, `exec in container ${req.containerId}`);
  }
}

/** pumpOutput delivers the exec's output (demultiplexed unless TTY) until the stream ends. */
function pumpOutput(stream: Duplex, tty: boolean, onStdout: (b: Buffer) => void, onStderr: (b: Buffer) => void): Promise<void> {
  const dec = new FrameDecoder();
  return new Promise((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => {
      if (tty) { onStdout(chunk); return; }
      for (const f of dec.push(chunk)) (f.stream === 'stderr' ? onStderr : onStdout)(f.data);
    });
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', reject);
  });
}

/**
 * execSync runs a command and collects its output. DeadlineExceeded after timeoutSeconds (the
 * process is left running: Docker cannot kill an exec; upstream dockershim behaves the same).
 */
export async function execSync(ctx: ShimContext, containerId: string, cmd: string[], timeoutSeconds = 0): Promise<ExecSyncResult> {
  const session = await startDockerExec(ctx, { containerId, cmd });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const done = pumpOutput(session.stream, false, (b) => out.push(b), (b) => err.push(b));
  if (timeoutSeconds > 0) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CriError('DeadlineExceeded', `command ${JSON.stringify(cmd)} timed out after ${timeoutSeconds}s`)), timeoutSeconds * 1000);
    });
    try {
      await Promise.race([done, timeout]);
    } catch (e) {
      session.stream.destroy();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  } else {
    await done;
  }
  return { stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode: await session.exitCode() };
}

/** exec runs a command with streams: stdin and resizes in, stdout/stderr out, then the exit code. */
export async function exec(ctx: ShimContext, req: ExecRequest, io: ExecIO): Promise<{ exitCode: number }> {
  const session = await startDockerExec(ctx, req);
  const { stream } = session;
  const onAbort = () => stream.destroy();
  io.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const output = pumpOutput(stream, req.tty ?? false, (b) => io.onStdout?.(b), (b) => io.onStderr?.(b));
    void (async () => {
      let stdinOpen = req.stdin ?? false;
      try {
        for await (const m of io.input ?? []) {
          if ('stdin' in m) { if (stdinOpen) stream.write(m.stdin); }
          else if ('resize' in m) { if (req.tty) await session.resize(m.resize).catch(() => undefined); }
          else break;
        }
      } catch { /* the input ended badly: treat as closed */ }
      // Half-close: Docker closes the process's stdin but keeps sending its output. Not with a
      // TTY: there Docker drops the output still in flight, and a terminal's EOF is ^D anyway.
      if (stdinOpen && !req.tty) { stdinOpen = false; stream.end(); }
    })();
    await output;
    if (io.signal?.aborted) throw io.signal.reason;
    return { exitCode: await session.exitCode() };
  } finally {
    io.signal?.removeEventListener('abort', onAbort);
  }
}
