/**
 * createControllerManager: every controller in one Component (cmd/kube-controller-manager).
 * Informers start at once so a standby has warm caches; controllers' workers run only while this
 * process holds the Lease kube-system/kube-controller-manager. Losing the lease ends run() with an
 * error (upstream exits so that a restart begins from clean state). /healthz, /readyz and
 * /metrics (workqueue depth, reconcile latency and errors per controller) on healthPort.
 */
import {
  createClientset, createEventRecorder, newInformerFactory, newLeaderElectedComponent, newWorkerMetrics, newWorkqueueMetricsProvider, newRestClientMetrics,
  type Clientset, type EventRecorderWithFlush, type LeaderElectedComponent, type LeaderElectionConfig,
} from '@mk8s/client';
import { newRegistry, realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';
import type { Controller, ControllerContext } from './controller.js';
import { DeploymentController } from './controllers/deployment/deployment.js';
import { EndpointsController } from './controllers/endpoints/endpoints.js';
import { EndpointSliceController } from './controllers/endpointslice/endpointslice.js';
import { GarbageCollector } from './controllers/garbagecollector/garbagecollector.js';
import { NamespaceController } from './controllers/namespace/namespace.js';
import { NodeIpamController } from './controllers/nodeipam/nodeipam.js';
import { NodeLifecycleController } from './controllers/nodelifecycle/nodelifecycle.js';
import { ReplicaSetController } from './controllers/replicaset/replicaset.js';
import { createReplicationManager } from './controllers/replicationcontroller/replication-controller.js';
import { ResourceQuotaController } from './controllers/resourcequota/resourcequota.js';
import { ServiceAccountController } from './controllers/serviceaccount/serviceaccount.js';
import { JobController } from './controllers/job/job.js';
import { CronJobController } from './controllers/cronjob/cronjob.js';
import { TTLAfterFinishedController } from './controllers/ttlafterfinished/ttlafterfinished.js';
import { PodGCController } from './controllers/podgc/podgc.js';
import { DaemonSetController } from './controllers/daemonset/daemonset.js';
import { StatefulSetController } from './controllers/statefulset/statefulset.js';
import { DisruptionController } from './controllers/disruption/disruption.js';
import { HorizontalController } from './controllers/podautoscaler/horizontal.js';
import { RootCACertPublisher } from './controllers/rootcacertpublisher/rootcacertpublisher.js';
import { CsrSigningController } from './controllers/certificates/signer.js';
import { CsrApprovingController } from './controllers/certificates/approver.js';
import { PersistentVolumeController } from './controllers/persistentvolume/pv-controller.js';
import { PVCProtectionController, PVProtectionController } from './controllers/persistentvolume/protection.js';
import { LocalPathProvisioner } from './controllers/localpath/local-path-provisioner.js';

export interface ControllerManagerConfig {
  /** How to reach the apiserver; ignored when client is given. */
  kubeconfig?: string;
  client?: Clientset;
  /** /healthz, /readyz, /metrics port; 0 picks a free one; -1 serves nothing. @default 10257 */
  healthPort?: number;
  /** @default '127.0.0.1' */
  healthHost?: string;
  /** @default true */
  leaderElect?: boolean;
  /** Lease holder identity. @default `${hostname}_${uuid}` */
  identity?: string;
  leaderElection?: LeaderElectionConfig;
  /** Which controllers run, as upstream's --controllers: '*' (all), 'name', '-name'. @default ['*'] */
  controllers?: readonly string[];
  /** Node lifecycle: no heartbeat/lease renewal for this long → Unknown. @default 50_000 */
  nodeMonitorGracePeriodMs?: number;
  /** @default 5_000 */
  nodeMonitorPeriodMs?: number;
  /** @default 60_000 */
  nodeStartupGracePeriodMs?: number;
  /** tolerationSeconds for not-ready/unreachable given to pods that set none. @default 300 */
  defaultTolerationSeconds?: number;
  /** Node lifecycle eviction rate per zone (nodes/s). @default 0.1 */
  evictionQPS?: number;
  /** @default '10.244.0.0/16' */
  clusterCIDR?: string;
  /** @default 24 */
  nodeCIDRMaskSize?: number;
  /**
   * The cluster CA bundle (PEM; --root-ca-file) the root-ca-cert-publisher puts in every namespace's
   * kube-root-ca.crt ConfigMap. @default none: that controller does not run
   */
  rootCA?: string;
  /**
   * The CA the csrsigning controller signs CertificateSigningRequests with (PEM files;
   * --cluster-signing-cert-file / --cluster-signing-key-file). @default none: that controller does not run
   */
  clusterSigningCertFile?: string;
  clusterSigningKeyFile?: string;
  /** Longest certificate csrsigning issues (--cluster-signing-duration). @default one year */
  clusterSigningDurationMs?: number;
  /** HPA sync period (--horizontal-pod-autoscaler-sync-period). @default 15_000 */
  hpaSyncPeriodMs?: number;
  /** --horizontal-pod-autoscaler-downscale-stabilization. @default 300_000 */
  hpaDownscaleStabilizationMs?: number;
  /** --horizontal-pod-autoscaler-tolerance. @default 0.1 */
  hpaTolerance?: number;
  /** Terminated pods the pod GC keeps (--terminated-pod-gc-threshold); ≤ 0: no limit. @default 12500 */
  terminatedPodGCThreshold?: number;
  /** Workers per controller (by name). */
  workers?: Partial<Record<string, number>>;
  /** Client rate limit of the clientset built here. @default 1000 / burst 2000 */
  qps?: number;
  burst?: number;
  logger?: Logger;
  clock?: Clock;
}

export interface ControllerManagerComponent extends LeaderElectedComponent {
  /** The controllers built (for tests and benchmarks). */
  readonly controllers: ReadonlyMap<string, Controller>;
}

/** Builds a controller; undefined when its configuration is missing (it is then skipped, as upstream does). */
type Factory = (ctx: ControllerContext, cfg: ControllerManagerConfig) => Controller | undefined;

/** Every controller, by name, with the event source component upstream uses. */
export const KNOWN_CONTROLLERS: Record<string, { component: string; create: Factory; aliases: string[] }> = {
  replicaset: { component: 'replicaset-controller', aliases: ['replicaset-controller'], create: (ctx) => new ReplicaSetController(ctx) },
  replicationcontroller: { component: 'replication-controller', aliases: ['replicationcontroller-controller'], create: (ctx) => createReplicationManager(ctx) },
  resourcequota: { component: 'resourcequota-controller', aliases: ['resourcequota-controller', 'resource-quota-controller'], create: (ctx) => new ResourceQuotaController(ctx) },
  deployment: { component: 'deployment-controller', aliases: ['deployment-controller'], create: (ctx) => new DeploymentController(ctx) },
  garbagecollector: { component: 'garbage-collector-controller', aliases: ['garbage-collector-controller'], create: (ctx) => new GarbageCollector(ctx) },
  namespace: { component: 'namespace-controller', aliases: ['namespace-controller'], create: (ctx) => new NamespaceController(ctx) },
  endpoints: { component: 'endpoint-controller', aliases: ['endpoint', 'endpoints-controller'], create: (ctx) => new EndpointsController(ctx) },
  endpointslice: { component: 'endpoint-slice-controller', aliases: ['endpointslice-controller'], create: (ctx) => new EndpointSliceController(ctx) },
  nodelifecycle: {
    component: 'node-controller', aliases: ['node-lifecycle-controller', 'nodelifecycle-controller'],
    create: (ctx, cfg) => new NodeLifecycleController(ctx, {
      ...(cfg.nodeMonitorGracePeriodMs !== undefined ? { nodeMonitorGracePeriodMs: cfg.nodeMonitorGracePeriodMs } : {}),
      ...(cfg.nodeMonitorPeriodMs !== undefined ? { nodeMonitorPeriodMs: cfg.nodeMonitorPeriodMs } : {}),
      ...(cfg.nodeStartupGracePeriodMs !== undefined ? { nodeStartupGracePeriodMs: cfg.nodeStartupGracePeriodMs } : {}),
      ...(cfg.defaultTolerationSeconds !== undefined ? { defaultTolerationSeconds: cfg.defaultTolerationSeconds } : {}),
      ...(cfg.evictionQPS !== undefined ? { evictionQPS: cfg.evictionQPS } : {}),
    }),
  },
  serviceaccount: { component: 'service-account-controller', aliases: ['serviceaccount-controller'], create: (ctx) => new ServiceAccountController(ctx) },
  'root-ca-cert-publisher': {
    component: 'root-ca-cert-publisher', aliases: ['root-ca-certificate-publisher-controller'],
    create: (ctx, cfg) => (cfg.rootCA ? new RootCACertPublisher(ctx, { rootCA: cfg.rootCA }) : undefined),
  },
  'persistentvolume-binder': { component: 'persistentvolume-controller', aliases: ['persistentvolume-binder-controller'], create: (ctx) => new PersistentVolumeController(ctx) },
  'persistentvolumeclaim-protection': { component: 'persistentvolumeclaim-protection-controller', aliases: ['pvc-protection', 'persistentvolumeclaim-protection-controller'], create: (ctx) => new PVCProtectionController(ctx) },
  'persistentvolume-protection': { component: 'persistentvolume-protection-controller', aliases: ['pv-protection', 'persistentvolume-protection-controller'], create: (ctx) => new PVProtectionController(ctx) },
  'local-path-provisioner': { component: 'mk8s.io/local-path_controller-manager', aliases: ['local-path'], create: (ctx) => new LocalPathProvisioner(ctx) },
  nodeipam: {
    component: 'node-ipam-controller', aliases: ['node-ipam-controller', 'nodeipam-controller'],
    create: (ctx, cfg) => new NodeIpamController(ctx, {
      ...(cfg.clusterCIDR ? { clusterCIDR: cfg.clusterCIDR } : {}),
      ...(cfg.nodeCIDRMaskSize ? { nodeCIDRMaskSize: cfg.nodeCIDRMaskSize } : {}),
    }),
  },
  job: { component: 'job-controller', aliases: ['job-controller'], create: (ctx) => new JobController(ctx) },
  cronjob: { component: 'cronjob-controller', aliases: ['cronjob-controller'], create: (ctx) => new CronJobController(ctx) },
  podgc: {
    component: 'pod-garbage-collector-controller', aliases: ['pod-garbage-collector', 'pod-garbage-collector-controller'],
    create: (ctx, cfg) => new PodGCController(ctx, cfg.terminatedPodGCThreshold !== undefined && Number.isFinite(cfg.terminatedPodGCThreshold) ? { terminatedPodThreshold: cfg.terminatedPodGCThreshold } : {}),
  },
  'ttl-after-finished': { component: 'ttl-after-finished-controller', aliases: ['ttl-after-finished-controller'], create: (ctx) => new TTLAfterFinishedController(ctx) },
  daemonset: { component: 'daemonset-controller', aliases: ['daemonset-controller'], create: (ctx) => new DaemonSetController(ctx) },
  statefulset: { component: 'statefulset-controller', aliases: ['statefulset-controller'], create: (ctx) => new StatefulSetController(ctx) },
  csrsigning: {
    component: 'csrsigning-controller', aliases: ['certificatesigningrequest-signing-controller'],
    create: (ctx, cfg) => (cfg.clusterSigningCertFile && cfg.clusterSigningKeyFile ? new CsrSigningController(ctx, {
      certFile: cfg.clusterSigningCertFile, keyFile: cfg.clusterSigningKeyFile,
      ...(cfg.clusterSigningDurationMs !== undefined ? { durationMs: cfg.clusterSigningDurationMs } : {}),
    }) : undefined),
  },
  csrapproving: { component: 'csrapproving-controller', aliases: ['certificatesigningrequest-approving-controller'], create: (ctx) => new CsrApprovingController(ctx) },
  disruption: { component: 'controllermanager', aliases: ['disruption-controller'], create: (ctx) => new DisruptionController(ctx) },
  horizontalpodautoscaling: {
    component: 'horizontal-pod-autoscaler', aliases: ['horizontal-pod-autoscaler-controller'],
    create: (ctx, cfg) => new HorizontalController(ctx, {
      ...(cfg.hpaSyncPeriodMs !== undefined ? { syncPeriodMs: cfg.hpaSyncPeriodMs } : {}),
      ...(cfg.hpaDownscaleStabilizationMs !== undefined ? { downscaleStabilizationMs: cfg.hpaDownscaleStabilizationMs } : {}),
      ...(cfg.hpaTolerance !== undefined ? { tolerance: cfg.hpaTolerance } : {}),
    }),
  },
};

/** Resolves a --controllers list ('*', 'name', '-name', aliases) to canonical names. Throws on unknown names. */
export function selectControllers(spec: readonly string[] = ['*']): string[] {
  const canonical = (n: string): string => {
    const hit = Object.entries(KNOWN_CONTROLLERS).find(([k, v]) => k === n || v.aliases.includes(n));
    if (!hit) throw new Error(`"${n}" is not in the list of known controllers: ${Object.keys(KNOWN_CONTROLLERS).join(', ')}`);
    return hit[0];
  };
  const items = spec.flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
  const on = new Set<string>();
  const off = new Set<string>();
  for (const it of items) {
    if (it === '*') Object.keys(KNOWN_CONTROLLERS).forEach((k) => on.add(k));
    else if (it.startsWith('-')) off.add(canonical(it.slice(1)));
    else on.add(canonical(it));
  }
  return Object.keys(KNOWN_CONTROLLERS).filter((k) => on.has(k) && !off.has(k));
}

export function createControllerManager(cfg: ControllerManagerConfig = {}): ControllerManagerComponent {
  const log = cfg.logger ?? silentLogger();
  const clock = cfg.clock ?? realClock;
  const registry = newRegistry();
  let fence: (req: { method: string; path: string }) => Error | undefined = () => undefined;
  const client = cfg.client ?? createClientset({
    ...(cfg.kubeconfig ? { kubeconfig: cfg.kubeconfig } : {}),
    userAgent: 'kube-controller-manager', qps: cfg.qps ?? 1000, burst: cfg.burst ?? 2000, logger: log,
    metrics: newRestClientMetrics(registry),
    // No write once the Lease may have passed on (a resumed, frozen leader): see writeFence.
    writeFence: (req) => fence(req),
  });
  const informers = newInformerFactory({ client, clock, logger: log });
  const metrics = newWorkerMetrics(registry);
  const queueMetrics = newWorkqueueMetricsProvider(registry);
  const recorders: EventRecorderWithFlush[] = [];
  const controllers = new Map<string, Controller>();
  for (const name of selectControllers(cfg.controllers)) {
    const spec = KNOWN_CONTROLLERS[name]!;
    const recorder = createEventRecorder({ client, component: spec.component, clock, logger: log });
    recorders.push(recorder);
    const c = spec.create({ client, informers, clock, recorder, queueMetrics, registry, logger: log.child({ controller: name }) }, cfg);
    if (c) controllers.set(name, c); else log.info({ controller: name }, 'Skipped controller: not configured');
  }

  const runAll = async (signal: AbortSignal): Promise<void> => {
    log.info({ controllers: [...controllers.keys()] }, 'Starting controllers');
    await Promise.all([...controllers.entries()].map(([name, c]) =>
      c.run(signal, { metrics, ...(cfg.workers?.[name] ? { workers: cfg.workers[name] } : {}) })
        .catch((err: unknown) => { log.error({ err, controller: name }, 'Controller stopped with an error'); })));
  };

  const component = newLeaderElectedComponent({
    name: 'controller-manager', leaseName: 'kube-controller-manager',
    client, clock, logger: log, registry, informers,
    healthPort: cfg.healthPort ?? 10257,
    ...(cfg.healthHost ? { healthHost: cfg.healthHost } : {}),
    ...(cfg.leaderElect !== undefined ? { leaderElect: cfg.leaderElect } : {}),
    ...(cfg.identity ? { identity: cfg.identity } : {}),
    ...(cfg.leaderElection ? { leaderElection: cfg.leaderElection } : {}),
    onSynced: () => log.info('Synced controller-manager caches'),
    lead: runAll,
    shutdown: async () => { await Promise.all(recorders.map((r) => r.flush().catch(() => undefined))); },
  });
  fence = component.writeFence;
  return { ...component, controllers };
}
