/**
 * ImageManager (upstream kuberuntime `images/image_manager.go` `EnsureImageExists`): makes sure a
 * container's image is on the node per its imagePullPolicy before the container is created, with
 * a per pod × image pull back-off (ErrImagePull, then ImagePullBackOff: 10 s doubling to 5 min).
 * Its answer is an image id, or the waiting reason and message the container shows; Events as
 * upstream (Pulling, Pulled, Failed, BackOff, ErrImageNeverPull, InspectFailed).
 */
import type { Clock } from '@mk8s/component-base';
import { Backoff, type EventRecorder } from '@mk8s/client';
import type { Container, Pod } from '@mk8s/api';
import { normalizeImageRef, type Image, type ImageService, type PodSandboxConfig } from '@mk8s/proto';
import type { Waiting } from './status.js';

/** The pull policy in effect (API defaulting: Always for :latest, else IfNotPresent). */
export const pullPolicyOf = (c: Container, image: string): string => c.imagePullPolicy ?? (image.endsWith(':latest') ? 'Always' : 'IfNotPresent');

// Docker's reference grammar (distribution/reference): [domain/]path[:tag][@digest], path lowercase.
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const DOMAIN = '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?';
const REFERENCE = new RegExp(`^${DOMAIN}${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`);

/** Why image is not a valid reference (upstream's "invalid reference format" text), or undefined. */
export function invalidImageReason(image: string): string | undefined {
  if (!image) return 'invalid reference format: empty image name';
  if (REFERENCE.test(image)) return undefined;
  const path = image.split('@')[0]!.replace(/:[\w][\w.-]*$/, '');
  return path !== path.toLowerCase() && REFERENCE.test(image.toLowerCase()) ? `invalid reference format: repository name (${path}) must be lowercase` : 'invalid reference format';
}

export type EnsureImageResult = { imageRef: string } | { waiting: Waiting; requeueAfterMs?: number };

export interface ImageManagerOptions {
  images: ImageService;
  recorder: EventRecorder;
  clock: Clock;
  /** @default 10_000 */
  backoffInitialMs?: number;
  /** @default 300_000 */
  backoffMaxMs?: number;
}

export class ImageManager {
  readonly backoff: Backoff;
  constructor(private readonly o: ImageManagerOptions) {
    this.backoff = new Backoff({ clock: o.clock, initialMs: o.backoffInitialMs ?? 10_000, maxMs: o.backoffMaxMs ?? 300_000 });
  }

  /** Asks whether image is present (read only; `ensureImageExists` may be handed the answer). */
  imageStatus(image: string): Promise<Image | undefined> { return this.o.images.imageStatus({ image: normalizeImageRef(image) }); }

  /**
   * Ensures c's image per its pull policy. `present` is an imageStatus answer asked for earlier
   * in the same sync (while the sandbox started). Never rejects for a pull failure (that is a
   * waiting reason); rejects when the image service cannot be asked at all.
   */
  async ensureImageExists(pod: Pod, c: Container, sandbox: PodSandboxConfig, present?: Promise<Image | undefined>): Promise<EnsureImageResult> {
    const raw = c.image ?? '';
    const invalid = invalidImageReason(raw.trim());
    if (invalid) {
      const message = `Failed to apply default image tag "${raw}": couldn't parse image name "${raw}": ${invalid}`;
      this.o.recorder.event(pod, 'Warning', 'InspectFailed', message);
      return { waiting: { reason: 'InvalidImageName', message } };
    }
    const image = normalizeImageRef(raw);
    const policy = pullPolicyOf(c, image);
    const key = `${pod.metadata?.uid}/${image}`;
    const found = policy !== 'Always' ? await (present ?? this.o.images.imageStatus({ image })) : undefined;
    if (found) {
      this.o.recorder.event(pod, 'Normal', 'Pulled', 'Container image "%s" already present on machine', raw);
      return { imageRef: found.id };
    }
    if (policy === 'Never') {
      const message = `Container image "${raw}" is not present with pull policy of Never`;
      this.o.recorder.event(pod, 'Warning', 'ErrImageNeverPull', message);
      return { waiting: { reason: 'ErrImageNeverPull', message } };
    }
    if (this.backoff.isInBackOffSinceUpdate(key)) {
      const message = `Back-off pulling image "${raw}"`;
      this.o.recorder.event(pod, 'Normal', 'BackOff', message);
      return { waiting: { reason: 'ImagePullBackOff', message }, requeueAfterMs: this.backoff.remainingSinceUpdate(key) + 50 };
    }
    this.o.recorder.event(pod, 'Normal', 'Pulling', 'Pulling image "%s"', raw);
    const t0 = this.o.clock.now();
    try {
      const id = await this.o.images.pullImage({ image }, undefined, sandbox);
      this.o.recorder.event(pod, 'Normal', 'Pulled', 'Successfully pulled image "%s" in %dms', raw, this.o.clock.now() - t0);
      return { imageRef: id };
    } catch (err) {
      this.backoff.next(key);
      const message = `Failed to pull image "${raw}": ${err instanceof Error ? err.message : String(err)}`;
      this.o.recorder.event(pod, 'Warning', 'Failed', message);
      this.o.recorder.event(pod, 'Warning', 'Failed', 'Error: ErrImagePull');
      return { waiting: { reason: 'ErrImagePull', message }, requeueAfterMs: this.backoff.get(key) };
    }
  }

  /** Forgets uid's pull back-off (its pod is gone). */
  forgetPod(uid: string): void { this.backoff.forgetPrefix(`${uid}/`); }
}
