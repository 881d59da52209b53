import type Docker from 'dockerode';
import { CriError, isNotFound, type ContainerConfig, type Mount, type PodSandboxConfig } from '@mk8s/proto';
import { inspectOwned, type ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';
import {
  CONTAINER_ATTEMPT_LABEL, CONTAINER_NAME_LABEL, IMAGE_LABEL, LOG_PATH_LABEL, NODE_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL,
  POD_UID_LABEL, SANDBOX_ID_LABEL, TYPE_CONTAINER, TYPE_LABEL, TYPE_SANDBOX, dockerName, toDockerLabels,
} from './labels.js';
import { createWithUniqueName } from './sandbox-run.js';

/** A bind in Docker's "src:dst[:opts]" form; Binds (unlike Mounts) create a missing host dir, as hostPath expects. */
export function bindSpec(m: Mount): string {
  const opts = [m.readonly ? 'ro' : 'rw'];
  if (m.propagation === 'PROPAGATION_HOST_TO_CONTAINER') opts.push('rslave');
  else if (m.propagation === 'PROPAGATION_BIDIRECTIONAL') opts.push('rshared');
  if (m.selinuxRelabel) opts.push('Z');
  return `${m.hostPath}:${m.containerPath}:${opts.join(',')}`;
}

/**
 * createContainer creates an app container that joins the sandbox's network and IPC namespaces
 * (and PID when the pod shares it). Requests and limits are already in Docker's units (the
 * kubelet converts: cpuShares from requests.cpu, cpuQuota/cpuPeriod from limits.cpu, memory
 * from limits.memory); swap is disabled by setting MemorySwap = Memory, so a limit means OOM.
 */
export async function createContainer(ctx: ShimContext, podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
  if (!config.metadata?.name) throw new CriError('InvalidArgument', 'container metadata name is required');
  if (!config.image?.image) throw new CriError('InvalidArgument', 'container image is required');
  // A sandbox this process started is known; any other one is inspected (owned by this node?).
  const cached = ctx.sandboxes.get(podSandboxId);
  const sandbox = cached ? { Id: podSandboxId, labels: cached } : await inspectOwned(ctx, podSandboxId, TYPE_SANDBOX, 'pod sandbox').then((i) => ({ Id: i.Id, labels: i.Config.Labels ?? {} }));
  const sl = sandbox.labels;
  const pod = { name: sl[POD_NAME_LABEL] ?? sandboxConfig.metadata?.name ?? '', namespace: sl[POD_NAMESPACE_LABEL] ?? '', uid: sl[POD_UID_LABEL] ?? '' };

  const res = config.linux?.resources ?? {};
  const sc = config.linux?.securityContext;
  const ns = sc?.namespaceOptions;
  const join = `container:${sandbox.Id}`;
  const hostConfig: Docker.HostConfig = {
    NetworkMode: join,
    IpcMode: join,
    PidMode: ns?.pid === 'POD' ? join : ns?.pid === 'NODE' ? 'host' : '',
    RestartPolicy: { Name: 'no' },
    Binds: (config.mounts ?? []).map(bindSpec),
    Privileged: sc?.privileged ?? false,
    ReadonlyRootfs: sc?.readonlyRootfs ?? false,
    ...(sc?.capabilities?.addCapabilities?.length ? { CapAdd: sc.capabilities.addCapabilities } : {}),
    ...(sc?.capabilities?.dropCapabilities?.length ? { CapDrop: sc.capabilities.dropCapabilities } : {}),
    ...(sc?.supplementalGroups?.length ? { GroupAdd: sc.supplementalGroups.map(String) } : {}),
    ...(res.cpuShares ? { CpuShares: res.cpuShares } : {}),
    ...(res.cpuQuota ? { CpuQuota: res.cpuQuota, CpuPeriod: res.cpuPeriod || 100_000 } : {}),
    ...(res.memoryLimitInBytes ? { Memory: res.memoryLimitInBytes, MemorySwap: res.memorySwapLimitInBytes || res.memoryLimitInBytes } : {}),
    ...(res.oomScoreAdj ? { OomScoreAdj: res.oomScoreAdj } : {}),
    ...(res.cpusetCpus ? { CpusetCpus: res.cpusetCpus } : {}),
    ...(res.cpusetMems ? { CpusetMems: res.cpusetMems } : {}),
  };
  const user = sc?.runAsUser ? `${sc.runAsUser.value}${sc.runAsGroup ? `:${sc.runAsGroup.value}` : ''}` : sc?.runAsUsername ?? '';
  const attempt = config.metadata.attempt ?? 0;
  const opts: Docker.ContainerCreateOptions = {
    name: dockerName(config.metadata.name, pod.name, pod.namespace, pod.uid, attempt),
    // Docker resolves the name itself (an absent image is its 404, NotFound): no inspect round trip.
    Image: config.image.image,
    Labels: toDockerLabels(config.labels, config.annotations, {
      [NODE_LABEL]: ctx.nodeName,
      [TYPE_LABEL]: TYPE_CONTAINER,
      [SANDBOX_ID_LABEL]: sandbox.Id,
      [POD_NAME_LABEL]: pod.name,
      [POD_NAMESPACE_LABEL]: pod.namespace,
      [POD_UID_LABEL]: pod.uid,
      [CONTAINER_NAME_LABEL]: config.metadata.name,
      [CONTAINER_ATTEMPT_LABEL]: String(attempt),
      [IMAGE_LABEL]: config.image.image,
      [LOG_PATH_LABEL]: config.logPath ?? '',
    }),
    Env: (config.envs ?? []).map((e) => `${e.key}=${e.value}`),
    ...(config.command?.length ? { Entrypoint: config.command } : {}),
    ...(config.args?.length ? { Cmd: config.args } : {}),
    ...(config.workingDir ? { WorkingDir: config.workingDir } : {}),
    ...(user ? { User: user } : {}),
    Tty: config.tty ?? false,
    OpenStdin: config.stdin ?? false,
    StdinOnce: config.stdinOnce ?? false,
    AttachStdin: false,
    HostConfig: hostConfig,
  };
  let c: Docker.Container;
  try {
    c = await createWithUniqueName(ctx, opts, `container ${config.metadata.name}`);
  } catch (err) {
    // The cached sandbox may have been removed behind this process's back.
    if (cached && isNotFound(err) && /no such container/i.test(err instanceof Error ? err.message : '')) ctx.sandboxes.delete(podSandboxId);
    throw err;
  }
  ctx.created.add(c.id);
  ctx.logger.debug({ pod: `${pod.namespace}/${pod.name}`, container: config.metadata.name, id: c.id }, 'Created container');
  return c.id;
}
