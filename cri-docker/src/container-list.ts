import type { Container, ContainerFilter, ContainerMetadata } from '@mk8s/proto';
import { containerState, listOwned, type ShimContext } from './context.js';
import { CONTAINER_ATTEMPT_LABEL, CONTAINER_NAME_LABEL, IMAGE_LABEL, SANDBOX_ID_LABEL, TYPE_CONTAINER, fromDockerLabels, matchesSelector } from './labels.js';

export function containerMetadata(labels: Record<string, string>): ContainerMetadata {
  return { name: labels[CONTAINER_NAME_LABEL] ?? '', attempt: Number(labels[CONTAINER_ATTEMPT_LABEL] ?? 0) };
}

/** listContainers lists this node's app containers (never sandboxes). */
export async function listContainers(ctx: ShimContext, filter?: ContainerFilter): Promise<Container[]> {
  const extra: Record<string, string> = { ...filter?.labelSelector };
  if (filter?.podSandboxId) extra[SANDBOX_ID_LABEL] = filter.podSandboxId;
  const list = await listOwned(ctx, TYPE_CONTAINER, extra);
  const out: Container[] = [];
  for (const c of list) {
    if (filter?.id && c.Id !== filter.id && !c.Id.startsWith(filter.id)) continue;
    // A failed start leaves the container `created` in Docker; its status says exited (StartError).
    const state = ctx.startFailed.has(c.Id) ? 'CONTAINER_EXITED' : containerState(c.State);
    if (filter?.state && state !== filter.state) continue;
    const { labels, annotations } = fromDockerLabels(c.Labels);
    if (!matchesSelector(labels, filter?.labelSelector)) continue;
    out.push({
      id: c.Id,
      podSandboxId: c.Labels?.[SANDBOX_ID_LABEL] ?? '',
      metadata: containerMetadata(c.Labels ?? {}),
      image: { image: c.Labels?.[IMAGE_LABEL] ?? c.Image },
      imageRef: c.ImageID,
      state,
      createdAt: c.Created * 1e9,
      labels,
      annotations,
    });
  }
  return out;
}
