import type Docker from 'dockerode';
import type { Logger } from '@mk8s/component-base';
import { CriError, type ContainerState, type PodSandboxState } from '@mk8s/proto';
import type { CniNetwork } from './cni/cni.js';
import type { StatsReader } from './stats-reader.js';
import { NODE_LABEL, TYPE_LABEL } from './labels.js';
import { toCriError } from './docker-errors.js';

/** What every RPC implementation gets: the Docker client and the node's settings. */
export interface ShimContext {
  docker: Docker;
  nodeName: string;
  pauseImage: string;
  networkPlugin: 'cni' | 'none';
  /** Present when networkPlugin is 'cni'. */
  cni: CniNetwork | undefined;
  /** Sandbox id → pod IP; a cache only: after a restart IPs are read back from the netns. */
  ips: Map<string, string>;
  /**
   * Docker labels of the sandboxes this process started (a cache only, like ips): CreateContainer
   * of a pod's containers needs no inspect of its sandbox.
   */
  sandboxes: Map<string, Record<string, string>>;
  /** Containers this process created and has not started yet: StartContainer needs no inspect for them. */
  created: Set<string>;
  /** Containers whose start failed (Docker lists them as created): listed as exited, as their status says. */
  startFailed: Set<string>;
  logger: Logger;
  /** Samples containers and pods from their cgroups, with the caches that keep a scrape cheap and a CPU rate right. */
  stats: StatsReader;
  /** Runs a command (for nsenter); injected for tests. */
  run(cmd: string, args: string[]): Promise<{ code: number; stdout: string }>;
}

/**
 * inspectOwned inspects a container of this node of the given type; anything else (another
 * node's container, a sandbox asked for as a container) is NotFound.
 */
export async function inspectOwned(ctx: ShimContext, id: string, type: string, what: string): Promise<Docker.ContainerInspectInfo> {
  let info: Docker.ContainerInspectInfo;
  try {
    info = await ctx.docker.getContainer(id).inspect();
  } catch (err) {
    throw toCriError(err, `${what} ${id}`);
  }
  const labels = info.Config.Labels ?? {};
  if (labels[NODE_LABEL] !== ctx.nodeName || labels[TYPE_LABEL] !== type) throw new CriError('NotFound', `${what} ${id} not found`);
  return info;
}

/** listOwned lists (all states) this node's containers of type that carry every label in extra. */
export async function listOwned(ctx: ShimContext, type: string, extra: Record<string, string> = {}): Promise<Docker.ContainerInfo[]> {
  const label = [`${NODE_LABEL}=${ctx.nodeName}`, `${TYPE_LABEL}=${type}`, ...Object.entries(extra).map(([k, v]) => `${k}=${v}`)];
  try {
    return await ctx.docker.listContainers({ all: true, filters: { label } });
  } catch (err) {
    throw toCriError(err, 'list containers');
  }
}

/** Docker's State.Status → CRI container state. */
export function containerState(status: string): ContainerState {
  switch (status) {
    case 'created': return 'CONTAINER_CREATED';
    case 'running': case 'paused': case 'restarting': return 'CONTAINER_RUNNING';
    case 'exited': case 'dead': return 'CONTAINER_EXITED';
    default: return 'CONTAINER_UNKNOWN';
  }
}

/** A sandbox is ready exactly while its pause container runs. */
export const sandboxState = (status: string): PodSandboxState => (status === 'running' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY');

/** The netns path of a running container's PID 1 ('' when it is not running). */
export const netnsPath = (pid: number | undefined): string => (pid && pid > 0 ? `/proc/${pid}/ns/net` : '');
