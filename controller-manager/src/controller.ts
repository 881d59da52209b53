/**
 * What every controller is built from and how it runs (STYLE example 1): shared informers feed a
 * rate-limited workqueue of keys; runWorkers calls reconcile(key).
 */
import type { Registry } from 'prom-client';
import type { Clock, FeatureGate, Logger } from '@mk8s/component-base';
import { RESOURCES } from '@mk8s/api';
import { CachedDiscovery, createRateLimitingQueue, hasRawGet, RestDiscovery, runWorkers, StaticDiscovery, type Clientset, type DiscoveryClient, type EventRecorder, type RateLimitingQueue, type Reconciler, type SharedInformerFactory, type WorkerMetrics, type WorkqueueMetricsProvider } from '@mk8s/client';

/** Shared dependencies of all controllers (newControllerFixture's context satisfies it). */
export interface ControllerContext {
  client: Clientset;
  informers: SharedInformerFactory;
  logger: Logger;
  clock: Clock;
  recorder: EventRecorder;
  /** workqueue_* metrics of every controller's queue. @default none */
  queueMetrics?: WorkqueueMetricsProvider;
  /**
   * The component's metrics registry (served on /metrics). A controller with metrics of its own
   * (upstream's per-controller metrics packages) registers them here through component-base's
   * metricOnce, once per registry. @default none: counted, not served
   */
  registry?: Registry;
  /** Feature gates (--feature-gates). @default defaultFeatureGate */
  featureGates?: FeatureGate;
  /** Served resources (namespace controller, garbage collector). @default discovery over ctx.client when it is a REST client, else the static scheme */
  discovery?: DiscoveryClient;
}

/** ctx.discovery, or discovery over the REST client (cached for ttlMs when > 0), or the static scheme (fakes). */
export function discoveryOf(ctx: ControllerContext, ttlMs = 30_000): DiscoveryClient {
  if (ctx.discovery) return ctx.discovery;
  if (hasRawGet(ctx.client)) return ttlMs > 0 ? new CachedDiscovery(new RestDiscovery(ctx.client), ttlMs, () => ctx.clock.now()) : new RestDiscovery(ctx.client);
  return new StaticDiscovery(RESOURCES);
}

/** A controller the manager can run. */
export interface Controller extends Reconciler {
  readonly name: string;
  readonly queue: RateLimitingQueue<string>;
  /** Waits for the informer caches, then reconciles until signal aborts. Extra loops (monitors) may run alongside. */
  run(signal: AbortSignal, o?: { workers?: number; metrics?: WorkerMetrics }): Promise<void>;
}

/** Base class: owns the queue and the standard run loop. */
export abstract class BaseController implements Controller {
  abstract readonly name: string;
  readonly queue: RateLimitingQueue<string> & { shuttingDown(): boolean };
  protected readonly log: Logger;
  protected defaultWorkers = 5;

  constructor(protected readonly ctx: ControllerContext, queueName: string) {
    this.queue = createRateLimitingQueue<string>({ name: queueName, clock: ctx.clock, ...(ctx.queueMetrics ? { metricsProvider: ctx.queueMetrics } : {}) });
    this.log = ctx.logger.child({ controller: queueName });
  }

  abstract reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void>;

  protected enqueue = (key: string): void => { this.queue.add(key); };

  /** Hook for periodic work besides the queue (node monitors). Resolves when signal aborts. */
  protected async background(_signal: AbortSignal): Promise<void> {}

  async run(signal: AbortSignal, o: { workers?: number; metrics?: WorkerMetrics } = {}): Promise<void> {
    if (!(await this.ctx.informers.waitForCacheSync(signal))) return;
    this.log.info('Caches synced, starting workers');
    await Promise.all([
      runWorkers({ name: this.name, queue: this.queue, reconciler: this, workers: o.workers ?? this.defaultWorkers, logger: this.ctx.logger, signal, ...(o.metrics ? { metrics: o.metrics } : {}), now: () => this.ctx.clock.now() }),
      this.background(signal),
    ]);
  }
}

/** slowStartBatch (controller_utils): runs fn count times in batches of 1, 2, 4, ... stopping at the first batch with an error. */
export async function slowStartBatch(count: number, initial: number, fn: () => Promise<void>): Promise<{ successes: number; error?: unknown }> {
  let remaining = count;
  let successes = 0;
  for (let size = Math.min(remaining, initial); size > 0; size = Math.min(2 * size, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: size }, fn));
    let error: unknown;
    for (const r of results) { if (r.status === 'fulfilled') successes++; else error ??= r.reason; }
    if (error !== undefined) return { successes, error };
    remaining -= size;
  }
  return { successes };
}
