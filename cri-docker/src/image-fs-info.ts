import type { ImageFsInfo } from '@mk8s/proto';
import type { ShimContext } from './context.js';
import { toCriError } from './docker-errors.js';

/** imageFsInfo: bytes used by images under Docker's root dir (sum of image sizes). */
export async function imageFsInfo(ctx: ShimContext): Promise<ImageFsInfo> {
  try {
    const [info, images] = await Promise.all([ctx.docker.info() as Promise<{ DockerRootDir?: string }>, ctx.docker.listImages()]);
    const used = images.reduce((n, i) => n + (i.Size ?? 0), 0);
    const fs = { timestamp: Date.now() * 1e6, fsId: { mountpoint: `${info.DockerRootDir ?? '/var/lib/docker'}` }, usedBytes: { value: used }, inodesUsed: { value: images.length } };
    return { imageFilesystems: [fs], containerFilesystems: [] };
  } catch (err) {
    throw toCriError(err, 'image fs info');
  }
}
