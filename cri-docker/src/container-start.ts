import { CriError } from '@mk8s/proto';
import { inspectOwned, type ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';
import { TYPE_CONTAINER } from './labels.js';

/** startContainer starts a created container; an exited one is never restarted (FailedPrecondition). */
export async function startContainer(ctx: ShimContext, containerId: string): Promise<void> {
  const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  if (info.State.Status !== 'created') {
    throw new CriError('FailedPrecondition', `container ${containerId} is ${info.State.Status}, not created`);
  }
  try {
    await ctx.docker.getContainer(info.Id).start();
  } catch (err) {
    throw toCriError(err, `start container ${containerId}`);
  }
}
