import type Docker from 'dockerode';
import type { Image, ImageSpec } from '@mk8s/proto';
import type { ShimContext } from './context.js';
import { dockerStatus, toCriError } from './docker-errors.js';

/** toCriImage converts `docker image inspect` or a list entry to a CRI Image. */
export function toCriImage(i: { Id: string; RepoTags?: string[] | null | undefined; RepoDigests?: string[] | null | undefined; Size: number }, user = ''): Image {
  const img: Image = { id: i.Id, repoTags: (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>'), repoDigests: i.RepoDigests ?? [], size: i.Size };
  if (/^\d+$/.test(user)) img.uid = { value: Number(user) };
  else if (user) img.username = user.split(':')[0] ?? '';
  return img;
}

/** inspectImage returns Docker's image, or undefined when absent. */
export async function inspectImage(ctx: ShimContext, ref: string): Promise<Docker.ImageInspectInfo | undefined> {
  try {
    return await ctx.docker.getImage(ref).inspect();
  } catch (err) {
    if (dockerStatus(err) === 404) return undefined;
    throw toCriError(err, `image "${ref}"`);
  }
}

/** imageStatus: the image when present, undefined (not an error) when absent. */
export async function imageStatus(ctx: ShimContext, image: ImageSpec): Promise<Image | undefined> {
  const i = await inspectImage(ctx, image.image);
  return i && toCriImage(i, i.Config?.User ?? '');
}
