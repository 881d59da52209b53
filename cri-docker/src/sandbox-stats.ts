/**
 * ListPodSandboxStats: the pod network's counters, read where cAdvisor reads them: the
 * /proc/<pid>/net/dev of the sandbox's (pause container's) process, which shows the interfaces of
 * the pod's network namespace. Loopback is left out, as cAdvisor does; eth0 (the CNI interface)
 * is the default interface.
 */
import { readFile } from 'node:fs/promises';
import type { NetworkInterfaceUsage, PodSandboxStats, PodSandboxStatsFilter } from '@mk8s/proto';
import { inspectOwned, listOwned, type ShimContext } from './context.js';
import { TYPE_SANDBOX, fromDockerLabels, matchesSelector } from './labels.js';
import { sandboxMetadata } from './sandbox-status.js';

/** The pod's default interface (the one CNI adds). */
export const DEFAULT_INTERFACE = 'eth0';

/**
 * parseNetDev reads the Linux /proc/net/dev table: per interface, received bytes and errors
 * (columns 1 and 3 after the name) and transmitted bytes and errors (columns 9 and 11). `lo` and
 * malformed lines are skipped.
 */
export function parseNetDev(text: string): NetworkInterfaceUsage[] {
  const out: NetworkInterfaceUsage[] = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (!name || name === 'lo' || name.includes('|') || f.length < 16 || f.some((n) => !Number.isFinite(n))) continue;
    out.push({ name, rxBytes: { value: f[0]! }, rxErrors: { value: f[2]! }, txBytes: { value: f[8]! }, txErrors: { value: f[10]! } });
  }
  return out;
}

/** listPodSandboxStats samples every running sandbox of this node matching the filter; one that cannot be read has no network. */
export async function listPodSandboxStats(ctx: ShimContext, filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]> {
  const list = (await listOwned(ctx, TYPE_SANDBOX, filter?.labelSelector))
    .filter((c) => c.State === 'running' && (!filter?.id || c.Id === filter.id || c.Id.startsWith(filter.id)) && matchesSelector(fromDockerLabels(c.Labels).labels, filter?.labelSelector));
  return Promise.all(list.map(async (c): Promise<PodSandboxStats> => {
    const { labels, annotations } = fromDockerLabels(c.Labels);
    const out: PodSandboxStats = { attributes: { id: c.Id, metadata: sandboxMetadata(c.Labels ?? {}), labels, annotations } };
    try {
      const pid = (await inspectOwned(ctx, c.Id, TYPE_SANDBOX, 'pod sandbox')).State.Pid;
      if (!pid) return out;
      const interfaces = parseNetDev(await readFile(`/proc/${pid}/net/dev`, 'utf8'));
      const def = interfaces.find((i) => i.name === DEFAULT_INTERFACE);
      out.linux = { network: { timestamp: Date.now() * 1e6, interfaces, ...(def ? { defaultInterface: def } : {}) } };
    } catch (err) {
      ctx.logger.debug({ err, sandbox: c.Id }, 'Could not read pod sandbox network stats');
    }
    return out;
  }));
}
