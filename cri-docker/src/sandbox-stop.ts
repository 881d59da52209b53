import type Docker from 'dockerode';
import { isNotFound } from '@mk8s/proto';
import { inspectOwned, listOwned, netnsPath, type ShimContext } from './context.js';
import { dockerStatus, toCriError } from './docker-errors.js';
import { NETWORK_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, SANDBOX_ID_LABEL, TYPE_CONTAINER, TYPE_SANDBOX } from './labels.js';

/** stopQuietly stops a container with a grace period; already stopped or gone is fine. */
export async function stopQuietly(ctx: ShimContext, id: string, timeoutSeconds: number): Promise<void> {
  try {
    await ctx.docker.getContainer(id).stop({ t: Math.max(0, Math.floor(timeoutSeconds)) });
  } catch (err) {
    const s = dockerStatus(err);
    if (s === 304 || s === 404) return;
    throw toCriError(err, `stop container ${id}`);
  }
}

/** tearDownNetwork runs CNI DEL for a sandbox (idempotent; works after the pause container died). */
export async function tearDownNetwork(ctx: ShimContext, info: Docker.ContainerInspectInfo): Promise<void> {
  const labels = info.Config.Labels ?? {};
  ctx.ips.delete(info.Id);
  if (labels[NETWORK_LABEL] !== 'cni' || !ctx.cni) return;
  const pod = { namespace: labels[POD_NAMESPACE_LABEL] ?? '', name: labels[POD_NAME_LABEL] ?? '', uid: labels[POD_UID_LABEL] ?? '' };
  await ctx.cni.del(info.Id, info.State.Running ? netnsPath(info.State.Pid) : '', pod);
}

/**
 * stopPodSandbox kills the sandbox's containers (the kubelet already stopped them gracefully),
 * releases its network, then stops the pause container. Idempotent: unknown or stopped is fine.
 */
export async function stopPodSandbox(ctx: ShimContext, podSandboxId: string): Promise<void> {
  let info: Docker.ContainerInspectInfo;
  try {
    info = await inspectOwned(ctx, podSandboxId, TYPE_SANDBOX, 'pod sandbox');
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  const containers = await listOwned(ctx, TYPE_CONTAINER, { [SANDBOX_ID_LABEL]: info.Id });
  await Promise.all(containers.filter((c) => c.State === 'running').map((c) => stopQuietly(ctx, c.Id, 0)));
  await tearDownNetwork(ctx, info);
  await stopQuietly(ctx, info.Id, 10);
  ctx.logger.info({ sandbox: info.Id }, 'Stopped pod sandbox');
}
