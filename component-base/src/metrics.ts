/**
 * The one registry helper every component uses (upstream component-base/metrics legacyregistry,
 * but one Registry per component instance instead of a process global, so two components in one
 * test process never collide).
 */
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';

/**
 * newRegistry returns a prom-client registry carrying the process' own metrics: `process_*`
 * (CPU seconds, resident memory, open fds, start time) and the Node.js runtime's `nodejs_*`
 * (event loop lag, heap, GC), as a Go component carries `process_*` and `go_*`. No default labels:
 * Prometheus' `job`/`instance` name the component, as for upstream's binaries.
 */
export function newRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * metricOnce returns the metric registered under name on registry, making it with make() on the
 * first call. Shared machinery (workqueue, REST client metrics) registers its families through it,
 * so several queues or clients of one component share one family each, as upstream's do.
 */
export function metricOnce<M extends Metric>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}
