/**
 * StatusManager (upstream kubelet `status/status_manager.go`): keeps the newest status computed
 * for each pod and writes pods/status in the background, off the pod worker's path, as one merge
 * patch per pod carrying the pod's uid (a recreated pod of the same name is never written with an
 * old pod's status). Writes only what differs from what was last written; statuses set while a
 * write is in flight collapse into one more write of the newest. A failed write is retried on
 * client's per-item exponential back-off (500 ms doubling to 10 s, reset by a success). A status
 * someone else wrote since (a newer resourceVersion of the pod the worker passes in) is overwritten
 * with ours at the next sync (upstream's needsReconcile).
 */
import { isDeepStrictEqual } from 'node:util';
import { realClock, type Clock, type Logger } from '@mk8s/component-base';
import { ItemExponentialFailureRateLimiter, type Clientset } from '@mk8s/client';
import { Pods, isNotFound, type Pod, type PodStatus } from '@mk8s/api';
import type { PodObj } from './objects.js';

interface Waiter { resolve: (exists: boolean) => void; reject: (err: unknown) => void }
interface Entry {
  pod: Pod;
  /** The newest status set. */
  status: PodStatus;
  /** What the API holds as far as we know (our last write, or the pod's status when first seen). */
  written: PodStatus | undefined;
  /** The pod's resourceVersion after our last write (0 before any). */
  writtenRV: number;
  writing: boolean;
  retry?: () => void;
  waiters: Waiter[];
}

/** JSON equality: undefined fields and absent ones are the same on the wire. */
const sameOnWire = (a: PodStatus, b: PodStatus) => isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));

export class StatusManager {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly retries: ItemExponentialFailureRateLimiter;
  constructor(private readonly o: { client: Clientset; logger: Logger; clock?: Clock; retryMs?: number; maxRetryMs?: number }) {
    this.clock = o.clock ?? realClock;
    this.retries = new ItemExponentialFailureRateLimiter({ baseDelayMs: o.retryMs ?? 500, maxDelayMs: o.maxRetryMs ?? 10_000 });
  }

  /** The newest status set for uid (to compute transitions from), written or not yet. */
  lastWritten(uid: string): PodStatus | undefined { return this.entries.get(uid)?.status; }

  /** Records status as the pod's newest and has it written soon. Never blocks, never throws. */
  queueStatus(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata?.uid ?? '';
    let e = this.entries.get(uid);
    if (!e) { e = { pod, status, written: pod.status, writtenRV: 0, writing: false, waiters: [] }; this.entries.set(uid, e); }
    // As upstream's needsReconcile: someone else changed the status since our last write (the node
    // controller marked the pod not ready while this kubelet was unreachable or paused): what the API
    // holds is then that, and ours is written again.
    const rv = Number(pod.metadata?.resourceVersion);
    if (!e.writing && pod.status && e.written && Number.isFinite(rv) && rv > e.writtenRV && !sameOnWire(pod.status, e.written)) {
      e.written = pod.status;
      e.writtenRV = rv;
    }
    e.pod = pod;
    e.status = status;
    this.kick(uid, e);
  }

  /**
   * Records status and waits until it (or a newer one) is written. Resolves false when the pod is
   * gone. Rejects when the write fails (the background retry goes on).
   */
  setStatus(pod: Pod, status: PodStatus): Promise<boolean> {
    const uid = pod.metadata?.uid ?? '';
    const pending = this.entries.get(uid);
    // Waiting for a retry: write now instead.
    if (pending?.retry) { pending.retry(); delete pending.retry; }
    return new Promise<boolean>((resolve, reject) => {
      this.queueStatus(pod, status);
      const e = this.entries.get(uid)!;
      if (!e.writing) { resolve(true); return; }
      e.waiters.push({ resolve, reject });
    });
  }

  forget(uid: string): void {
    const e = this.entries.get(uid);
    e?.retry?.();
    this.entries.delete(uid);
    this.retries.forget(uid);
    for (const w of e?.waiters.splice(0) ?? []) w.resolve(false);
  }

  private kick(uid: string, e: Entry): void {
    if (e.writing || e.retry) return;
    if (e.written && sameOnWire(e.written, e.status)) { for (const w of e.waiters.splice(0)) w.resolve(true); return; }
    e.writing = true;
    void this.drain(uid, e);
  }

  private async drain(uid: string, e: Entry): Promise<void> {
    try {
      while (this.entries.get(uid) === e && !(e.written && sameOnWire(e.written, e.status))) {
        const { pod, status } = e;
        // Fields a merge patch would otherwise keep from an older status.
        const cleared = { podIP: null, podIPs: null, initContainerStatuses: null, reason: null, message: null };
        try {
          const res = await this.o.client.resource<PodObj>(Pods, pod.metadata?.namespace ?? 'default').patch(pod.metadata?.name ?? '', 'merge',
            { metadata: { uid }, status: { ...cleared, ...status } }, { subresource: 'status' });
          e.written = status;
          const wrv = Number(res?.metadata?.resourceVersion);
          if (Number.isFinite(wrv)) e.writtenRV = wrv;
          this.retries.forget(uid);
          this.o.logger.debug({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, phase: status.phase }, 'Updated pod status');
        } catch (err) {
          if (isNotFound(err)) {
            // Gone (or recreated under a new uid): nothing to write until the pod's worker says otherwise.
            e.written = status;
            for (const w of e.waiters.splice(0)) w.resolve(false);
            return;
          }
          const delay = this.retries.when(uid);
          this.o.logger.warn({ err, pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, retryMs: delay }, 'Could not update pod status, retrying');
          for (const w of e.waiters.splice(0)) w.reject(err);
          e.retry = this.clock.setTimeout(() => { delete e.retry; if (this.entries.get(uid) === e) this.kick(uid, e); }, delay);
          return;
        }
      }
      for (const w of e.waiters.splice(0)) w.resolve(this.entries.get(uid) === e);
    } finally {
      e.writing = false;
    }
  }
}
