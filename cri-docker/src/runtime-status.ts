import type { RuntimeConfig, RuntimeStatus } from '@mk8s/proto';
import type { ShimContext } from './context.js';

/**
 * updateRuntimeConfig: the kubelet passes node.spec.podCIDR; with the cni plugin the shim writes
 * its bridge config from it (unless another config in the conf dir takes precedence).
 */
export async function updateRuntimeConfig(ctx: ShimContext, config: RuntimeConfig): Promise<void> {
  const podCidr = config.networkConfig?.podCidr;
  if (!podCidr || ctx.networkPlugin !== 'cni' || !ctx.cni) return;
  if (await ctx.cni.writeOwnConfig(podCidr)) ctx.logger.info({ podCidr }, 'Wrote CNI config for pod CIDR');
}

/** status: RuntimeReady while dockerd answers; NetworkReady once a CNI config exists (or plugin none). */
export async function status(ctx: ShimContext): Promise<RuntimeStatus> {
  let runtimeReady = true;
  let runtimeMessage = '';
  try {
    await ctx.docker.ping();
  } catch (err) {
    runtimeReady = false;
    runtimeMessage = `docker: ${err instanceof Error ? err.message : String(err)}`;
  }
  let networkReady = true;
  let networkMessage = '';
  if (ctx.networkPlugin === 'cni') {
    const conf = await ctx.cni?.load();
    if (!conf) { networkReady = false; networkMessage = 'network plugin is not ready: cni config uninitialized'; }
  }
  return {
    conditions: [
      { type: 'RuntimeReady', status: runtimeReady, reason: runtimeReady ? '' : 'DockerDaemonNotReady', message: runtimeMessage },
      { type: 'NetworkReady', status: networkReady, reason: networkReady ? '' : 'NetworkPluginNotReady', message: networkMessage },
    ],
  };
}
