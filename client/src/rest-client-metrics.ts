/**
 * REST client metrics under client-go's names (component-base/metrics/prometheus/restclient):
 * rest_client_requests_total{code,method,host}, rest_client_request_duration_seconds{verb,host},
 * rest_client_rate_limiter_duration_seconds{verb,host}. Every RestClientset given one records
 * each attempt it sends.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { metricOnce } from '@mk8s/component-base';

/** Hooks RestClientset calls; synchronous, never throw. */
export interface RestClientMetrics {
  /** One request attempt ended: code is the HTTP status, or '<error>' when no response came back (client-go's value). */
  observeRequest(o: { method: string; host: string; code: string; seconds: number }): void;
  /** Time spent waiting for the client-side rate limiter before a request. */
  observeRateLimiterWait(o: { method: string; host: string; seconds: number }): void;
}

/** client-go's request latency buckets. */
const LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** newRestClientMetrics registers the families on registry (once; clients of one component share them). */
export function newRestClientMetrics(registry: Registry): RestClientMetrics {
  const total = metricOnce(registry, 'rest_client_requests_total', () => new Counter({
    name: 'rest_client_requests_total', help: 'Number of HTTP requests, partitioned by status code, method, and host.', labelNames: ['code', 'method', 'host'], registers: [registry],
  }));
  const latency = metricOnce(registry, 'rest_client_request_duration_seconds', () => new Histogram({
    name: 'rest_client_request_duration_seconds', help: 'Request latency in seconds. Broken down by verb, and host.', labelNames: ['verb', 'host'], buckets: LATENCY_BUCKETS, registers: [registry],
  }));
  const limiter = metricOnce(registry, 'rest_client_rate_limiter_duration_seconds', () => new Histogram({
    name: 'rest_client_rate_limiter_duration_seconds', help: 'Client side rate limiter latency in seconds. Broken down by verb, and host.', labelNames: ['verb', 'host'], buckets: LATENCY_BUCKETS, registers: [registry],
  }));
  return {
    observeRequest({ method, host, code, seconds }) {
      total.inc({ code, method, host });
      latency.observe({ verb: method, host }, seconds);
    },
    observeRateLimiterWait({ method, host, seconds }) { limiter.observe({ verb: method, host }, seconds); },
  };
}
