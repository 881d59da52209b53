/**
 * ContainerStats and ListContainerStats: each running container's cgroup figures (stats-reader.ts:
 * cumulative CPU and the rate since an earlier sample, memory working set, RSS, page faults,
 * writable layer), one `docker ps` per call and no Docker stats API call.
 */
import { CriError, type ContainerStats, type ContainerStatsFilter } from '@mk8s/proto';
import { inspectOwned, type ShimContext } from './context.js';
import { SANDBOX_ID_LABEL, TYPE_CONTAINER, fromDockerLabels, matchesSelector } from './labels.js';
import { listRunning } from './sandbox-stats.js';
import { containerMetadata } from './container-list.js';

/** containerStats samples one container. NotFound when unknown (or another node's); a container not running has no figures. */
export async function containerStats(ctx: ShimContext, containerId: string): Promise<ContainerStats> {
  const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  const s = await ctx.stats.containerStats(ctx.docker, { Id: info.Id, Labels: info.Config.Labels ?? {} });
  if (s) return s;
  if (info.State.Running) throw new CriError('Unavailable', `stats of container ${containerId} could not be read`);
  const { labels, annotations } = fromDockerLabels(info.Config.Labels);
  return { attributes: { id: info.Id, metadata: containerMetadata(info.Config.Labels ?? {}), labels, annotations } };
}

/** listContainerStats samples every running container matching the filter; one that cannot be read is left out. */
export async function listContainerStats(ctx: ShimContext, filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
  const { containers } = await listRunning(ctx);
  const list = containers.filter((c) => (!filter?.id || c.Id === filter.id || c.Id.startsWith(filter.id))
    && (!filter?.podSandboxId || c.Labels?.[SANDBOX_ID_LABEL] === filter.podSandboxId)
    && matchesSelector(fromDockerLabels(c.Labels).labels, filter?.labelSelector));
  const out = await Promise.all(list.map((c) => ctx.stats.containerStats(ctx.docker, c)));
  return out.filter((s): s is ContainerStats => s !== undefined);
}
