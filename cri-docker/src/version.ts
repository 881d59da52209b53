import type { VersionInfo } from '@mk8s/proto';
import type { ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';

/** The CRI API version this shim speaks. */
export const CRI_API_VERSION = 'v1';

export async function version(ctx: ShimContext): Promise<VersionInfo> {
  try {
    const v = await ctx.docker.version();
    return { version: '0.1.0', runtimeName: 'docker', runtimeVersion: v.Version, runtimeApiVersion: CRI_API_VERSION };
  } catch (err) {
    throw toCriError(err, 'docker version');
  }
}
