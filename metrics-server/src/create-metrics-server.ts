/**
 * createMetricsServer: metrics-server as a Component. Shared informers on Nodes (where to scrape,
 * and NodeMetrics labels) and Pods (PodMetrics labels and which pods exist); a scrape loop every
 * resolution (runEvery) feeding the storage; the secure API. Live once serving (and while ticks
 * keep coming); ready once the informers synced and the storage holds two points of something.
 */
import { Nodes, Pods, SubjectAccessReviews, TokenReviews, type KubeObject } from '@mk8s/api';
import { newInformerFactory, type Clientset } from '@mk8s/client';
import { newRegistry, realClock, runEvery, silentLogger, type Clock, type Component, type Logger } from '@mk8s/component-base';
import type { Registry } from 'prom-client';
import type { ApiSources, MetaLike } from './api.js';
import { DelegatedAuth, type RequestHeaderConfig } from './delegated-auth.js';
import { newMetricsServerMetrics } from './metrics.js';
import { kubeletTarget, Scraper, type AddressType, type KubeletClient, type KubeletTarget, type NodeLike } from './scraper.js';
import { handle, serveSecure, type HandlerDeps, type HealthCheck, type Request, type Response } from './server.js';
import { MetricsStorage } from './storage.js';

export interface MetricsServerConfig {
  client: Clientset;
  kubeletClient: KubeletClient;
  /** Serving certificate and key (PEM). */
  tls: { cert: string; key: string };
  /** @default '0.0.0.0' */
  bindAddress?: string;
  /** --secure-port; 0 picks; -1 serves nothing (tests use `handle`). @default 4443 */
  securePort?: number;
  /** --metric-resolution. @default 15000 */
  resolutionMs?: number;
  requestHeader?: RequestHeaderConfig;
  /** --client-ca-file contents */
  clientCA?: string;
  addressTypes?: readonly AddressType[];
  /** @default 10250 */
  kubeletPort?: number;
  useNodeStatusPort?: boolean;
  registry?: Registry;
  logger?: Logger;
  clock?: Clock;
}

export interface MetricsServerComponent extends Component {
  readonly port: Promise<number>;
  readonly storage: MetricsStorage;
  /** One scrape round now (tests; the loop calls it every resolution). */
  tick(signal: AbortSignal): Promise<void>;
  /** The secure port's request handler (tests call it without a socket). */
  handle(req: Request): Promise<Response>;
}

export function createMetricsServer(cfg: MetricsServerConfig): MetricsServerComponent {
  const log = cfg.logger ?? silentLogger();
  const clock = cfg.clock ?? realClock;
  const registry = cfg.registry ?? newRegistry();
  const metrics = newMetricsServerMetrics(registry);
  const resolutionMs = cfg.resolutionMs ?? 15_000;
  const storage = new MetricsStorage(resolutionMs);
  const factory = newInformerFactory({ client: cfg.client, clock, logger: log });
  const nodes = factory.informerFor<KubeObject>(Nodes);
  const pods = factory.informerFor<KubeObject>(Pods);
  const scraper = new Scraper({ client: cfg.kubeletClient, clock, logger: log, timeoutMs: Math.round(resolutionMs * 0.9), metrics });
  let lastTickMs = 0;
  let synced = false;
  const review = (path: string) => async (body: unknown) => {
    const r = await cfg.client.resource(path === 'tokenreviews' ? TokenReviews : SubjectAccessReviews).create(body as KubeObject);
    return r as { status?: never };
  };
  const auth = new DelegatedAuth({
    ...(cfg.requestHeader ? { requestHeader: cfg.requestHeader } : {}),
    ...(cfg.clientCA ? { clientCA: cfg.clientCA } : {}),
    tokenReview: review('tokenreviews'), subjectAccessReview: review('subjectaccessreviews'), now: () => clock.now(),
  });
  const sources: ApiSources = {
    storage,
    listNodes: () => nodes.lister.list() as unknown as MetaLike[],
    listPods: (ns) => pods.lister.list(ns || undefined) as unknown as MetaLike[],
    now: () => clock.now(),
  };
  const liveChecks: HealthCheck[] = [
    { name: 'ping', check: () => undefined },
    // upstream metric-collection-timely: the loop has ticked within 1.5 resolutions.
    { name: 'metric-collection-timely', check: () => (lastTickMs && clock.now() - lastTickMs > resolutionMs * 1.5 ? `last tick ${clock.now() - lastTickMs}ms ago` : undefined) },
  ];
  const readyChecks: HealthCheck[] = [
    { name: 'metric-informer-sync', check: () => (synced ? undefined : 'informers not synced') },
    { name: 'metric-storage-ready', check: () => (storage.ready() ? undefined : 'no metrics to serve') },
  ];

  async function tick(signal: AbortSignal): Promise<void> {
    const start = clock.now();
    lastTickMs = start;
    const targets: KubeletTarget[] = [];
    for (const n of nodes.lister.list()) {
      const t = kubeletTarget(n as unknown as NodeLike, { ...(cfg.addressTypes ? { addressTypes: cfg.addressTypes } : {}), port: cfg.kubeletPort ?? 10250, useNodeStatusPort: cfg.useNodeStatusPort ?? false });
      if (t) targets.push(t); else log.warn({ node: n.metadata.name }, 'Skipped node without a usable address');
    }
    const batch = await scraper.scrape(targets, signal);
    storage.store(batch);
    const pts = storage.points();
    metrics.storagePoints.labels('node').set(pts.node);
    metrics.storagePoints.labels('container').set(pts.container);
    metrics.tickDuration.observe((clock.now() - start) / 1000);
    log.debug({ nodes: batch.nodes.size, pods: batch.pods.size, ms: clock.now() - start }, 'Scraped kubelets');
  }

  const deps: HandlerDeps = { auth, sources, registry, metrics, liveChecks, readyChecks, logger: log };
  let markReady!: () => void;
  const ready = new Promise<void>((r) => { markReady = r; });
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => { resolvePort = r; });
  return {
    name: 'metrics-server',
    ready, port, storage, tick,
    handle: (req) => handle(req, deps),
    async run(signal) {
      const srv = (cfg.securePort ?? 4443) < 0 ? undefined : await serveSecure({
        host: cfg.bindAddress ?? '0.0.0.0', port: cfg.securePort ?? 4443, cert: cfg.tls.cert, key: cfg.tls.key,
        clientCAs: [cfg.requestHeader?.clientCA, cfg.clientCA].filter(Boolean).join('\n'), deps,
      });
      if (srv) {
        resolvePort(srv.port);
        log.info({ port: srv.port, resolutionMs }, 'Serving metrics.k8s.io/v1beta1');
      }
      try {
        factory.start(signal);
        if (!(await factory.waitForCacheSync(signal))) return;
        synced = true;
        markReady();
        await runEvery(resolutionMs, () => tick(signal), { clock, signal, logger: log, what: 'Scrape' });
      } finally {
        await srv?.close();
      }
    },
  };
}
