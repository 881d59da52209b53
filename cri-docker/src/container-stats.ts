import type { ContainerStats, ContainerStatsFilter } from '@mk8s/proto';
import { inspectOwned, listOwned, type ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';
import { SANDBOX_ID_LABEL, TYPE_CONTAINER, fromDockerLabels, matchesSelector, parseDockerTime } from './labels.js';
import { containerMetadata } from './container-list.js';

interface DockerStats {
  read?: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; limit?: number; stats?: Record<string, number> };
}

/** The previous cumulative CPU sample per container (process-local; rebuilt by the next call). */
const lastCpuSample = new Map<string, { usage: number; timestamp: number }>();

/** One sample from `docker stats --no-stream` (one-shot: no second sample for a CPU rate). */
async function sample(ctx: ShimContext, id: string, labels: Record<string, string>): Promise<ContainerStats> {
  let s: DockerStats;
  try {
    s = (await ctx.docker.getContainer(id).stats({ stream: false, 'one-shot': true } as { stream: false })) as unknown as DockerStats;
  } catch (err) {
    throw toCriError(err, `stats of container ${id}`);
  }
  const timestamp = parseDockerTime(s.read) || Date.now() * 1e6;
  const mem = s.memory_stats ?? {};
  const usage = mem.usage ?? 0;
  // Working set as the kubelet computes it: usage minus inactive file cache (cgroup v1 and v2 keys).
  const inactive = mem.stats?.['total_inactive_file'] ?? mem.stats?.['inactive_file'] ?? 0;
  const workingSet = Math.max(0, usage - inactive);
  const { labels: l, annotations } = fromDockerLabels(labels);
  const limit = mem.limit ?? 0;
  const usage0 = s.cpu_stats?.cpu_usage?.total_usage ?? 0;
  const cpu: ContainerStats['cpu'] = { timestamp, usageCoreNanoSeconds: { value: usage0 } };
  // One-shot samples carry no rate: derive usageNanoCores from this container's previous sample.
  const prev = lastCpuSample.get(id);
  if (prev && timestamp > prev.timestamp && usage0 >= prev.usage) {
    cpu.usageNanoCores = { value: Math.round(((usage0 - prev.usage) / (timestamp - prev.timestamp)) * 1e9) };
  }
  lastCpuSample.set(id, { usage: usage0, timestamp });
  if (lastCpuSample.size > 10_000) lastCpuSample.clear();
  return {
    attributes: { id, metadata: containerMetadata(labels), labels: l, annotations },
    cpu,
    memory: {
      timestamp,
      workingSetBytes: { value: workingSet },
      usageBytes: { value: usage },
      rssBytes: { value: mem.stats?.['total_rss'] ?? mem.stats?.['anon'] ?? 0 },
      ...(limit > 0 && limit < 2 ** 62 ? { availableBytes: { value: Math.max(0, limit - workingSet) } } : {}),
      pageFaults: { value: mem.stats?.['total_pgfault'] ?? mem.stats?.['pgfault'] ?? 0 },
      majorPageFaults: { value: mem.stats?.['total_pgmajfault'] ?? mem.stats?.['pgmajfault'] ?? 0 },
    },
  };
}

/** containerStats samples one container. NotFound when unknown. */
export async function containerStats(ctx: ShimContext, containerId: string): Promise<ContainerStats> {
  const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  return sample(ctx, info.Id, info.Config.Labels ?? {});
}

/** listContainerStats samples every running container matching the filter, a few at a time. */
export async function listContainerStats(ctx: ShimContext, filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
  const extra: Record<string, string> = { ...filter?.labelSelector };
  if (filter?.podSandboxId) extra[SANDBOX_ID_LABEL] = filter.podSandboxId;
  const list = (await listOwned(ctx, TYPE_CONTAINER, extra)).filter((c) => c.State === 'running'
    && (!filter?.id || c.Id === filter.id || c.Id.startsWith(filter.id)) && matchesSelector(fromDockerLabels(c.Labels).labels, filter?.labelSelector));
  const out: ContainerStats[] = [];
  for (let i = 0; i < list.length; i += 4) {
    const batch = await Promise.all(list.slice(i, i + 4).map((c) => sample(ctx, c.Id, c.Labels ?? {}).catch(() => undefined)));
    for (const s of batch) if (s) out.push(s);
  }
  return out;
}
