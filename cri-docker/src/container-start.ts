import { CriError } from '@mk8s/proto';
import { inspectOwned, type ShimContext } from './context.js';
import { dockerStatus, toCriError } from './docker-errors.js';
import { TYPE_CONTAINER } from './labels.js';

/** startContainer starts a created container; an exited one is never restarted (FailedPrecondition). */
export async function startContainer(ctx: ShimContext, containerId: string): Promise<void> {
  // One this process created and never started is ours and in state created: no inspect needed.
  let id = containerId;
  if (!ctx.created.delete(containerId)) {
    const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
    if (info.State.Status !== 'created') {
      throw new CriError('FailedPrecondition', `container ${containerId} is ${info.State.Status}, not created`);
    }
    id = info.Id;
  }
  try {
    await ctx.docker.getContainer(id).start();
  } catch (err) {
    // 304: someone else started it meanwhile.
    if (dockerStatus(err) === 304) throw new CriError('FailedPrecondition', `container ${containerId} is running, not created`);
    ctx.startFailed.add(id);
    throw toCriError(err, `start container ${containerId}`);
  }
}
