import type Docker from 'dockerode';
import { CriError, type PodSandboxConfig } from '@mk8s/proto';
import { inspectOwned, netnsPath, type ShimContext } from './context.js';
import { dockerStatus, toCriError } from './docker-errors.js';
import {
  CONTAINER_NAME_LABEL, NETWORK_LABEL, NODE_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, RUNTIME_HANDLER_LABEL,
  SANDBOX_ATTEMPT_LABEL, SANDBOX_CONTAINER_NAME, TYPE_LABEL, TYPE_SANDBOX, dockerName, toDockerLabels,
} from './labels.js';
import { removeQuietly } from './container-remove.js';

/**
 * runPodSandbox starts a pause container with no network (`--network none`), then asks CNI to
 * give its netns an interface and IP. IPC is shareable so app containers can join it. When the
 * network setup fails the pause container is removed again, so a retry starts clean.
 */
export async function runPodSandbox(ctx: ShimContext, config: PodSandboxConfig, runtimeHandler = ''): Promise<string> {
  const md = config.metadata;
  if (!md?.name || !md.namespace || !md.uid) throw new CriError('InvalidArgument', 'sandbox metadata name, namespace and uid are required');
  const ns = config.linux?.securityContext?.namespaceOptions;
  const hostNetwork = ns?.network === 'NODE';
  const network = hostNetwork ? 'host' : ctx.networkPlugin;
  const labels = toDockerLabels(config.labels, config.annotations, {
    [NODE_LABEL]: ctx.nodeName,
    [TYPE_LABEL]: TYPE_SANDBOX,
    [POD_NAME_LABEL]: md.name,
    [POD_NAMESPACE_LABEL]: md.namespace,
    [POD_UID_LABEL]: md.uid,
    [CONTAINER_NAME_LABEL]: SANDBOX_CONTAINER_NAME,
    [SANDBOX_ATTEMPT_LABEL]: String(md.attempt ?? 0),
    [RUNTIME_HANDLER_LABEL]: runtimeHandler,
    [NETWORK_LABEL]: network,
  });
  const dns = config.dnsConfig;
  const hostConfig: Docker.HostConfig = {
    // Docker's "host" is the machine's netns, not the node's: hostNetwork pods see the host.
    NetworkMode: hostNetwork ? 'host' : 'none',
    IpcMode: ns?.ipc === 'NODE' ? 'host' : 'shareable',
    PidMode: ns?.pid === 'NODE' ? 'host' : '',
    RestartPolicy: { Name: 'no' },
    Privileged: config.linux?.securityContext?.privileged ?? false,
    ...(dns?.servers?.length ? { Dns: dns.servers } : {}),
    ...(dns?.searches?.length ? { DnsSearch: dns.searches } : {}),
    ...(dns?.options?.length ? { DnsOptions: dns.options } : {}),
    ...(config.linux?.sysctls && Object.keys(config.linux.sysctls).length ? { Sysctls: config.linux.sysctls } : {}),
  };
  const opts: Docker.ContainerCreateOptions = {
    name: dockerName(SANDBOX_CONTAINER_NAME, md.name, md.namespace, md.uid, md.attempt ?? 0),
    Image: ctx.pauseImage,
    Labels: labels,
    HostConfig: hostConfig,
    ...(config.hostname && !hostNetwork ? { Hostname: config.hostname } : {}),
  };
  // Where the time goes (Docker vs CNI), logged with the result: the pod startup bench reads it.
  const t0 = performance.now();
  const ms: Record<string, number> = {};
  const lap = (step: string) => { ms[step] = Math.round(performance.now() - t0 - Object.values(ms).reduce((a, b) => a + b, 0)); };
  const container = await createWithUniqueName(ctx, opts, 'pod sandbox');
  lap('createMs');
  const id = container.id;
  try {
    await container.start();
    lap('startMs');
    if (network === 'cni') {
      const info = await inspectOwned(ctx, id, TYPE_SANDBOX, 'pod sandbox');
      lap('inspectMs');
      if (!ctx.cni) throw new CriError('FailedPrecondition', 'network plugin cni is not configured');
      const { ip } = await ctx.cni.add(id, netnsPath(info.State.Pid), { namespace: md.namespace, name: md.name, uid: md.uid });
      lap('cniMs');
      ctx.ips.set(id, ip);
    }
    ctx.sandboxes.set(id, labels);
  } catch (err) {
    ctx.logger.warn({ err, pod: `${md.namespace}/${md.name}`, sandbox: id }, 'Could not start pod sandbox, removing it');
    if (network === 'cni' && ctx.cni) await ctx.cni.del(id, '', { namespace: md.namespace, name: md.name, uid: md.uid }).catch(() => undefined);
    await removeQuietly(ctx, id);
    throw toCriError(err, `start pod sandbox for ${md.namespace}/${md.name}`);
  }
  ctx.logger.info({ pod: `${md.namespace}/${md.name}`, sandbox: id, ip: ctx.ips.get(id), ...ms }, 'Started pod sandbox');
  return id;
}

/**
 * createWithUniqueName creates a container; when the k8s_ name is taken (a leftover of an earlier
 * run, or another node's container with the same pod identity) it retries with a random suffix.
 */
export async function createWithUniqueName(ctx: ShimContext, opts: Docker.ContainerCreateOptions, what: string): Promise<Docker.Container> {
  try {
    return await ctx.docker.createContainer(opts);
  } catch (err) {
    if (dockerStatus(err) !== 409) throw toCriError(err, `create ${what}`);
  }
  try {
    return await ctx.docker.createContainer({ ...opts, name: `${opts.name ?? 'k8s'}_${Math.random().toString(16).slice(2, 10)}` });
  } catch (err) {
    throw toCriError(err, `create ${what}`);
  }
}
