import type Docker from 'dockerode';
import type { NamespaceMode, PodSandboxMetadata, PodSandboxStatus } from '@mk8s/proto';
import { inspectOwned, netnsPath, sandboxState, type ShimContext } from './context.js';
import {
  NETWORK_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, RUNTIME_HANDLER_LABEL, SANDBOX_ATTEMPT_LABEL, TYPE_SANDBOX,
  fromDockerLabels, parseDockerTime,
} from './labels.js';

/** sandboxMetadata rebuilds the CRI metadata from Docker labels. */
export function sandboxMetadata(labels: Record<string, string>): PodSandboxMetadata {
  return {
    name: labels[POD_NAME_LABEL] ?? '',
    namespace: labels[POD_NAMESPACE_LABEL] ?? '',
    uid: labels[POD_UID_LABEL] ?? '',
    attempt: Number(labels[SANDBOX_ATTEMPT_LABEL] ?? 0),
  };
}

/**
 * sandboxIp returns the pod IP of a running CNI sandbox: from the cache, else (after a shim
 * restart) read from eth0 inside its netns.
 */
export async function sandboxIp(ctx: ShimContext, info: Docker.ContainerInspectInfo): Promise<string> {
  if (!info.State.Running || info.Config.Labels?.[NETWORK_LABEL] !== 'cni') return '';
  const cached = ctx.ips.get(info.Id);
  if (cached !== undefined) return cached;
  const r = await ctx.run('nsenter', [`--net=${netnsPath(info.State.Pid)}`, 'ip', '-o', '-4', 'addr', 'show', 'dev', 'eth0']);
  const ip = r.code === 0 ? (/inet (\d+\.\d+\.\d+\.\d+)/.exec(r.stdout)?.[1] ?? '') : '';
  if (ip) ctx.ips.set(info.Id, ip);
  return ip;
}

/** podSandboxStatus reads the sandbox from Docker. NotFound when unknown. */
export async function podSandboxStatus(ctx: ShimContext, podSandboxId: string): Promise<PodSandboxStatus> {
  const info = await inspectOwned(ctx, podSandboxId, TYPE_SANDBOX, 'pod sandbox');
  const labels = info.Config.Labels ?? {};
  const { labels: l, annotations } = fromDockerLabels(labels);
  const mode = (m: string | undefined): NamespaceMode => (m === 'host' ? 'NODE' : 'POD');
  const st: PodSandboxStatus = {
    id: info.Id,
    metadata: sandboxMetadata(labels),
    state: sandboxState(info.State.Status),
    createdAt: parseDockerTime(info.Created),
    linux: { namespaces: { options: { network: mode(info.HostConfig.NetworkMode), pid: mode(info.HostConfig.PidMode), ipc: mode(info.HostConfig.IpcMode) } } },
    labels: l,
    annotations,
    runtimeHandler: labels[RUNTIME_HANDLER_LABEL] ?? '',
  };
  const ip = await sandboxIp(ctx, info);
  if (ip) st.network = { ip };
  // A CNI sandbox without an IP lost its network setup (the shim died mid-RunPodSandbox): not
  // ready, so the kubelet replaces it instead of running containers without a network.
  else if (labels[NETWORK_LABEL] === 'cni') st.state = 'SANDBOX_NOTREADY';
  return st;
}
