import type Docker from 'dockerode';
import { isNotFound } from '@mk8s/proto';
import { inspectOwned, listOwned, type ShimContext } from './context.js';
import { SANDBOX_ID_LABEL, TYPE_CONTAINER, TYPE_SANDBOX } from './labels.js';
import { removeQuietly } from './container-remove.js';
import { tearDownNetwork } from './sandbox-stop.js';

/** removePodSandbox removes the sandbox and all its containers. Idempotent: unknown is fine. */
export async function removePodSandbox(ctx: ShimContext, podSandboxId: string): Promise<void> {
  let info: Docker.ContainerInspectInfo;
  try {
    info = await inspectOwned(ctx, podSandboxId, TYPE_SANDBOX, 'pod sandbox');
  } catch (err) {
    if (!isNotFound(err)) throw err;
    // The pause container may be gone while containers that named it remain: remove those.
    const orphans = await listOwned(ctx, TYPE_CONTAINER, { [SANDBOX_ID_LABEL]: podSandboxId });
    await Promise.all(orphans.map((c) => removeQuietly(ctx, c.Id)));
    return;
  }
  const containers = await listOwned(ctx, TYPE_CONTAINER, { [SANDBOX_ID_LABEL]: info.Id });
  await Promise.all(containers.map((c) => removeQuietly(ctx, c.Id)));
  // A sandbox removed without a stop first still must release its IP.
  await tearDownNetwork(ctx, info).catch((err: unknown) => ctx.logger.warn({ err, sandbox: info.Id }, 'Could not tear down pod network'));
  await removeQuietly(ctx, info.Id);
  ctx.logger.info({ sandbox: info.Id }, 'Removed pod sandbox');
}
