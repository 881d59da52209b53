import { CriError, normalizeImageRef, type ImageSpec } from '@mk8s/proto';
import type { ShimContext } from './context.js';
import { dockerMessage, dockerStatus } from './docker-errors.js';
import { inspectImage } from './image-status.js';

/**
 * pullImage returns the id of a present image without contacting a registry: every image here is
 * built offline and no registry is reachable, so even imagePullPolicy Always (the default for
 * `:latest`) must not fail for present images. An absent image is pulled with Docker for real,
 * which fails here: NotFound when the registry says so, Unavailable when it cannot be reached.
 */
export async function pullImage(ctx: ShimContext, image: ImageSpec): Promise<string> {
  const ref = normalizeImageRef(image.image);
  const present = await inspectImage(ctx, ref);
  if (present) return present.Id;
  try {
    const stream = await ctx.docker.pull(ref);
    await new Promise<void>((resolve, reject) => {
      ctx.docker.modem.followProgress(stream, (err: Error | null, events: { error?: string }[]) => {
        const failed = err ?? events.find((e) => e.error);
        if (failed) reject(err ?? new Error(String((failed as { error?: string }).error))); else resolve();
      });
    });
  } catch (err) {
    const msg = dockerMessage(err);
    const notFound = dockerStatus(err) === 404 || /not found|does not exist|pull access denied|manifest unknown/i.test(msg);
    throw new CriError(notFound ? 'NotFound' : 'Unavailable', `pull image "${image.image}": ${msg}`, { cause: err });
  }
  const pulled = await inspectImage(ctx, ref);
  if (!pulled) throw new CriError('Internal', `pull image "${image.image}": not present after pull`);
  ctx.logger.info({ image: ref, id: pulled.Id }, 'Pulled image');
  return pulled.Id;
}
