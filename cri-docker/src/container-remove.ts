import type { ShimContext } from './context.js';
import { inspectOwned } from './context.js';
import { dockerStatus, toCriError } from './docker-errors.js';
import { TYPE_CONTAINER } from './labels.js';
import { isNotFound } from '@mk8s/proto';

/** removeQuietly force-removes a container by id; gone already is fine. */
export async function removeQuietly(ctx: ShimContext, id: string): Promise<void> {
  ctx.sandboxes.delete(id);
  ctx.created.delete(id);
  ctx.startFailed.delete(id);
  try {
    await ctx.docker.getContainer(id).remove({ force: true, v: true });
  } catch (err) {
    const s = dockerStatus(err);
    // 404: already gone; 409: a removal is already in progress.
    if (s === 404 || (s === 409 && /already in progress/.test(String((err as Error).message)))) return;
    throw toCriError(err, `remove container ${id}`);
  }
}

/** removeContainer force-removes an app container. Idempotent: unknown is fine. */
export async function removeContainer(ctx: ShimContext, containerId: string): Promise<void> {
  try {
    await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  await removeQuietly(ctx, containerId);
  ctx.logger.debug({ container: containerId }, 'Removed container');
}
