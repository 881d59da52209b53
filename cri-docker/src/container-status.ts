import type { ContainerState, ContainerStatus, Mount } from '@mk8s/proto';
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

/** Docker's State as far as the CRI state of an app container depends on it. */
export interface DockerState { Status: string; ExitCode?: number; Error?: string; OOMKilled?: boolean; StartedAt?: string; FinishedAt?: string }

/**
 * criContainerState maps `docker inspect`'s State to the CRI's. A container whose start failed
 * (its command does not exist, runc refused it) stays `created` in Docker with an exit code and
 * State.Error; the CRI reports it as exited with reason StartError and exit code 128, as
 * containerd does, so the kubelet counts it as a failed run (RunContainerError, then
 * CrashLoopBackOff) instead of a created container to start again.
 */
export function criContainerState(st: DockerState): { state: ContainerState; startFailed: boolean; exitCode: number; reason: string } {
  const state = containerState(st.Status);
  if (state === 'CONTAINER_CREATED' && ((st.ExitCode ?? 0) !== 0 || !!st.Error)) {
    return { state: 'CONTAINER_EXITED', startFailed: true, exitCode: 128, reason: 'StartError' };
  }
  const exited = state === 'CONTAINER_EXITED';
  return { state, startFailed: false, exitCode: exited ? st.ExitCode ?? 0 : 0, reason: exited ? exitReason(!!st.OOMKilled, st.ExitCode ?? 0) : '' };
}

/** containerStatus reads an app container from `docker inspect`. NotFound when unknown. */
export async function containerStatus(ctx: ShimContext, containerId: string): Promise<ContainerStatus> {
  const info = await inspectOwned(ctx, containerId, TYPE_CONTAINER, 'container');
  const dl = info.Config.Labels ?? {};
  const { labels, annotations } = fromDockerLabels(dl);
  const { state, startFailed, exitCode, reason } = criContainerState(info.State);
  const exited = state === 'CONTAINER_EXITED';
  const created = parseDockerTime(info.Created);
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
    createdAt: created,
    startedAt: state === 'CONTAINER_CREATED' || startFailed ? 0 : parseDockerTime(info.State.StartedAt),
    // Docker keeps no finish time for a failed start; its creation is when it failed, give or take the start call.
    finishedAt: startFailed ? created : exited ? parseDockerTime(info.State.FinishedAt) : 0,
    exitCode,
    image: { image: dl[IMAGE_LABEL] ?? info.Config.Image },
    imageRef: info.Image,
    reason,
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
