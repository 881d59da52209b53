/**
 * Client-side request throttling (client-go flowcontrol.NewTokenBucketRateLimiter): burst tokens,
 * refilled at qps. Waiters are served in order.
 */
import { realClock, type Clock } from '@mk8s/component-base';

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly clock: Clock;
  /** Time at which the last reservation's token becomes available; keeps waiters FIFO. */
  constructor(private readonly o: { qps: number; burst: number; clock?: Clock }) {
    this.clock = o.clock ?? realClock;
    this.tokens = o.burst;
    this.last = this.clock.now();
  }
  /** Resolves when a token is available; rejects with the signal's reason if it aborts first. */
  async acquire(signal?: AbortSignal): Promise<void> {
    if (this.o.qps <= 0) return; // qps <= 0 disables throttling
    const now = this.clock.now();
    this.tokens = Math.min(this.o.burst, this.tokens + ((now - this.last) / 1000) * this.o.qps);
    this.last = now;
    this.tokens -= 1;
    if (this.tokens >= 0) return;
    const waitMs = Math.ceil((-this.tokens / this.o.qps) * 1000);
    try {
      await this.clock.sleep(waitMs, signal);
    } catch (err) {
      this.tokens += 1; // give the reservation back
      throw err;
    }
  }
}
