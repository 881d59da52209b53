/**
 * createKubeProxy: kube-proxy as a Component (cmd/kube-proxy/app). Informers on Services and
 * EndpointSlices feed the Proxier; /healthz (healthy once rules are synced) and /metrics are
 * served on healthPort, /metrics also on metricsPort. With routeAgent set it also runs the node
 * route agent of @mk8s/cni in this process (host-gw routes + the CNI conflist; see README).
 */
import { EndpointSlices, Services } from '@mk8s/api';
import { createClientset, newInformerFactory, newRestClientMetrics, newWorkqueueMetricsProvider, type Clientset } from '@mk8s/client';
import { newRegistry, realClock, serveHealth, silentLogger, type Clock, type Component, type Logger } from '@mk8s/component-base';
import { NodeRouteAgent } from '@mk8s/cni';
import { ExecIptablesRunner, type IptablesRunner } from './iptables.js';
import { newProxyMetrics } from './metrics.js';
import { Proxier, type EndpointSliceObj, type ServiceObj } from './proxier.js';

export interface KubeProxyConfig {
  /** How to reach the apiserver; ignored when client is given. */
  kubeconfig?: string;
  client?: Clientset;
  nodeName: string;
  /** @default '10.244.0.0/16' */
  clusterCidr?: string;
  /** @default 1000 */
  minSyncPeriodMs?: number;
  /** @default 30000 */
  syncPeriodMs?: number;
  /** /healthz, /readyz, /metrics; 0 picks one; -1 serves nothing. @default 10256 */
  healthPort?: number;
  /** @default '127.0.0.1' */
  healthBindAddress?: string;
  /** A second /metrics listener (upstream 10249); -1 or undefined: none. */
  metricsPort?: number;
  /** @default '127.0.0.1' */
  metricsBindAddress?: string;
  iptables?: IptablesRunner;
  /** Run the node route agent in this process. */
  routeAgent?: { cniConfDir?: string; cniDataDir?: string };
  logger?: Logger;
  clock?: Clock;
}

export interface KubeProxyComponent extends Component {
  readonly proxier: Proxier;
  /** The port /healthz listens on, once serving. */
  readonly healthPort: Promise<number>;
}

export function createKubeProxy(cfg: KubeProxyConfig): KubeProxyComponent {
  const log = cfg.logger ?? silentLogger();
  const clock = cfg.clock ?? realClock;
  const registry = newRegistry();
  const client = cfg.client ?? createClientset({ ...(cfg.kubeconfig ? { kubeconfig: cfg.kubeconfig } : {}), userAgent: 'kube-proxy', logger: log, metrics: newRestClientMetrics(registry) });
  const factory = newInformerFactory({ client, clock, logger: log });
  const metrics = newProxyMetrics(registry);
  // A runner made here is ours to close (its waiting iptables-restore); a given one is the caller's.
  const ownRunner = cfg.iptables ? undefined : new ExecIptablesRunner();
  const proxier = new Proxier({
    services: factory.informerFor<ServiceObj>(Services),
    endpointSlices: factory.informerFor<EndpointSliceObj>(EndpointSlices),
    iptables: cfg.iptables ?? ownRunner!,
    clusterCidr: cfg.clusterCidr ?? '10.244.0.0/16',
    minSyncPeriodMs: cfg.minSyncPeriodMs ?? 1000,
    syncPeriodMs: cfg.syncPeriodMs ?? 30_000,
    clock, logger: log.child({ component: 'proxier' }), metrics,
  });
  const agent = cfg.routeAgent
    ? new NodeRouteAgent({ nodeName: cfg.nodeName, informers: factory, queueMetrics: newWorkqueueMetricsProvider(registry), logger: log.child({ component: 'route-agent' }), ...(cfg.routeAgent.cniConfDir ? { cniConfDir: cfg.routeAgent.cniConfDir } : {}), ...(cfg.routeAgent.cniDataDir ? { cniDataDir: cfg.routeAgent.cniDataDir } : {}) })
    : undefined;
  let markReady!: () => void;
  const ready = new Promise<void>((r) => { markReady = r; });
  let resolvePort!: (p: number) => void;
  const healthPort = new Promise<number>((r) => { resolvePort = r; });

  return {
    name: 'kube-proxy',
    ready,
    proxier,
    healthPort,
    async run(signal) {
      const servers: { close(): Promise<void> }[] = [];
      try {
        if ((cfg.healthPort ?? 10256) >= 0) {
          const s = await serveHealth({ port: cfg.healthPort ?? 10256, host: cfg.healthBindAddress ?? '127.0.0.1', registry, isReady: () => proxier.healthy(), isHealthy: () => proxier.healthy() });
          servers.push(s);
          resolvePort(s.port);
        }
        if (cfg.metricsPort !== undefined && cfg.metricsPort >= 0) {
          servers.push(await serveHealth({ port: cfg.metricsPort, host: cfg.metricsBindAddress ?? '127.0.0.1', registry, isReady: () => proxier.healthy() }));
        }
        factory.start(signal);
        if (!(await factory.waitForCacheSync(signal))) return;
        proxier.start();
        void proxier.nextSync().then(() => { log.info({ node: cfg.nodeName }, 'Synced proxy rules for the first time'); markReady(); });
        const agentRun = agent?.run(signal);
        await new Promise<void>((r) => { if (signal.aborted) r(); else signal.addEventListener('abort', () => r(), { once: true }); });
        proxier.stop();
        await agentRun;
      } finally {
        ownRunner?.close();
        await Promise.all(servers.map((s) => s.close()));
      }
    },
  };
}
