/**
 * StatusManager (upstream kubelet `status/status_manager.go`): writes pods/status only when the
 * computed status differs from what it last wrote, as a merge patch carrying the pod's uid so a
 * recreated pod of the same name is never written with an old pod's status.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '@mk8s/component-base';
import type { Clientset } from '@mk8s/client';
import { Pods, isNotFound, type Pod, type PodStatus } from '@mk8s/api';
import type { PodObj } from './objects.js';

export class StatusManager {
  private readonly last = new Map<string, PodStatus>();
  constructor(private readonly o: { client: Clientset; logger: Logger }) {}

  /** The status last written for uid (to compute transitions from). */
  lastWritten(uid: string): PodStatus | undefined { return this.last.get(uid); }

  /**
   * Writes status when it changed. Resolves false when the pod is gone. Rejects on other errors
   * (the pod's worker retries).
   */
  async setStatus(pod: Pod, status: PodStatus): Promise<boolean> {
    const uid = pod.metadata?.uid ?? '';
    const prev = this.last.get(uid) ?? pod.status;
    if (prev && isDeepStrictEqual(JSON.parse(JSON.stringify(prev)), JSON.parse(JSON.stringify(status)))) { this.last.set(uid, status); return true; }
    // Fields a merge patch would otherwise keep from an older status.
    const cleared = { podIP: null, podIPs: null, initContainerStatuses: null, reason: null, message: null };
    try {
      await this.o.client.resource<PodObj>(Pods, pod.metadata?.namespace ?? 'default').patch(pod.metadata?.name ?? '', 'merge',
        { metadata: { uid }, status: { ...cleared, ...status } }, { subresource: 'status' });
      this.last.set(uid, status);
      this.o.logger.debug({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, phase: status.phase }, 'Updated pod status');
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  forget(uid: string): void { this.last.delete(uid); }
}
