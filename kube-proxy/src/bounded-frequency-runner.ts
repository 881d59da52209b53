/**
 * BoundedFrequencyRunner (upstream pkg/util/async): runs fn when asked, but never more often
 * than once per minIntervalMs, never two at once, and coalesces every request made meanwhile
 * into one later run. Time comes from an injected Clock so unit tests step it.
 */
import type { Clock } from '@mk8s/component-base';

export interface BoundedFrequencyRunnerOptions {
  fn: () => Promise<void>;
  minIntervalMs: number;
  clock: Clock;
  /** Called when fn rejects; the runner then retries after retryAfterMs. */
  onError?: (err: unknown) => void;
  /** @default minIntervalMs, at least 1000 */
  retryAfterMs?: number;
}

export class BoundedFrequencyRunner {
  private lastRunMs = -Infinity;
  private running = false;
  private pending = false;
  private cancelTimer: (() => void) | undefined;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly o: BoundedFrequencyRunnerOptions) {}

  /** Asks for a run: at once if the last one is older than minIntervalMs, else when it is. */
  run(): void {
    if (this.stopped) return;
    this.pending = true;
    this.schedule(Math.max(0, this.lastRunMs + this.o.minIntervalMs - this.o.clock.now()));
  }

  /** Stops scheduling; a run in progress finishes. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  /** Resolves once no run is in progress or scheduled (tests). */
  whenIdle(): Promise<void> {
    if (!this.running && !this.cancelTimer) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private schedule(delayMs: number): void {
    if (this.running || this.cancelTimer || this.stopped) return;
    this.cancelTimer = this.o.clock.setTimeout(() => { this.cancelTimer = undefined; void this.tick(); }, delayMs);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    this.running = true;
    this.pending = false;
    this.lastRunMs = this.o.clock.now();
    let failed = false;
    try { await this.o.fn(); } catch (err) { failed = true; this.o.onError?.(err); }
    this.running = false;
    if (failed) {
      this.pending = true;
      this.schedule(this.o.retryAfterMs ?? Math.max(this.o.minIntervalMs, 1000));
    } else if (this.pending) {
      this.schedule(Math.max(0, this.lastRunMs + this.o.minIntervalMs - this.o.clock.now()));
    }
    if (!this.running && !this.cancelTimer) for (const w of this.idleWaiters.splice(0)) w();
  }
}
