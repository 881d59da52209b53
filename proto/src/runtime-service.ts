/**
 * The promise interfaces of the CRI (cri-api `services.go`). The kubelet codes against these;
 * the Docker shim implements them; `RemoteRuntimeService` carries them over gRPC and
 * `FakeRuntimeService` (./testing) keeps them in memory. The conformance suite
 * (`defineRuntimeServiceConformance`) pins every implementation to the same behaviour.
 *
 * All methods may be called concurrently. Errors are `CriError`s (test with `isNotFound(err)`
 * etc., never by message text).
 */
import type {
  Container, ContainerConfig, ContainerFilter, ContainerLogsOptions, ContainerStats, ContainerStatsFilter,
  PodSandboxStats, PodSandboxStatsFilter, ContainerStatus, ExecIO, ExecRequest, ExecSyncResult, AuthConfig, Image, ImageFsInfo, ImageSpec, LogChunk,
  PodSandbox, PodSandboxConfig, PodSandboxFilter, PodSandboxStatus, RuntimeConfig, RuntimeStatus, VersionInfo,
} from './types.js';

/** RuntimeService manages pod sandboxes and containers on one node. */
export interface RuntimeService {
  /** Runtime name/version and CRI API version. Fails only when the runtime is unreachable. */
  version(): Promise<VersionInfo>;

  /**
   * Creates and starts a sandbox (pause container + network) and returns its id. On success it is
   * SANDBOX_READY with an IP (when a network plugin is configured). A failed network setup tears
   * the sandbox down again and rejects; the caller retries. Not idempotent: each call makes a new
   * sandbox (the kubelet bumps metadata.attempt).
   */
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string>;
  /**
   * Force-stops all containers of the sandbox, tears its network down and stops it.
   * Idempotent: a stopped or unknown sandbox is not an error.
   */
  stopPodSandbox(podSandboxId: string): Promise<void>;
  /** Removes the sandbox and its containers (stopping them first). Idempotent: unknown is fine. */
  removePodSandbox(podSandboxId: string): Promise<void>;
  /** The sandbox's status. Rejects NotFound when unknown. */
  podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus>;
  /** The sandboxes of this node matching every set filter field. */
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]>;

  /**
   * Creates a container in a sandbox (CONTAINER_CREATED) and returns its id. Rejects NotFound
   * when the sandbox or the image is unknown. Not idempotent.
   */
  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>;
  /** Starts a created container. NotFound if unknown; FailedPrecondition unless CONTAINER_CREATED. */
  startContainer(containerId: string): Promise<void>;
  /**
   * SIGTERM, then SIGKILL after timeoutSeconds (0 = at once). Resolves when the container has
   * exited. Idempotent for exited containers; NotFound if unknown.
   */
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void>;
  /** Removes a container, force-stopping it if running. Idempotent: unknown is fine. */
  removeContainer(containerId: string): Promise<void>;
  /** The containers of this node matching every set filter field. */
  listContainers(filter?: ContainerFilter): Promise<Container[]>;
  /** The container's status. Rejects NotFound when unknown. */
  containerStatus(containerId: string): Promise<ContainerStatus>;

  /**
   * Runs cmd in a running container, collecting its output. A non-zero exit code resolves;
   * DeadlineExceeded after timeoutSeconds (0 = none); NotFound if unknown; FailedPrecondition
   * if not running.
   */
  execSync(containerId: string, cmd: string[], timeoutSeconds?: number): Promise<ExecSyncResult>;
  /**
   * Runs a command with streams (kubectl exec [-it]); resolves with its exit code once the
   * process has exited and all output was delivered. Errors as for execSync. An empty `cmd`
   * attaches to the container's main process instead (CRI Attach, kubectl attach): output from
   * now on until that process exits, stdin only if the container was created with stdin; it
   * resolves with exit code 0 (upstream's attach reports success, not the process's code).
   */
  exec(req: ExecRequest, io: ExecIO): Promise<{ exitCode: number }>;
  /**
   * The container's logs (running or exited) as chunks of bytes. With follow, the iterable
   * continues until the container exits or the signal aborts. Rejects NotFound when unknown.
   */
  containerLogs(containerId: string, opts?: ContainerLogsOptions, signal?: AbortSignal): AsyncIterable<LogChunk>;
  /** Reopens the log file (a no-op for Docker). NotFound if unknown, FailedPrecondition if not running. */
  reopenContainerLog(containerId: string): Promise<void>;

  /**
   * One sample of the container's usage, read from its cgroup: cumulative CPU time and, from the
   * runtime's earlier samples of it, usageNanoCores (CRI/cadvisor semantics: the rate between two
   * cumulative samples at least a second apart; unset on the first); memory working set (usage
   * minus inactive file cache), RSS, page faults; the writable layer's bytes and inodes.
   * NotFound if unknown. Safe to call concurrently.
   */
  containerStats(containerId: string): Promise<ContainerStats>;
  /** One sample (as containerStats) for every running container matching the filter; one that cannot be read is left out. */
  listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]>;
  /**
   * One sample of a ready sandbox: linux.cpu and linux.memory (its containers summed, the pause
   * container included), linux.network (its namespace's interfaces, absent when unreadable),
   * linux.process and linux.containers (each running container, as containerStats). NotFound if
   * the sandbox is unknown or not ready.
   */
  podSandboxStats(podSandboxId: string): Promise<PodSandboxStats>;
  /**
   * One sample (as podSandboxStats) for every ready sandbox matching the filter. Called by the
   * kubelet's /stats/summary, /metrics/resource and /metrics/cadvisor on each scrape; safe to call
   * concurrently; never fails for one sandbox's sake (an unreadable part is left unset).
   */
  listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]>;

  /** Passes the node's pod CIDR (the shim writes its CNI config from it). Idempotent. */
  updateRuntimeConfig(config: RuntimeConfig): Promise<void>;
  /** RuntimeReady and NetworkReady conditions. */
  status(): Promise<RuntimeStatus>;
}

/** ImageService manages images on one node. All methods may be called concurrently. */
export interface ImageService {
  /** Images present, optionally only those matching filter.image. */
  listImages(filter?: ImageSpec): Promise<Image[]>;
  /** The image when present, undefined when not (not an error). */
  imageStatus(image: ImageSpec): Promise<Image | undefined>;
  /**
   * Pulls an image and returns its id. Idempotent. Rejects (NotFound or Unavailable) when it
   * cannot be pulled; the kubelet reports ErrImagePull.
   */
  pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig): Promise<string>;
  /** Removes an image. Idempotent; FailedPrecondition while a container uses it. */
  removeImage(image: ImageSpec): Promise<void>;
  /** Usage of the filesystems holding images and writable layers. */
  imageFsInfo(): Promise<ImageFsInfo>;
}

/** Method names of RuntimeService, for fakes' `called` lists and error injection. */
export type RuntimeMethod = {
  [K in keyof RuntimeService]: RuntimeService[K] extends (...args: never[]) => unknown ? K : never
}[keyof RuntimeService];
/** Method names of ImageService. */
export type ImageMethod = keyof ImageService;
