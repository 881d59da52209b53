import type { Readable } from 'node:stream';
import { CriError, type ContainerLogsOptions, type LogChunk } from '@mk8s/proto';
import { inspectOwned, type ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';
import { FrameDecoder } from './frames.js';
import { TYPE_CONTAINER } from './labels.js';

/**
 * containerLogs reads a container's logs back from Docker (json-file driver), running or exited.
 * With follow, Docker ends the stream when the container stops; aborting the signal ends it early.
 */
export async function* containerLogs(ctx: ShimContext, containerId: string, opts: ContainerLogsOptions = {}, signal?: AbortSignal): AsyncIterable<LogChunk> {
  const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  const tty = info.Config.Tty;
  const query = {
    stdout: true, stderr: true, timestamps: opts.timestamps ?? false,
    // Docker takes 'all' or a count; the typings only know numbers.
    tail: (opts.tailLines === undefined ? 'all' : Math.max(0, opts.tailLines)) as number,
    ...(opts.sinceTime ? { since: (opts.sinceTime / 1e9).toFixed(9) as unknown as number } : {}),
  };
  const dec = new FrameDecoder();
  const decode = (b: Buffer): LogChunk[] => (tty ? [{ stream: 'stdout', data: b }] : dec.push(b));
  const c = ctx.docker.getContainer(info.Id);
  if (!opts.follow) {
    let buf: Buffer;
    try {
      buf = (await c.logs({ ...query, follow: false })) as unknown as Buffer;
    } catch (err) {
      throw toCriError(err, `logs of container ${containerId}`);
    }
    yield* decode(Buffer.isBuffer(buf) ? buf : Buffer.from(String(buf)));
    return;
  }
  let stream: Readable;
  try {
    stream = (await c.logs({ ...query, follow: true })) as unknown as Readable;
  } catch (err) {
    throw toCriError(err, `logs of container ${containerId}`);
  }
  const onAbort = () => stream.destroy();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const chunk of stream) yield* decode(chunk as Buffer);
  } catch (err) {
    if (!signal?.aborted) throw toCriError(err, `logs of container ${containerId}`);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stream.destroy();
  }
}

/** reopenContainerLog: Docker's logging driver owns the files, so there is nothing to reopen. */
export async function reopenContainerLog(ctx: ShimContext, containerId: string): Promise<void> {
  const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  if (!info.State.Running) {
    throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
  }
}
