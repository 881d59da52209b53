/**
 * The CRI objects as the kubelet and the runtimes see them: plain TypeScript shapes that mirror
 * cri.proto's messages (same camelCase field names) without the generated code's nulls, Longs
 * and wrapper messages on filters. Timestamps are nanoseconds since the epoch (as upstream);
 * use `nsToMs` to get a JS time.
 */

export type Labels = Record<string, string>;

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type MountPropagation = 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';

/** A protobuf wrapper (UInt64Value, Int64Value): present means "known", even when 0. */
export interface Value { value: number }

export interface VersionInfo {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

/** Identifies a sandbox; (name, namespace, uid, attempt) is unique on a node. */
export interface PodSandboxMetadata { name: string; uid: string; namespace: string; attempt: number }
export interface DNSConfig { servers?: string[]; searches?: string[]; options?: string[] }
export interface PortMapping { protocol?: Protocol; containerPort?: number; hostPort?: number; hostIp?: string }
/** A host path bind-mounted into the container (the kubelet prepares emptyDir/configMap/secret dirs). */
export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  selinuxRelabel?: boolean;
  propagation?: MountPropagation;
}
export interface NamespaceOption { network?: NamespaceMode; pid?: NamespaceMode; ipc?: NamespaceMode }

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  logDirectory?: string;
  dnsConfig?: DNSConfig;
  portMappings?: PortMapping[];
  labels?: Labels;
  annotations?: Labels;
  linux?: {
    cgroupParent?: string;
    securityContext?: { namespaceOptions?: NamespaceOption; privileged?: boolean };
    sysctls?: Labels;
  };
}

export interface PodSandboxNetworkStatus { ip: string; additionalIps?: { ip: string }[] }

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  /** Absent or ip '' when the sandbox has no network (network plugin none, or stopped). */
  network?: PodSandboxNetworkStatus;
  linux?: { namespaces?: { options?: NamespaceOption } };
  labels: Labels;
  annotations: Labels;
  runtimeHandler?: string;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
  runtimeHandler?: string;
}

/** All set fields must match. */
export interface PodSandboxFilter { id?: string; state?: PodSandboxState; labelSelector?: Labels }

export interface ImageSpec { image: string; annotations?: Labels; userSpecifiedImage?: string }
export interface KeyValue { key: string; value: string }

/** What Docker enforces: cpuShares ← requests.cpu; cpuQuota/cpuPeriod ← limits.cpu; memory ← limits.memory. */
export interface LinuxContainerResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  oomScoreAdj?: number;
  cpusetCpus?: string;
  cpusetMems?: string;
  memorySwapLimitInBytes?: number;
}

export interface LinuxContainerSecurityContext {
  capabilities?: { addCapabilities?: string[]; dropCapabilities?: string[] };
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  runAsUser?: Value;
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  runAsGroup?: Value;
}

export interface ContainerMetadata { name: string; attempt: number }

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  /** Entrypoint (Kubernetes `command`); empty = the image's. */
  command?: string[];
  /** Cmd (Kubernetes `args`); empty = the image's. */
  args?: string[];
  workingDir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  labels?: Labels;
  annotations?: Labels;
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: { resources?: LinuxContainerResources; securityContext?: LinuxContainerSecurityContext };
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  image: ImageSpec;
  /** The image id the container runs. */
  imageRef: string;
  state: ContainerState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
}

export interface ContainerStatus {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  state: ContainerState;
  createdAt: number;
  /** 0 until started. */
  startedAt: number;
  /** 0 until exited. */
  finishedAt: number;
  exitCode: number;
  image: ImageSpec;
  imageRef: string;
  /** When exited: 'Completed' (exit 0), 'Error', 'OOMKilled', or 'StartError' (its process never ran; exit code 128). */
  reason: string;
  message: string;
  labels: Labels;
  annotations: Labels;
  mounts: Mount[];
  logPath: string;
  resources?: { linux?: LinuxContainerResources };
}

/** All set fields must match. */
export interface ContainerFilter { id?: string; state?: ContainerState; podSandboxId?: string; labelSelector?: Labels }

export interface ExecSyncResult { stdout: Buffer; stderr: Buffer; exitCode: number }

