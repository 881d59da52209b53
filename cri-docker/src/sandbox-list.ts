import type { PodSandbox, PodSandboxFilter } from '@mk8s/proto';
import type Docker from 'dockerode';
import { inspectOwned, listOwned, sandboxState, type ShimContext } from './context.js';
import { NETWORK_LABEL, RUNTIME_HANDLER_LABEL, TYPE_SANDBOX, fromDockerLabels, matchesSelector } from './labels.js';
import { sandboxIp, sandboxMetadata } from './sandbox-status.js';

/** Running CNI sandboxes are ready only with an IP (see podSandboxStatus); the IP cache makes this cheap. */
async function effectiveState(ctx: ShimContext, c: Docker.ContainerInfo): Promise<PodSandbox['state']> {
  const state = sandboxState(c.State);
  if (state !== 'SANDBOX_READY' || c.Labels?.[NETWORK_LABEL] !== 'cni' || ctx.ips.get(c.Id)) return state;
  try {
    return (await sandboxIp(ctx, await inspectOwned(ctx, c.Id, TYPE_SANDBOX, 'pod sandbox'))) ? state : 'SANDBOX_NOTREADY';
  } catch {
    return 'SANDBOX_NOTREADY';
  }
}

/** listPodSandbox lists this node's sandboxes; label selectors go to Docker's label filter. */
export async function listPodSandbox(ctx: ShimContext, filter?: PodSandboxFilter): Promise<PodSandbox[]> {
  const list = await listOwned(ctx, TYPE_SANDBOX, filter?.labelSelector);
  const candidates = list.filter((c) => !filter?.id || c.Id === filter.id || c.Id.startsWith(filter.id));
  const states = await Promise.all(candidates.map((c) => effectiveState(ctx, c)));
  const out: PodSandbox[] = [];
  candidates.forEach((c, i) => {
    const state = states[i] ?? sandboxState(c.State);
    if (filter?.state && state !== filter.state) return;
    const { labels, annotations } = fromDockerLabels(c.Labels);
    if (!matchesSelector(labels, filter?.labelSelector)) return;
    out.push({
      id: c.Id, metadata: sandboxMetadata(c.Labels ?? {}), state, createdAt: c.Created * 1e9, labels, annotations,
      runtimeHandler: c.Labels?.[RUNTIME_HANDLER_LABEL] ?? '',
    });
  });
  return out;
}
