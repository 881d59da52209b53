import type { ContainerStatus, Mount } from '@mk8s/proto';
import { containerState, inspectOwned, type ShimContext } from './context.js';
import { IMAGE_LABEL, LOG_PATH_LABEL, SANDBOX_ID_LABEL, TYPE_CONTAINER, fromDockerLabels, parseDockerTime } from './labels.js';
import { containerMetadata } from './container-list.js';

/**
 * exitReason is the kubelet-facing reason of an exited container: OOMKilled when the kernel
 * killed it for its memory limit, Completed for exit 0, Error otherwise.
 */
export function exitReason(oomKilled: boolean, exitCode: number): string {
  if (oomKilled) return 'OOMKilled';
  return exitCode === 0 ? 'Completed' : 'Error';
}

/** containerStatus reads an app container from `docker inspect`. NotFound when unknown. */
export async function containerStatus(ctx: ShimContext, containerId: string): Promise<ContainerStatus> {
  const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  const dl = info.Config.Labels ?? {};
  const { labels, annotations } = fromDockerLabels(dl);
  const state = containerState(info.State.Status);
  const exited = state === 'CONTAINER_EXITED';
  const hc = info.HostConfig;
  const mounts: Mount[] = (info.Mounts ?? []).filter((m) => m.Type === 'bind').map((m) => {
    const mount: Mount = { containerPath: m.Destination, hostPath: m.Source, readonly: !m.RW };
    if (m.Propagation === 'rslave') mount.propagation = 'PROPAGATION_HOST_TO_CONTAINER';
    else if (m.Propagation === 'rshared') mount.propagation = 'PROPAGATION_BIDIRECTIONAL';
    return mount;
  });
  return {
    id: info.Id,
    podSandboxId: dl[SANDBOX_ID_LABEL] ?? '',
    metadata: containerMetadata(dl),
    state,
    createdAt: parseDockerTime(info.Created),
    startedAt: state === 'CONTAINER_CREATED' ? 0 : parseDockerTime(info.State.StartedAt),
    finishedAt: exited ? parseDockerTime(info.State.FinishedAt) : 0,
    exitCode: exited ? info.State.ExitCode : 0,
    image: { image: dl[IMAGE_LABEL] ?? info.Config.Image },
    imageRef: info.Image,
    reason: exited ? exitReason(info.State.OOMKilled, info.State.ExitCode) : '',
    message: info.State.Error ?? '',
    labels,
    annotations,
    mounts,
    logPath: dl[LOG_PATH_LABEL] ?? '',
    resources: {
      linux: {
        cpuShares: hc.CpuShares ?? 0, cpuQuota: hc.CpuQuota ?? 0, cpuPeriod: hc.CpuPeriod ?? 0, memoryLimitInBytes: hc.Memory ?? 0,
        oomScoreAdj: hc.OomScoreAdj ?? 0, cpusetCpus: hc.CpusetCpus ?? '', cpusetMems: hc.CpusetMems ?? '',
      },
    },
  };
}
