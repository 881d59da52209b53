/**
 * apiserver metrics, named as upstream's (apiserver_request_total etc.). One registry per server
 * instance so several servers can live in one test process.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class ApiServerMetrics {
  readonly registry: Registry;
  readonly requestTotal: Counter<'verb' | 'resource' | 'subresource' | 'code'>;
  readonly requestDuration: Histogram<'verb' | 'resource' | 'subresource'>;
  readonly registeredWatchers: Gauge<'resource'>;

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    this.requestTotal = new Counter({
      name: 'apiserver_request_total', help: 'Counter of apiserver requests broken out by verb, resource and HTTP response code.',
      labelNames: ['verb', 'resource', 'subresource', 'code'], registers: [registry],
    });
    this.requestDuration = new Histogram({
      name: 'apiserver_request_duration_seconds', help: 'Response latency distribution in seconds for each verb and resource.',
      labelNames: ['verb', 'resource', 'subresource'], registers: [registry],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
    });
    this.registeredWatchers = new Gauge({
      name: 'apiserver_registered_watchers', help: 'Number of currently registered watchers for a given resource.',
      labelNames: ['resource'], registers: [registry],
    });
  }
}
