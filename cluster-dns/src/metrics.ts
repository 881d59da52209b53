import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Metrics under CoreDNS' names (plugin/metrics), so CoreDNS dashboards read them unchanged. */
export interface DnsMetrics {
  requests: Counter<'server' | 'zone' | 'proto' | 'family' | 'type'>;
  responses: Counter<'server' | 'zone' | 'rcode' | 'plugin'>;
  duration: Histogram<'server' | 'zone' | 'type'>;
  /** Records held in memory (CoreDNS' cache plugin gauge; here the record store). */
  cacheEntries: Gauge<'server' | 'type'>;
  forwardRequests: Counter<'to'>;
}

/** The query types CoreDNS counts by name; any other is "other" (bounded label values). */
export const COUNTED_TYPES = new Set(['A', 'AAAA', 'CNAME', 'SRV', 'PTR', 'TXT', 'SOA', 'NS', 'MX', 'ANY', 'HTTPS', 'SVCB']);

export function newDnsMetrics(registry: Registry): DnsMetrics {
  return {
    requests: new Counter({ name: 'coredns_dns_requests_total', help: 'Counter of DNS requests made per zone, protocol and family.', labelNames: ['server', 'zone', 'proto', 'family', 'type'], registers: [registry] }),
    responses: new Counter({ name: 'coredns_dns_responses_total', help: 'Counter of response status codes.', labelNames: ['server', 'zone', 'rcode', 'plugin'], registers: [registry] }),
    duration: new Histogram({ name: 'coredns_dns_request_duration_seconds', help: 'Histogram of the time (in seconds) each request took per zone.', labelNames: ['server', 'zone', 'type'],
      buckets: [0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192], registers: [registry] }),
    cacheEntries: new Gauge({ name: 'coredns_cache_entries', help: 'The number of elements in the cache.', labelNames: ['server', 'type'], registers: [registry] }),
    forwardRequests: new Counter({ name: 'coredns_forward_requests_total', help: 'Counter of requests made per upstream.', labelNames: ['to'], registers: [registry] }),
  };
}
