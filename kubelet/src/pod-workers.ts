/**
 * PodWorkers: one serialized worker per pod uid (upstream `pod_workers.go`, its 2015 shape). A
 * pod's syncs never run concurrently; updates that arrive while a sync runs collapse into one
 * more sync, which reads the newest state (newest update wins). Different pods sync in parallel.
 */
import type { Clock, Logger } from '@mk8s/component-base';
import { ItemExponentialFailureRateLimiter } from '@mk8s/client';

export interface PodSyncResult { requeueAfterMs?: number }

/** What a sync is told about its pod's worker. */
export interface PodSyncContext {
  /** When the previous sync of this pod ended (0: none yet). Its runtime state must be newer (pod cache). */
  lastSyncMs: number;
  /** Waits for p (the pod cache) with the worker counted as idle meanwhile (tests settle on idle()). */
  park<T>(p: Promise<T>): Promise<T>;
}

export interface PodWorkersOptions {
  /** Syncs one pod; called with one uid at a time per uid. Rejecting retries with backoff. */
  sync: (uid: string, signal: AbortSignal, ctx: PodSyncContext) => Promise<PodSyncResult | void>;
  clock: Clock;
  logger: Logger;
  /** Retry delay after a failed sync, doubling. @default 1000 */
  errorBackoffMs?: number;
  /** @default 30_000 */
  maxErrorBackoffMs?: number;
}

interface Worker { running: boolean; parked: boolean; dirty: boolean; timer?: () => void; timerAt?: number; lastSyncMs: number }

export class PodWorkers {
  private readonly workers = new Map<string, Worker>();
  /** Failed syncs back off per pod (client's rate limiter: 1 s doubling to 30 s), forgotten on success. */
  private readonly errors: ItemExponentialFailureRateLimiter;
  private signal: AbortSignal = new AbortController().signal;
  private idleWaiters: (() => void)[] = [];
  constructor(private readonly o: PodWorkersOptions) {
    this.errors = new ItemExponentialFailureRateLimiter({ baseDelayMs: o.errorBackoffMs ?? 1000, maxDelayMs: o.maxErrorBackoffMs ?? 30_000 });
  }

  /** Sets the signal handed to syncs; later enqueues are ignored once it aborts. */
  start(signal: AbortSignal): void { this.signal = signal; }

  /** Asks for a sync of uid now (coalesced with any pending one). Never blocks. */
  enqueue(uid: string): void {
    if (this.signal.aborted) return;
    let w = this.workers.get(uid);
    if (!w) { w = { running: false, parked: false, dirty: false, lastSyncMs: 0 }; this.workers.set(uid, w); }
    if (w.running) { w.dirty = true; return; }
    w.running = true;
    void this.loop(uid, w);
  }

  /** Asks for a sync of uid after ms; an earlier pending timer wins. */
  enqueueAfter(uid: string, ms: number): void {
    if (this.signal.aborted) return;
    let w = this.workers.get(uid);
    if (!w) { w = { running: false, parked: false, dirty: false, lastSyncMs: 0 }; this.workers.set(uid, w); }
    const at = this.o.clock.now() + ms;
    if (w.timer && w.timerAt !== undefined && w.timerAt <= at) return;
    w.timer?.();
    w.timerAt = at;
    w.timer = this.o.clock.setTimeout(() => { w.timer = undefined as never; delete w.timerAt; this.enqueue(uid); }, ms);
  }

  /** Drops uid's worker state (after its pod is fully cleaned up). */
  forget(uid: string): void {
    const w = this.workers.get(uid);
    if (w && !w.running) { w.timer?.(); this.workers.delete(uid); this.errors.forget(uid); }
  }

  /** True while a sync of uid runs. */
  isRunning(uid: string): boolean { return this.workers.get(uid)?.running ?? false; }

  /** Resolves once no sync runs, but for syncs parked waiting for the pod cache (tests). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private isIdle(): boolean { return ![...this.workers.values()].some((w) => w.running && !w.parked); }
  private wakeIdle(): void { if (this.isIdle()) for (const r of this.idleWaiters.splice(0)) r(); }

  private async loop(uid: string, w: Worker): Promise<void> {
    try {
      do {
        w.dirty = false;
        try {
          const park = async <T>(p: Promise<T>): Promise<T> => {
            w.parked = true;
            this.wakeIdle();
            try { return await p; } finally { w.parked = false; }
          };
          const res = await this.o.sync(uid, this.signal, { lastSyncMs: w.lastSyncMs, park });
          w.lastSyncMs = this.o.clock.now();
          this.errors.forget(uid);
          if (res?.requeueAfterMs !== undefined) this.enqueueAfter(uid, res.requeueAfterMs);
        } catch (err) {
          if (this.signal.aborted) return;
          w.lastSyncMs = this.o.clock.now();
          const delay = this.errors.when(uid);
          this.o.logger.warn({ err, podUid: uid, retryMs: delay }, 'Could not sync pod, requeued');
          this.enqueueAfter(uid, delay);
        }
      } while (w.dirty && !this.signal.aborted);
    } finally {
      w.running = false;
      this.wakeIdle();
    }
  }
}
