/**
 * DockerRuntimeService and DockerImageService implement the CRI promise interfaces on Docker;
 * each method is one file (sandbox-run.ts, container-create.ts, ...). They hold no state of their
 * own beyond the IP cache: everything is read from Docker labels, so a restarted shim resumes.
 */
import type {
  AuthConfig, Container, ContainerConfig, ContainerFilter, ContainerLogsOptions, ContainerStats, ContainerStatsFilter, PodSandboxStats, PodSandboxStatsFilter,
  ContainerStatus, ExecIO, ExecRequest, ExecSyncResult, Image, ImageFsInfo, ImageService, ImageSpec, LogChunk, PodSandbox,
  PodSandboxConfig, PodSandboxFilter, PodSandboxStatus, RuntimeConfig, RuntimeService, RuntimeStatus, VersionInfo,
} from '@mk8s/proto';
import type { ShimContext } from './context.js';
import { version } from './version.js';
import { runPodSandbox } from './sandbox-run.js';
import { stopPodSandbox } from './sandbox-stop.js';
import { removePodSandbox } from './sandbox-remove.js';
import { podSandboxStatus } from './sandbox-status.js';
import { listPodSandbox } from './sandbox-list.js';
import { createContainer } from './container-create.js';
import { startContainer } from './container-start.js';
import { stopContainer } from './container-stop.js';
import { removeContainer } from './container-remove.js';
import { listContainers } from './container-list.js';
import { containerStatus } from './container-status.js';
import { exec, execSync } from './exec.js';
import { attach } from './container-attach.js';
import { containerLogs, reopenContainerLog } from './container-logs.js';
import { containerStats, listContainerStats } from './container-stats.js';
import { listPodSandboxStats, podSandboxStats } from './sandbox-stats.js';
import { status, updateRuntimeConfig } from './runtime-status.js';
import { listImages } from './image-list.js';
import { imageStatus } from './image-status.js';
import { pullImage } from './image-pull.js';
import { removeImage } from './image-remove.js';
import { imageFsInfo } from './image-fs-info.js';

export class DockerRuntimeService implements RuntimeService {
  constructor(private readonly ctx: ShimContext) {}
  version(): Promise<VersionInfo> { return version(this.ctx); }
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string> { return runPodSandbox(this.ctx, config, runtimeHandler); }
  stopPodSandbox(id: string): Promise<void> { return stopPodSandbox(this.ctx, id); }
  removePodSandbox(id: string): Promise<void> { return removePodSandbox(this.ctx, id); }
  podSandboxStatus(id: string): Promise<PodSandboxStatus> { return podSandboxStatus(this.ctx, id); }
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> { return listPodSandbox(this.ctx, filter); }
  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    return createContainer(this.ctx, podSandboxId, config, sandboxConfig);
  }
  startContainer(id: string): Promise<void> { return startContainer(this.ctx, id); }
  stopContainer(id: string, timeoutSeconds: number): Promise<void> { return stopContainer(this.ctx, id, timeoutSeconds); }
  removeContainer(id: string): Promise<void> { return removeContainer(this.ctx, id); }
  listContainers(filter?: ContainerFilter): Promise<Container[]> { return listContainers(this.ctx, filter); }
  containerStatus(id: string): Promise<ContainerStatus> { return containerStatus(this.ctx, id); }
  execSync(id: string, cmd: string[], timeoutSeconds?: number): Promise<ExecSyncResult> { return execSync(this.ctx, id, cmd, timeoutSeconds); }
  exec(req: ExecRequest, io: ExecIO): Promise<{ exitCode: number }> { return req.cmd.length ? exec(this.ctx, req, io) : attach(this.ctx, req, io); }
  containerLogs(id: string, opts?: ContainerLogsOptions, signal?: AbortSignal): AsyncIterable<LogChunk> { return containerLogs(this.ctx, id, opts, signal); }
  reopenContainerLog(id: string): Promise<void> { return reopenContainerLog(this.ctx, id); }
  containerStats(id: string): Promise<ContainerStats> { return containerStats(this.ctx, id); }
  listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]> { return listContainerStats(this.ctx, filter); }
  podSandboxStats(id: string): Promise<PodSandboxStats> { return podSandboxStats(this.ctx, id); }
  listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]> { return listPodSandboxStats(this.ctx, filter); }
  updateRuntimeConfig(config: RuntimeConfig): Promise<void> { return updateRuntimeConfig(this.ctx, config); }
  status(): Promise<RuntimeStatus> { return status(this.ctx); }
}

export class DockerImageService implements ImageService {
  constructor(private readonly ctx: ShimContext) {}
  listImages(filter?: ImageSpec): Promise<Image[]> { return listImages(this.ctx, filter); }
  imageStatus(image: ImageSpec): Promise<Image | undefined> { return imageStatus(this.ctx, image); }
  pullImage(image: ImageSpec, _auth?: AuthConfig, _sandboxConfig?: PodSandboxConfig): Promise<string> { return pullImage(this.ctx, image); }
  removeImage(image: ImageSpec): Promise<void> { return removeImage(this.ctx, image); }
  imageFsInfo(): Promise<ImageFsInfo> { return imageFsInfo(this.ctx); }
}