/** Starts a streaming exec. stdout/stderr default to true, stdin and tty to false. */
export interface ExecRequest {
  containerId: string;
  cmd: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}

export interface TerminalSize { width: number; height: number }

/** One message from the client side of a streaming exec. */
export type ExecInput = { stdin: Buffer } | { resize: TerminalSize } | { closeStdin: true };

/** The streams of an exec session. */
export interface ExecIO {
  /** stdin chunks, terminal resizes and the end of stdin; ending the iterable closes stdin. */
  input?: AsyncIterable<ExecInput>;
  onStdout?(chunk: Buffer): void;
  onStderr?(chunk: Buffer): void;
  /** Aborting detaches from the process (which may keep running) and rejects. */
  signal?: AbortSignal;
}

export interface ContainerLogsOptions {
  follow?: boolean;
  /** Only the last N lines; undefined = all. */
  tailLines?: number;
  /** Prefix each line with an RFC3339Nano timestamp and a space. */
  timestamps?: boolean;
  /** Only lines at or after this time, in nanoseconds since the epoch. */
  sinceTime?: number;
}

export interface LogChunk { stream: 'stdout' | 'stderr'; data: Buffer }

export interface ContainerAttributes { id: string; metadata: ContainerMetadata; labels: Labels; annotations: Labels }
export interface CpuUsage { timestamp: number; usageCoreNanoSeconds?: Value; usageNanoCores?: Value }
export interface MemoryUsage {
  timestamp: number;
  workingSetBytes?: Value;
  availableBytes?: Value;
  usageBytes?: Value;
  rssBytes?: Value;
  pageFaults?: Value;
  majorPageFaults?: Value;
}
export interface FilesystemUsage { timestamp: number; fsId?: { mountpoint: string }; usedBytes?: Value; inodesUsed?: Value }
export interface ContainerStats { attributes: ContainerAttributes; cpu?: CpuUsage; memory?: MemoryUsage; writableLayer?: FilesystemUsage }
/** All set fields must match. */
export interface ContainerStatsFilter { id?: string; podSandboxId?: string; labelSelector?: Labels }
/** All set fields must match. */
export interface PodSandboxStatsFilter { id?: string; labelSelector?: Labels }
export interface PodSandboxAttributes { id: string; metadata: PodSandboxMetadata; labels: Labels; annotations: Labels }
/** Cumulative counters of one interface in the pod's network namespace. */
export interface NetworkInterfaceUsage { name: string; rxBytes?: Value; rxErrors?: Value; txBytes?: Value; txErrors?: Value }
export interface NetworkUsage { timestamp: number; defaultInterface?: NetworkInterfaceUsage; interfaces?: NetworkInterfaceUsage[] }
/** How many processes the pod runs (all its containers). */
export interface ProcessUsage { timestamp: number; processCount?: Value }
/**
 * The pod's usage on Linux: cpu and memory summed over its containers' cgroups (the pause
 * container included), network of its namespace, process count, each running container's stats.
 */
export interface LinuxPodSandboxStats {
  cpu?: CpuUsage;
  memory?: MemoryUsage;
  network?: NetworkUsage;
  process?: ProcessUsage;
  containers?: ContainerStats[];
}
export interface PodSandboxStats { attributes: PodSandboxAttributes; linux?: LinuxPodSandboxStats }

export interface RuntimeConfig { networkConfig?: { podCidr: string } }
export interface RuntimeCondition { type: 'RuntimeReady' | 'NetworkReady' | string; status: boolean; reason: string; message: string }
export interface RuntimeStatus { conditions: RuntimeCondition[] }

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  uid?: Value;
  username?: string;
  spec?: ImageSpec;
  pinned?: boolean;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface ImageFsInfo { imageFilesystems: FilesystemUsage[]; containerFilesystems: FilesystemUsage[] }

/** nsToMs converts a CRI timestamp (ns since the epoch) to JS milliseconds. */
export const nsToMs = (ns: number): number => Math.floor(ns / 1e6);
/** msToNs converts JS milliseconds to a CRI timestamp. */
export const msToNs = (ms: number): number => ms * 1e6;
