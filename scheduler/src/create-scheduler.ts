/**
 * createScheduler: the scheduler as a Component (cmd/kube-scheduler/app). Informers run from the
 * start so a standby has a warm cache; the scheduling loop runs only while this process holds the
 * Lease kube-system/kube-scheduler. /healthz, /readyz and /metrics are served on healthPort.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import {
  Namespaces, Nodes, PriorityClasses, Pods, ReplicaSets, Services,
  type Namespace, type PriorityClass, type ReplicaSet, type Service,
} from '@mk8s/api';
import { createClientset, createEventRecorder, newInformerFactory, runLeaderElection, type Clientset, type EventRecorder, type SharedInformer } from '@mk8s/client';
import { newRegistry, realClock, serveHealth, silentLogger, type Clock, type Component, type Logger } from '@mk8s/component-base';
import type { ProfileConfig } from './framework/framework.js';
import type { PluginFactory } from './framework/interfaces.js';
import type { Node, Pod } from './framework/types.js';
import { newSchedulerMetrics } from './metrics.js';
import { Scheduler } from './scheduler.js';

export interface SchedulerConfig {
  /** How to reach the apiserver; ignored when client is given. */
  kubeconfig?: string;
  client?: Clientset;
  /** /healthz, /readyz, /metrics port; 0 picks a free one; -1 serves nothing. @default 10259 */
  healthPort?: number;
  /** @default '127.0.0.1' */
  healthHost?: string;
  /** Campaign for the Lease before scheduling. @default true */
  leaderElect?: boolean;
  /** The Lease holder identity. @default `${hostname}_${uuid}` */
  identity?: string;
  leaderElection?: { leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number; namespace?: string; name?: string };
  profile?: ProfileConfig;
  /** Per-pod backoff bounds. @default 1000 / 10000 */
  podInitialBackoffMs?: number;
  podMaxBackoffMs?: number;
  registry?: Record<string, PluginFactory>;
  /** Client-side rate limit for the clientset built here. @default 1000 / burst 2000 */
  qps?: number;
  burst?: number;
  logger?: Logger;
  clock?: Clock;
}

export interface SchedulerComponent extends Component {
  /** The port /healthz listens on, once serving. */
  readonly healthPort: Promise<number>;
  /** The Scheduler (its cache and queue), for tests and benchmarks. */
  readonly scheduler: Scheduler;
  /** True while this instance holds the lease (or leader election is off and it runs). */
  isLeader(): boolean;
}

