/**
 * metrics-server's own /metrics, with upstream's names: kubelet scrape outcomes and durations, the
 * scrape loop's tick duration, points held, and the API's request counts.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface MetricsServerMetrics {
  /** metrics_server_kubelet_request_total{success} */
  kubeletRequests: Counter<'success'>;
  /** metrics_server_kubelet_request_duration_seconds{node} */
  kubeletRequestDuration: Histogram<'node'>;
  /** metrics_server_kubelet_last_request_time_seconds{node} */
  kubeletLastRequest: Gauge<'node'>;
  /** metrics_server_manager_tick_duration_seconds */
  tickDuration: Histogram;
  /** metrics_server_storage_points{type} */
  storagePoints: Gauge<'type'>;
  /** metrics_server_api_metric_freshness_seconds: how old the data served is */
  freshness: Histogram;
  /** apiserver_request_total{verb,resource,code}: what the serving side answered */
  requests: Counter<'verb' | 'resource' | 'code'>;
}

export function newMetricsServerMetrics(registry: Registry): MetricsServerMetrics {
  const registers = [registry];
  return {
    kubeletRequests: new Counter({ name: 'metrics_server_kubelet_request_total', help: 'Number of requests sent to Kubelet API', labelNames: ['success'], registers }),
    kubeletRequestDuration: new Histogram({ name: 'metrics_server_kubelet_request_duration_seconds', help: 'Duration of requests to Kubelet API in seconds', labelNames: ['node'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers }),
    kubeletLastRequest: new Gauge({ name: 'metrics_server_kubelet_last_request_time_seconds', help: 'Time of last request performed to Kubelet API since unix epoch in seconds', labelNames: ['node'], registers }),
    tickDuration: new Histogram({ name: 'metrics_server_manager_tick_duration_seconds', help: 'The total time spent collecting and storing metrics in seconds.', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15], registers }),
    storagePoints: new Gauge({ name: 'metrics_server_storage_points', help: 'Number of metrics points stored.', labelNames: ['type'], registers }),
    freshness: new Histogram({ name: 'metrics_server_api_metric_freshness_seconds', help: 'Freshness of metrics exported', buckets: [1, 1.364, 1.8604, 2.5374, 3.4608, 4.7201, 6.4378, 8.7806, 11.9758, 16.3337, 22.2776, 30], registers }),
    requests: new Counter({ name: 'apiserver_request_total', help: 'Counter of apiserver requests broken out for each verb, group, version, resource and HTTP response code.', labelNames: ['verb', 'resource', 'code'], registers }),
  };
}
