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
  /**
   * Takes a token now and returns how long (ms) to wait before using it: 0 while tokens are left,
   * else the time the bucket refills to it (golang.org/x/time/rate Reserve semantics, so bursts
   * above `burst` are spread at `qps`). qps <= 0 disables throttling (always 0).
   */
  reserve(): number {
    if (this.o.qps <= 0) return 0;
    const now = this.clock.now();
    this.tokens = Math.min(this.o.burst, this.tokens + ((now - this.last) / 1000) * this.o.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.o.qps) * 1000);
  }
  /** Resolves when a token is available; rejects with the signal's reason if it aborts first. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const waitMs = this.reserve();
    if (waitMs === 0) return;
    try {
      await this.clock.sleep(waitMs, signal);
    } catch (err) {
      this.tokens += 1; // give the reservation back
      throw err;
    }
  }
}
