import type { PodSandbox, PodSandboxFilter } from '@mk8s/proto';
import { listOwned, sandboxState, type ShimContext } from './context.js';
import { RUNTIME_HANDLER_LABEL, TYPE_SANDBOX, fromDockerLabels, matchesSelector } from './labels.js';
import { sandboxMetadata } from './sandbox-status.js';

/** listPodSandbox lists this node's sandboxes; label selectors go to Docker's label filter. */
export async function listPodSandbox(ctx: ShimContext, filter?: PodSandboxFilter): Promise<PodSandbox[]> {
  const list = await listOwned(ctx, TYPE_SANDBOX, filter?.labelSelector);
  const out: PodSandbox[] = [];
  for (const c of list) {
    if (filter?.id && c.Id !== filter.id && !c.Id.startsWith(filter.id)) continue;
    const state = sandboxState(c.State);
    if (filter?.state && state !== filter.state) continue;
    const { labels, annotations } = fromDockerLabels(c.Labels);
    if (!matchesSelector(labels, filter?.labelSelector)) continue;
    out.push({
      id: c.Id, metadata: sandboxMetadata(c.Labels ?? {}), state, createdAt: c.Created * 1e9, labels, annotations,
      runtimeHandler: c.Labels?.[RUNTIME_HANDLER_LABEL] ?? '',
    });
  }
  return out;
}
