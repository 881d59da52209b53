/**
 * FakeImageService: images in memory. `pullImage` succeeds only for references in `registry`
 * (what a reachable registry would hold); anything else fails as a real pull does here.
 */
import { createHash } from 'node:crypto';
import { CriError } from '../errors.js';
import { normalizeImageRef } from '../image-ref.js';
import type { ImageMethod, ImageService } from '../runtime-service.js';
import type { AuthConfig, Image, ImageFsInfo, ImageSpec, PodSandboxConfig } from '../types.js';

export interface FakeImageServiceOptions {
  /** Images present from the start. */
  images?: string[];
  /** Images a pull can fetch. */
  registry?: string[];
  /** @default Date.now */
  now?: () => number;
}

const imageId = (ref: string): string => `sha256:${createHash('sha256').update(normalizeImageRef(ref)).digest('hex')}`;

/** FakeImageService: an in-memory ImageService for kubelet unit tests. */
export class FakeImageService implements ImageService {
  readonly called: ImageMethod[] = [];
  readonly images = new Map<string, Image>();
  readonly registry: Set<string>;
  private readonly errors = new Map<ImageMethod, Error[]>();
  private readonly now: () => number;

  constructor(o: FakeImageServiceOptions = {}) {
    this.now = o.now ?? Date.now;
    this.registry = new Set((o.registry ?? []).map(normalizeImageRef));
    for (const ref of o.images ?? []) this.add(ref);
  }

  /** Makes ref present (as if pulled or built). */
  add(ref: string): Image {
    const tag = normalizeImageRef(ref);
    const img: Image = { id: imageId(tag), repoTags: [tag], repoDigests: [], size: 1024 * 1024 };
    this.images.set(img.id, img);
    return img;
  }

  /** The image that ref (tag or id) names, if present. */
  find(ref: string): Image | undefined {
    const tag = normalizeImageRef(ref);
    for (const img of this.images.values()) if (img.id === ref || img.repoTags.includes(tag)) return img;
    return undefined;
  }

  /** The next call of method rejects with err (once). */
  injectError(method: ImageMethod, err: Error): void {
    const q = this.errors.get(method) ?? [];
    q.push(err);
    this.errors.set(method, q);
  }

  private record(method: ImageMethod): void {
    this.called.push(method);
    const err = this.errors.get(method)?.shift();
    if (err) throw err;
  }

  async listImages(filter?: ImageSpec): Promise<Image[]> {
    this.record('listImages');
    const all = [...this.images.values()];
    if (!filter?.image) return all.map((i) => structuredClone(i));
    const one = this.find(filter.image);
    return one ? [structuredClone(one)] : [];
  }

  async imageStatus(image: ImageSpec): Promise<Image | undefined> {
    this.record('imageStatus');
    const img = this.find(image.image);
    return img && structuredClone(img);
  }

  async pullImage(image: ImageSpec, _auth?: AuthConfig, _sandboxConfig?: PodSandboxConfig): Promise<string> {
    this.record('pullImage');
    const present = this.find(image.image);
    if (present) return present.id;
    if (!this.registry.has(normalizeImageRef(image.image))) {
      throw new CriError('NotFound', `pull access denied for ${image.image}, repository does not exist or may require 'docker login'`);
    }
    return this.add(image.image).id;
  }

  async removeImage(image: ImageSpec): Promise<void> {
    this.record('removeImage');
    const img = this.find(image.image);
    if (img) this.images.delete(img.id);
  }

  async imageFsInfo(): Promise<ImageFsInfo> {
    this.record('imageFsInfo');
    const used = [...this.images.values()].reduce((n, i) => n + i.size, 0);
    const fs = { timestamp: this.now() * 1e6, fsId: { mountpoint: '/var/lib/fake' }, usedBytes: { value: used }, inodesUsed: { value: this.images.size } };
    return { imageFilesystems: [fs], containerFilesystems: [] };
  }
}
