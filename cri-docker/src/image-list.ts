import type { Image, ImageSpec } from '@mk8s/proto';
import type { ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';
import { imageStatus, toCriImage } from './image-status.js';

/** listImages: every image, or just the one filter names (by tag or id). */
export async function listImages(ctx: ShimContext, filter?: ImageSpec): Promise<Image[]> {
  if (filter?.image) {
    const one = await imageStatus(ctx, filter);
    return one ? [one] : [];
  }
  try {
    return (await ctx.docker.listImages()).map((i) => toCriImage(i));
  } catch (err) {
    throw toCriError(err, 'list images');
  }
}