export function createScheduler(cfg: SchedulerConfig = {}): SchedulerComponent {
  const log = cfg.logger ?? silentLogger();
  const clock = cfg.clock ?? realClock;
  const client = cfg.client ?? createClientset({
    ...(cfg.kubeconfig ? { kubeconfig: cfg.kubeconfig } : {}),
    userAgent: 'kube-scheduler', qps: cfg.qps ?? 1000, burst: cfg.burst ?? 2000, logger: log,
  });
  const schedulerName = cfg.profile?.schedulerName ?? 'default-scheduler';
  const recorder: EventRecorder = createEventRecorder({ client, component: schedulerName, clock, logger: log });
  const factory = newInformerFactory({ client, clock, logger: log });
  const pods = factory.informerFor<Pod & { [k: string]: unknown }>(Pods);
  const nodes = factory.informerFor<Node & { [k: string]: unknown }>(Nodes);
  const priorityClasses = factory.informerFor(PriorityClasses) as unknown as SharedInformer<PriorityClass & { metadata: { name: string } } & { [k: string]: unknown }>;
  const namespaces = factory.informerFor(Namespaces) as unknown as SharedInformer<Namespace & { metadata: { name: string } } & { [k: string]: unknown }>;
  const services = factory.informerFor(Services) as unknown as SharedInformer<Service & { metadata: { name: string } } & { [k: string]: unknown }>;
  const replicaSets = factory.informerFor(ReplicaSets) as unknown as SharedInformer<ReplicaSet & { metadata: { name: string } } & { [k: string]: unknown }>;

  const registry = newRegistry('scheduler');
  let sched: Scheduler;
  const metrics = newSchedulerMetrics(registry, () => sched.queue.pendingPods());
  sched = new Scheduler({
    client, recorder, clock, logger: log, metrics,
    ...(cfg.profile ? { profile: cfg.profile } : {}),
    ...(cfg.registry ? { registry: cfg.registry } : {}),
    ...(cfg.podInitialBackoffMs !== undefined ? { podInitialBackoffMs: cfg.podInitialBackoffMs } : {}),
    ...(cfg.podMaxBackoffMs !== undefined ? { podMaxBackoffMs: cfg.podMaxBackoffMs } : {}),
    namespaceLabels: (ns) => namespaces.lister.get(ns)?.metadata.labels,
    services: (ns) => services.lister.list(ns),
    replicaSets: (ns) => replicaSets.lister.list(ns),
    priorityClassValue: (name) => priorityClasses.lister.get(name)?.value,
    defaultPriority: () => priorityClasses.lister.list().find((pc) => pc.globalDefault)?.value,
  });
  pods.addEventHandler({
    onAdd: (p) => sched.onPodAdd(p),
    onUpdate: (o, p) => sched.onPodUpdate(o, p),
    onDelete: (p) => sched.onPodDelete(p),
  });
  nodes.addEventHandler({
    onAdd: (n) => sched.onNodeAdd(n),
    onUpdate: (o, n) => sched.onNodeUpdate(o, n),
    onDelete: (n) => sched.onNodeDelete(n),
  });
  // A new PriorityClass may resolve the priority of pods already queued.
  priorityClasses.addEventHandler({ onAdd: () => sched.queue.moveAllToActiveOrBackoffQueue('ForceActivate') });

  let synced = false;
  let leading = false;
  let resolveReady!: () => void;
  let rejectReady!: (err: unknown) => void;
  const ready = new Promise<void>((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => undefined);
  let resolvePort!: (p: number) => void;
  const healthPort = new Promise<number>((res) => { resolvePort = res; });

  async function run(signal: AbortSignal): Promise<void> {
    // Six informers, the election and every in-flight request listen on this one signal.
    setMaxListeners(0, signal);
    const port = cfg.healthPort ?? 10259;
    const health = port >= 0
      ? await serveHealth({ port, host: cfg.healthHost ?? '127.0.0.1', registry, isReady: () => synced }).catch((err: unknown) => { rejectReady(err); throw err; })
      : undefined;
    resolvePort(health?.port ?? -1);
    try {
      factory.start(signal);
      if (!(await factory.waitForCacheSync(signal))) return;
      synced = true;
      resolveReady();
      log.info({ nodes: nodes.lister.list().length, pods: pods.lister.list().length }, 'Synced scheduler caches');
      if (cfg.leaderElect === false) {
        leading = true;
        await sched.run(signal);
        return;
      }
      let loop: Promise<void> | undefined;
      await runLeaderElection({
        client, signal, clock, logger: log,
        lock: { namespace: cfg.leaderElection?.namespace ?? 'kube-system', name: cfg.leaderElection?.name ?? 'kube-scheduler' },
        identity: cfg.identity ?? `${hostname()}_${randomUUID()}`,
        ...(cfg.leaderElection?.leaseDurationMs ? { leaseDurationMs: cfg.leaderElection.leaseDurationMs } : {}),
        ...(cfg.leaderElection?.renewDeadlineMs ? { renewDeadlineMs: cfg.leaderElection.renewDeadlineMs } : {}),
        ...(cfg.leaderElection?.retryPeriodMs ? { retryPeriodMs: cfg.leaderElection.retryPeriodMs } : {}),
        onStartedLeading: (leadingSignal) => {
          leading = true;
          log.info({}, 'Started leading');
          loop = sched.run(leadingSignal).finally(() => { leading = false; });
        },
        onNewLeader: (id) => log.info({ leader: id }, 'New leader elected'),
      });
      await loop;
      // Upstream exits on lost leadership so a restart begins from a clean cache; do the same.
      if (!signal.aborted && loop) throw new Error('leaderelection lost');
    } finally {
      await sched.waitForPendingWrites();
      await (recorder as { flush?: () => Promise<void> }).flush?.();
      await health?.close();
    }
  }

  return { name: 'scheduler', ready, run, healthPort, scheduler: sched, isLeader: () => leading };
}
