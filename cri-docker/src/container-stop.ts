import { inspectOwned, type ShimContext } from './context.js';
import { TYPE_CONTAINER } from './labels.js';
import { stopQuietly } from './sandbox-stop.js';

/** stopContainer: SIGTERM, SIGKILL after timeoutSeconds. Idempotent; NotFound when unknown. */
export async function stopContainer(ctx: ShimContext, containerId: string, timeoutSeconds: number): Promise<void> {
  const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  if (info.State.Status !== 'running' && info.State.Status !== 'paused' && info.State.Status !== 'restarting') return;
  await stopQuietly(ctx, info.Id, timeoutSeconds);
}
