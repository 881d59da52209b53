import { CriError, type ImageSpec } from '@mk8s/proto';
import type { ShimContext } from './context.js';
import { dockerMessage, dockerStatus, toCriError } from './docker-errors.js';

/** removeImage removes an image; absent is fine, in use is FailedPrecondition. */
export async function removeImage(ctx: ShimContext, image: ImageSpec): Promise<void> {
  try {
    await ctx.docker.getImage(image.image).remove();
  } catch (err) {
    const s = dockerStatus(err);
    if (s === 404) return;
    if (s === 409) throw new CriError('FailedPrecondition', `remove image "${image.image}": ${dockerMessage(err)}`, { cause: err });
    throw toCriError(err, `remove image "${image.image}"`);
  }
}
