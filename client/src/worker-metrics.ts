/**
 * Prometheus metrics for runWorkers, named as controller-runtime's so dashboards carry over:
 * controller_runtime_reconcile_total{controller,result}, controller_runtime_reconcile_errors_total,
 * controller_runtime_terminal_reconcile_errors_total, controller_runtime_reconcile_time_seconds.
 * The queues' own workqueue_* families come from newWorkqueueMetricsProvider.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { metricOnce } from '@mk8s/component-base';
import type { WorkerMetrics } from './run-workers.js';

/** newWorkerMetrics registers the metrics on registry (once per registry) and returns the hooks. */
export function newWorkerMetrics(registry: Registry): WorkerMetrics {
  const get = <M extends Counter | Histogram>(name: string, make: () => M): M => metricOnce(registry, name, make);
  const total = get('controller_runtime_reconcile_total', () => new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'], registers: [registry] }));
  const errorsTotal = get('controller_runtime_reconcile_errors_total', () => new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'], registers: [registry] }));
  const terminal = get('controller_runtime_terminal_reconcile_errors_total', () => new Counter({ name: 'controller_runtime_terminal_reconcile_errors_total', help: 'Total number of terminal reconciliation errors per controller', labelNames: ['controller'], registers: [registry] }));
  const time = get('controller_runtime_reconcile_time_seconds', () => new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', labelNames: ['controller'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [registry] }));
  return {
    observeReconcile({ controller, result, durationMs }) {
      total.inc({ controller, result: result === 'requeue' ? 'requeue_after' : result === 'terminal' ? 'error' : result });
      if (result === 'error' || result === 'terminal') errorsTotal.inc({ controller });
      if (result === 'terminal') terminal.inc({ controller });
      time.observe({ controller }, durationMs / 1000);
    },
  };
}
