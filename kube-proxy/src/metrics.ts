import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** kube-proxy's metrics, named as upstream's (kubeproxy_sync_proxy_rules_*). */
export interface ProxyMetrics {
  syncDuration: Histogram;
  ruleCount: Gauge<'table'>;
  restoreFailures: Counter;
  skippedSyncs: Counter;
  lastSync: Gauge;
  servicePorts: Gauge;
  endpoints: Gauge;
}

export function newProxyMetrics(registry: Registry): ProxyMetrics {
  return {
    syncDuration: new Histogram({ name: 'kubeproxy_sync_proxy_rules_duration_seconds', help: 'SyncProxyRules latency in seconds', buckets: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384], registers: [registry] }),
    ruleCount: new Gauge({ name: 'kubeproxy_sync_proxy_rules_iptables_total', help: 'Number of iptables rules kube-proxy last wrote, per table', labelNames: ['table'], registers: [registry] }),
    restoreFailures: new Counter({ name: 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total', help: 'Number of failed iptables-restore runs', registers: [registry] }),
    skippedSyncs: new Counter({ name: 'kubeproxy_sync_proxy_rules_no_change_total', help: 'Syncs that found nothing to change and did not call iptables-restore', registers: [registry] }),
    lastSync: new Gauge({ name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds', help: 'The last time proxy rules were successfully synced', registers: [registry] }),
    servicePorts: new Gauge({ name: 'kubeproxy_sync_proxy_rules_service_ports_total', help: 'Service ports programmed in the last sync', registers: [registry] }),
    endpoints: new Gauge({ name: 'kubeproxy_sync_proxy_rules_endpoints_total', help: 'Endpoints programmed in the last sync', registers: [registry] }),
  };
}
