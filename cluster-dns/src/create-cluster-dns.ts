/**
 * createClusterDns: the DNS server as a Component. Shared informers on Services, EndpointSlices
 * and Namespaces (and Pods in `pods: verified` mode) feed the record store; the DNS listeners
 * answer from it. /readyz turns ready only once every cache has synced (so the kube-dns Service
 * sends no query to a replica that would answer NXDOMAIN for lack of data); /healthz is the
 * process; /metrics carries CoreDNS' metric names.
 */
import { EndpointSlices, Namespaces, Pods, Services } from '@mk8s/api';
import { createClientset, newInformerFactory, newRestClientMetrics, type Clientset } from '@mk8s/client';
import type { Registry } from 'prom-client';
import { newRegistry, realClock, serveHealth, silentLogger, type Clock, type Component, type Logger } from '@mk8s/component-base';
import { DnsCache, type EndpointSliceObj, type NamespaceObj, type PodObj, type ServiceObj } from './dns-cache.js';
import { newDnsMetrics } from './metrics.js';
import type { PodsMode } from './record-store.js';
import { DnsServer } from './server.js';

export interface ClusterDnsConfig {
  /** How to reach the apiserver; ignored when client is given. */
  kubeconfig?: string;
  client?: Clientset;
  /** The registry /metrics serves (main passes the one its clientset records into). @default newRegistry() */
  registry?: Registry;
  /** @default 'cluster.local' */
  clusterDomain?: string;
  /** DNS port (UDP and TCP); 0 picks one. @default 53 */
  port?: number;
  /** @default '0.0.0.0' */
  bindAddress?: string;
  /** /healthz, /readyz, /metrics (CoreDNS serves metrics on 9153); 0 picks; -1 none. @default 9153 */
  healthPort?: number;
  /** @default '0.0.0.0' */
  healthBindAddress?: string;
  /** "ip[:port]" for names outside the zone; none: they are REFUSED. */
  upstream?: string;
  /** @default 'insecure' */
  pods?: PodsMode;
  /** @default 5 */
  ttl?: number;
  /**
   * After the stop signal, keep answering this long with /readyz failing (CoreDNS' health
   * lameduck): the Service drops this replica before its socket closes. @default 0
   */
  lameduckMs?: number;
  /** The kube-dns Service IP (apex NS glue). */
  nameserverIp?: string;
  logger?: Logger;
  clock?: Clock;
}

export interface ClusterDnsComponent extends Component {
  /** The DNS port, once listening. */
  readonly port: Promise<number>;
  /** The health/metrics port, once listening. */
  readonly healthPort: Promise<number>;
  readonly cache: DnsCache;
}

export function createClusterDns(cfg: ClusterDnsConfig): ClusterDnsComponent {
  const log = cfg.logger ?? silentLogger();
  const registry = cfg.registry ?? newRegistry();
  const client = cfg.client ?? createClientset({ ...(cfg.kubeconfig ? { kubeconfig: cfg.kubeconfig } : {}), userAgent: 'cluster-dns', logger: log, metrics: newRestClientMetrics(registry) });
  const factory = newInformerFactory({ client, clock: cfg.clock ?? realClock, logger: log });
  const metrics = newDnsMetrics(registry);
  const pods = cfg.pods ?? 'insecure';
  const server = `dns://${cfg.bindAddress ?? '0.0.0.0'}:${cfg.port ?? 53}`;
  const cache: DnsCache = new DnsCache({
    records: { zone: cfg.clusterDomain ?? 'cluster.local', pods, ttl: cfg.ttl ?? 5, ...(cfg.nameserverIp ? { nameserverIp: cfg.nameserverIp } : {}) },
    services: factory.informerFor<ServiceObj>(Services),
    endpointSlices: factory.informerFor<EndpointSliceObj>(EndpointSlices),
    namespaces: factory.informerFor<NamespaceObj>(Namespaces),
    ...(pods === 'verified' ? { pods: factory.informerFor<PodObj>(Pods) } : {}),
    onChange: () => metrics.cacheEntries.labels(server, 'records').set(cache?.store.size() ?? 0),
  });
  let markReady!: () => void;
  const ready = new Promise<void>((r) => { markReady = r; });
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => { resolvePort = r; });
  let resolveHealth!: (p: number) => void;
  const healthPort = new Promise<number>((r) => { resolveHealth = r; });

  return {
    name: 'cluster-dns',
    ready, port, healthPort, cache,
    async run(signal) {
      const dns = new DnsServer({ store: cache.store, port: cfg.port ?? 53, host: cfg.bindAddress ?? '0.0.0.0', metrics, logger: log, ...(cfg.upstream ? { upstream: cfg.upstream } : {}) });
      let health: { close(): Promise<void> } | undefined;
      let draining = false;
      try {
        // Health first: the kubelet's liveness probe must answer while the caches fill.
        if ((cfg.healthPort ?? 9153) >= 0) {
          const h = await serveHealth({ port: cfg.healthPort ?? 9153, host: cfg.healthBindAddress ?? '0.0.0.0', registry, isReady: () => cache.hasSynced() && !draining });
          health = h;
          resolveHealth(h.port);
        }
        // Listening before the sync (as CoreDNS): queries are answered from what is known so far;
        // readiness keeps the Service from sending any until the caches are full.
        const p = await dns.listen();
        resolvePort(p);
        log.info({ port: p, zone: cache.store.zone, upstream: cfg.upstream ?? null }, 'Serving DNS');
        factory.start(signal);
        if (!(await factory.waitForCacheSync(signal))) return;
        metrics.cacheEntries.labels(server, 'records').set(cache.store.size());
        log.info({ records: cache.store.size() }, 'Synced caches, ready');
        markReady();
        await new Promise<void>((r) => { if (signal.aborted) r(); else signal.addEventListener('abort', () => r(), { once: true }); });
        if (cfg.lameduckMs) {
          draining = true;
          log.info({ lameduckMs: cfg.lameduckMs }, 'Stopping: not ready, still answering (lameduck)');
          await new Promise((r) => setTimeout(r, cfg.lameduckMs));
        }
      } finally {
        await dns.close();
        await health?.close();
      }
    },
  };
}
