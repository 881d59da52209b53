/**
 * PodWorkers: one serialized worker per pod uid (upstream `pod_workers.go`, its 2015 shape). A
 * pod's syncs never run concurrently; updates that arrive while a sync runs collapse into one
 * more sync, which reads the newest state (newest update wins). Different pods sync in parallel.
 */
import type { Clock, Logger } from '@mk8s/component-base';

export interface PodSyncResult { requeueAfterMs?: number }

export interface PodWorkersOptions {
  /** Syncs one pod; called with one uid at a time per uid. Rejecting retries with backoff. */
  sync: (uid: string, signal: AbortSignal) => Promise<PodSyncResult | void>;
  clock: Clock;
  logger: Logger;
  /** Retry delay after a failed sync, doubling. @default 1000 */
  errorBackoffMs?: number;
  /** @default 30_000 */
  maxErrorBackoffMs?: number;
}

interface Worker { running: boolean; dirty: boolean; timer?: () => void; timerAt?: number; failures: number }

export class PodWorkers {
  private readonly workers = new Map<string, Worker>();
  private signal: AbortSignal = new AbortController().signal;
  private idleWaiters: (() => void)[] = [];
  constructor(private readonly o: PodWorkersOptions) {}

  /** Sets the signal handed to syncs; later enqueues are ignored once it aborts. */
  start(signal: AbortSignal): void { this.signal = signal; }

  /** Asks for a sync of uid now (coalesced with any pending one). Never blocks. */
  enqueue(uid: string): void {
    if (this.signal.aborted) return;
    let w = this.workers.get(uid);
    if (!w) { w = { running: false, dirty: false, failures: 0 }; this.workers.set(uid, w); }
    if (w.running) { w.dirty = true; return; }
    w.running = true;
    void this.loop(uid, w);
  }

  /** Asks for a sync of uid after ms; an earlier pending timer wins. */
  enqueueAfter(uid: string, ms: number): void {
    if (this.signal.aborted) return;
    let w = this.workers.get(uid);
    if (!w) { w = { running: false, dirty: false, failures: 0 }; this.workers.set(uid, w); }
    const at = this.o.clock.now() + ms;
    if (w.timer && w.timerAt !== undefined && w.timerAt <= at) return;
    w.timer?.();
    w.timerAt = at;
    w.timer = this.o.clock.setTimeout(() => { w.timer = undefined as never; delete w.timerAt; this.enqueue(uid); }, ms);
  }

  /** Drops uid's worker state (after its pod is fully cleaned up). */
  forget(uid: string): void {
    const w = this.workers.get(uid);
    if (w && !w.running) { w.timer?.(); this.workers.delete(uid); }
  }

  /** True while a sync of uid runs. */
  isRunning(uid: string): boolean { return this.workers.get(uid)?.running ?? false; }

  /** Resolves once no sync runs (tests). */
  idle(): Promise<void> {
    if (![...this.workers.values()].some((w) => w.running)) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private async loop(uid: string, w: Worker): Promise<void> {
    try {
      do {
        w.dirty = false;
        try {
          const res = await this.o.sync(uid, this.signal);
          w.failures = 0;
          if (res?.requeueAfterMs !== undefined) this.enqueueAfter(uid, res.requeueAfterMs);
        } catch (err) {
          if (this.signal.aborted) return;
          w.failures++;
          const delay = Math.min((this.o.errorBackoffMs ?? 1000) * 2 ** (w.failures - 1), this.o.maxErrorBackoffMs ?? 30_000);
          this.o.logger.warn({ err, podUid: uid, retryMs: delay }, 'Could not sync pod, requeued');
          this.enqueueAfter(uid, delay);
        }
      } while (w.dirty && !this.signal.aborted);
    } finally {
      w.running = false;
      if (![...this.workers.values()].some((x) => x.running)) for (const r of this.idleWaiters.splice(0)) r();
    }
  }
}
