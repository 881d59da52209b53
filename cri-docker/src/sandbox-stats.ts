/**
 * PodSandboxStats and ListPodSandboxStats: each ready sandbox's CPU and memory (its containers'
 * cgroups summed, the pause container included, stats-reader.ts), its containers' stats, and the
 * pod network's counters, read where cAdvisor reads them: the /proc/<pid>/net/dev of the pause
 * container's process, which shows the interfaces of the pod's network namespace (loopback left out;
 * eth0, the CNI interface, is the default interface).
 */
import type Docker from 'dockerode';
import { CriError, type PodSandboxStats, type PodSandboxStatsFilter } from '@mk8s/proto';
import type { ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';
import { NODE_LABEL, SANDBOX_ID_LABEL, TYPE_CONTAINER, TYPE_LABEL, TYPE_SANDBOX, fromDockerLabels, matchesSelector } from './labels.js';

export { parseNetDev, DEFAULT_INTERFACE } from './net-dev.js';

/**
 * listRunning lists this node's running containers, sandboxes and app containers alike, in one
 * Docker call (every stats RPC starts here), and prunes the stats caches to them.
 */
export async function listRunning(ctx: ShimContext): Promise<{ sandboxes: Docker.ContainerInfo[]; containers: Docker.ContainerInfo[] }> {
  let all: Docker.ContainerInfo[];
  try {
    all = await ctx.docker.listContainers({ filters: { label: [`${NODE_LABEL}=${ctx.nodeName}`], status: ['running'] } });
  } catch (err) {
    throw toCriError(err, 'list containers');
  }
  ctx.stats.retain(new Set(all.map((c) => c.Id)));
  return {
    sandboxes: all.filter((c) => c.Labels?.[TYPE_LABEL] === TYPE_SANDBOX),
    containers: all.filter((c) => c.Labels?.[TYPE_LABEL] === TYPE_CONTAINER),
  };
}

const byId = (filterId: string | undefined, id: string) => !filterId || id === filterId || id.startsWith(filterId);

/** listPodSandboxStats samples every running sandbox of this node matching the filter. */
export async function listPodSandboxStats(ctx: ShimContext, filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]> {
  const { sandboxes, containers } = await listRunning(ctx);
  const list = sandboxes.filter((c) => byId(filter?.id, c.Id) && matchesSelector(fromDockerLabels(c.Labels).labels, filter?.labelSelector));
  return Promise.all(list.map((s) => ctx.stats.sandboxStats(ctx.docker, s, containers.filter((c) => c.Labels?.[SANDBOX_ID_LABEL] === s.Id))));
}

/** podSandboxStats samples one ready sandbox; NotFound when it is unknown or not running. */
export async function podSandboxStats(ctx: ShimContext, podSandboxId: string): Promise<PodSandboxStats> {
  const { sandboxes, containers } = await listRunning(ctx);
  const s = sandboxes.find((c) => c.Id === podSandboxId) ?? sandboxes.find((c) => c.Id.startsWith(podSandboxId));
  if (!podSandboxId || !s) throw new CriError('NotFound', `pod sandbox ${podSandboxId} not found`);
  return ctx.stats.sandboxStats(ctx.docker, s, containers.filter((c) => c.Labels?.[SANDBOX_ID_LABEL] === s.Id));
}
