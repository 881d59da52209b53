/**
 * The rate-limited workqueue. Mirrors client-go util/workqueue: a FIFO plus dirty/processing sets
 * (a key is never handed to two workers at once; one added while processing runs again after
 * done), a delaying layer (addAfter through an injected Clock) and a rate-limiting layer.
 */
import { realClock, type Clock } from '@mk8s/component-base';
import type { RateLimitingQueue } from './interfaces.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';
import type { QueueMetrics, WorkqueueMetricsProvider } from './workqueue-metrics.js';

/** Options for {@link createRateLimitingQueue}. */
export interface RateLimitingQueueOptions<K = string> {
  /** For logs and metrics. */
  name?: string;
  /** @default realClock */
  clock?: Clock;
  /** @default defaultControllerRateLimiter({ clock, baseDelayMs, maxDelayMs }) */
  rateLimiter?: RateLimiter<K>;
  /** Per-key backoff start. @default 5 */
  baseDelayMs?: number;
  /** Per-key backoff cap. @default 1_000_000 */
  maxDelayMs?: number;
  /** Overall token bucket; false disables it. @default { qps: 10, burst: 100 } */
  bucket?: { qps: number; burst: number } | false;
  /** workqueue_* metrics for this queue (needs a name). @default none */
  metricsProvider?: WorkqueueMetricsProvider;
}

/** createRateLimitingQueue returns a new, empty queue. */
export function createRateLimitingQueue<K = string>(o: RateLimitingQueueOptions<K> = {}): RateLimitingQueue<K> & { readonly name: string; shuttingDown(): boolean } {
  return new WorkQueue<K>(o);
}

class WorkQueue<K> implements RateLimitingQueue<K> {
  readonly name: string;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter<K>;
  private readonly queue: K[] = [];
  private head = 0;
  /** Keys that need processing (queued, or re-added while processing). */
  private readonly dirty = new Set<K>();
  /** Keys a worker holds right now. */
  private readonly processing = new Set<K>();
  /** addAfter timers; only the earliest per key is kept, as client-go's waitingForQueue does. */
  private readonly waiting = new Map<K, { at: number; cancel: () => void }>();
  private readonly getters: ((k: K | undefined) => void)[] = [];
  private down = false;
  private readonly metrics: QueueMetrics<K> | undefined;

  constructor(o: RateLimitingQueueOptions<K>) {
    this.name = o.name ?? '';
    this.clock = o.clock ?? realClock;
    this.metrics = o.metricsProvider && this.name ? o.metricsProvider.newQueueMetrics<K>(this.name, this.clock) : undefined;
    this.limiter = o.rateLimiter ?? defaultControllerRateLimiter<K>({
      clock: this.clock,
      ...(o.baseDelayMs !== undefined ? { baseDelayMs: o.baseDelayMs } : {}),
      ...(o.maxDelayMs !== undefined ? { maxDelayMs: o.maxDelayMs } : {}),
      ...(o.bucket !== undefined ? { bucket: o.bucket } : {}),
    });
  }

  add(key: K): void {
    if (this.down || this.dirty.has(key)) return;
    this.metrics?.add(key);
    this.dirty.add(key);
    if (this.processing.has(key)) return; // done() re-queues it
    this.push(key);
  }

  addAfter(key: K, delayMs: number): void {
    if (this.down) return;
    this.metrics?.retry();                                          // as client-go: every AddAfter counts
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.now() + delayMs;
    const prev = this.waiting.get(key);
    if (prev && prev.at <= at) return;
    prev?.cancel();
    const cancel = this.clock.setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, delayMs);
    this.waiting.set(key, { at, cancel });
  }

  addRateLimited(key: K): void { this.addAfter(key, this.limiter.when(key)); }
  forget(key: K): void { this.limiter.forget(key); }
  numRequeues(key: K): number { return this.limiter.numRequeues(key); }

  get(): Promise<K | undefined> {
    const k = this.take();
    if (k !== undefined || this.down) return Promise.resolve(k);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: K): void {
    this.metrics?.done(key);
    this.processing.delete(key);
    if (this.dirty.has(key)) this.push(key);
    else if (this.down && this.processing.size === 0) this.wakeAll();
  }

  len(): number { return this.queue.length - this.head; }

  shutDown(): void {
    if (this.down) return;
    this.down = true;
    this.metrics?.stop();
    for (const w of this.waiting.values()) w.cancel();
    this.waiting.clear();
    this.wakeAll();
  }

  shuttingDown(): boolean { return this.down; }

  private push(key: K): void {
    const getter = this.getters.shift();
    if (getter) {
      // Hand the key straight to a waiting worker: it is processing now, no longer dirty.
      this.dirty.delete(key);
      this.processing.add(key);
      this.metrics?.get(key);
      getter(key);
      return;
    }
    this.queue.push(key);
  }

  private take(): K | undefined {
    if (this.head >= this.queue.length) return undefined;
    const k = this.queue[this.head++] as K;
    if (this.head > 1024 && this.head * 2 > this.queue.length) { this.queue.splice(0, this.head); this.head = 0; }
    this.dirty.delete(k);
    this.processing.add(k);
    this.metrics?.get(k);
    return k;
  }

  private wakeAll(): void {
    // Waiters only exist while the queue is empty, so after shutdown they all get undefined.
    for (const g of this.getters.splice(0)) g(undefined);
  }
}
