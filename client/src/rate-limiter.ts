/**
 * Rate limiters for the workqueue. Mirrors client-go util/workqueue default_rate_limiters.go:
 * per-item exponential failure backoff, an overall token bucket, and the max of several.
 */
import type { Clock } from '@mk8s/component-base';
import { TokenBucket } from './token-bucket.js';

/** Decides how long a key waits before its next retry. Safe to call from any handler (single-threaded JS). */
export interface RateLimiter<K = string> {
  /** Delay in ms before key may be processed again; each call counts as one more failure. */
  when(key: K): number;
  /** Stops tracking key (its backoff resets). Idempotent. */
  forget(key: K): void;
  /** How many times key has been rate limited since the last forget. */
  numRequeues(key: K): number;
}

/** Per-key exponential backoff: base * 2^failures, capped at max. */
export class ItemExponentialFailureRateLimiter<K = string> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  constructor(private readonly o: {
    /** @default 5 */
    baseDelayMs?: number;
    /** @default 1_000_000 (1000s) */
    maxDelayMs?: number;
  } = {}) {}
  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const base = this.o.baseDelayMs ?? 5;
    const max = this.o.maxDelayMs ?? 1_000_000;
    const delay = base * 2 ** n;
    return Number.isFinite(delay) ? Math.min(delay, max) : max;
  }
  forget(key: K): void { this.failures.delete(key); }
  numRequeues(key: K): number { return this.failures.get(key) ?? 0; }
}

/**
 * Overall token bucket (golang.org/x/time/rate Reserve semantics): every call takes a token and
 * returns how long to wait for it, so bursts above `burst` are spread at `qps`. The same bucket as
 * the REST client's throttle (TokenBucket.reserve).
 */
export class BucketRateLimiter<K = string> implements RateLimiter<K> {
  private readonly bucket: TokenBucket;
  constructor(o: { qps: number; burst: number; clock: Clock }) {
    this.bucket = new TokenBucket(o);
  }
  when(_key: K): number {
    return this.bucket.reserve();
  }
  forget(_key: K): void {}
  numRequeues(_key: K): number { return 0; }
}

/** The worst (longest) delay of several limiters. */
export class MaxOfRateLimiter<K = string> implements RateLimiter<K> {
  private readonly limiters: RateLimiter<K>[];
  constructor(...limiters: RateLimiter<K>[]) { this.limiters = limiters; }
  when(key: K): number { return Math.max(0, ...this.limiters.map((l) => l.when(key))); }
  forget(key: K): void { for (const l of this.limiters) l.forget(key); }
  numRequeues(key: K): number { return Math.max(0, ...this.limiters.map((l) => l.numRequeues(key))); }
}

/**
 * client-go's DefaultControllerRateLimiter: exponential 5ms→1000s per key, plus (when `clock` is
 * given and bucket not disabled) an overall 10 qps / 100 burst bucket.
 */
export function defaultControllerRateLimiter<K = string>(o: { clock?: Clock; baseDelayMs?: number; maxDelayMs?: number; bucket?: { qps: number; burst: number } | false } = {}): RateLimiter<K> {
  const item = new ItemExponentialFailureRateLimiter<K>({
    ...(o.baseDelayMs !== undefined ? { baseDelayMs: o.baseDelayMs } : {}),
    ...(o.maxDelayMs !== undefined ? { maxDelayMs: o.maxDelayMs } : {}),
  });
  if (!o.clock || o.bucket === false) return item;
  const b = o.bucket ?? { qps: 10, burst: 100 };
  return new MaxOfRateLimiter<K>(item, new BucketRateLimiter<K>({ ...b, clock: o.clock }));
}
