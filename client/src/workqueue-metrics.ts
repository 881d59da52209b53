/**
 * Workqueue metrics under client-go's names (component-base/metrics/prometheus/workqueue):
 * workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
 * workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
 * workqueue_longest_running_processor_seconds, workqueue_retries_total, all by `name`.
 * Mirrors client-go util/workqueue metrics.go: addTimes/processingStartTimes per key.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { metricOnce, type Clock } from '@mk8s/component-base';

/**
 * The queue's side (client-go queueMetrics). Called by the queue only, synchronously, at the
 * points client-go calls them: add when a key becomes dirty, get when a worker takes it, done when
 * the worker is finished, retry on every addAfter.
 */
export interface QueueMetrics<K> {
  add(key: K): void;
  get(key: K): void;
  done(key: K): void;
  retry(): void;
  /** The queue shut down: its unfinished-work gauges stop being reported. */
  stop(): void;
}

/** Makes the metrics of one named queue (client-go MetricsProvider). */
export interface WorkqueueMetricsProvider {
  newQueueMetrics<K>(name: string, clock: Clock): QueueMetrics<K>;
}

/** exponential buckets as Prometheus' ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => Number((start * factor ** i).toPrecision(12)));
}

/** client-go's queue latency buckets: ExponentialBuckets(10e-9, 10, 10), 10 ns to 10 s. */
const DURATION_BUCKETS = exponentialBuckets(10e-9, 10, 10);

interface LiveQueue { name: string; unfinished(): { total: number; oldest: number } }

/** Queues alive per registry, read at scrape time by the unfinished-work gauges. */
const liveQueues = new WeakMap<Registry, Set<LiveQueue>>();

/** newWorkqueueMetricsProvider registers the workqueue families on registry (once) and returns a provider. */
export function newWorkqueueMetricsProvider(registry: Registry): WorkqueueMetricsProvider {
  let live = liveQueues.get(registry);
  if (!live) { live = new Set(); liveQueues.set(registry, live); }
  const queues = live;
  const depth = metricOnce(registry, 'workqueue_depth', () => new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers: [registry] }));
  const adds = metricOnce(registry, 'workqueue_adds_total', () => new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers: [registry] }));
  const latency = metricOnce(registry, 'workqueue_queue_duration_seconds', () => new Histogram({
    name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested.', labelNames: ['name'], buckets: DURATION_BUCKETS, registers: [registry],
  }));
  const work = metricOnce(registry, 'workqueue_work_duration_seconds', () => new Histogram({
    name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', labelNames: ['name'], buckets: DURATION_BUCKETS, registers: [registry],
  }));
  metricOnce(registry, 'workqueue_unfinished_work_seconds', () => new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    labelNames: ['name'], registers: [registry],
    collect() { for (const q of queues) this.set({ name: q.name }, q.unfinished().total); },
  }));
  metricOnce(registry, 'workqueue_longest_running_processor_seconds', () => new Gauge({
    name: 'workqueue_longest_running_processor_seconds', help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: ['name'], registers: [registry],
    collect() { for (const q of queues) this.set({ name: q.name }, q.unfinished().oldest); },
  }));
  const retries = metricOnce(registry, 'workqueue_retries_total', () => new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers: [registry] }));

  return {
    newQueueMetrics<K>(name: string, clock: Clock): QueueMetrics<K> {
      const labels = { name };
      const addTimes = new Map<K, number>();
      const processingStart = new Map<K, number>();
      const since = (t: number) => (clock.now() - t) / 1000;
      // Every family shows the queue at once (client-go sets them to 0 on creation).
      depth.set(labels, 0); adds.inc(labels, 0); retries.inc(labels, 0);
      const self: LiveQueue = {
        name,
        unfinished() {
          let total = 0; let oldest = 0;
          for (const t of processingStart.values()) { const age = since(t); total += age; if (age > oldest) oldest = age; }
          return { total, oldest };
        },
      };
      queues.add(self);
      return {
        add(key) {
          adds.inc(labels); depth.inc(labels);
          if (!addTimes.has(key)) addTimes.set(key, clock.now());
        },
        get(key) {
          depth.dec(labels);
          processingStart.set(key, clock.now());
          const t = addTimes.get(key);
          if (t !== undefined) { latency.observe(labels, since(t)); addTimes.delete(key); }
        },
        done(key) {
          const t = processingStart.get(key);
          if (t !== undefined) { work.observe(labels, since(t)); processingStart.delete(key); }
        },
        retry() { retries.inc(labels); },
        stop() { queues.delete(self); },
      };
    },
  };
}
