/**
 * createScheduler: the scheduler as a Component (cmd/kube-scheduler/app). Informers run from the
 * start so a standby has a warm cache; the scheduling loop runs only while this process holds the
 * Lease kube-system/kube-scheduler. /healthz, /readyz and /metrics are served on healthPort.
 */
import {
  Namespaces, Nodes, PersistentVolumeClaims, PersistentVolumes, PriorityClasses, Pods, ReplicaSets, Services, StorageClasses,
  type Namespace, type PriorityClass, type PV, type PVC, type ReplicaSet, type Service, type StorageClass,
} from '@mk8s/api';
import {
  createClientset, createEventRecorder, newInformerFactory, newLeaderElectedComponent, newRestClientMetrics,
  type Clientset, type EventRecorder, type LeaderElectedComponent, type LeaderElectionConfig, type SharedInformer,
} from '@mk8s/client';
import { newRegistry, realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';
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
  leaderElection?: LeaderElectionConfig;
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

export interface SchedulerComponent extends LeaderElectedComponent {
  /** The Scheduler (its cache and queue), for tests and benchmarks. */
  readonly scheduler: Scheduler;
}

export function createScheduler(cfg: SchedulerConfig = {}): SchedulerComponent {
  const log = cfg.logger ?? silentLogger();
  const clock = cfg.clock ?? realClock;
  const registry = newRegistry();
  let fence: (req: { method: string; path: string }) => Error | undefined = () => undefined;
  const client = cfg.client ?? createClientset({
    ...(cfg.kubeconfig ? { kubeconfig: cfg.kubeconfig } : {}),
    userAgent: 'kube-scheduler', qps: cfg.qps ?? 1000, burst: cfg.burst ?? 2000, logger: log,
    metrics: newRestClientMetrics(registry),
    // No write once the Lease may have passed on (a resumed, frozen leader): see writeFence.
    writeFence: (req) => fence(req),
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
  const claims = factory.informerFor(PersistentVolumeClaims) as unknown as SharedInformer<PVC & { [k: string]: unknown }>;
  const volumes = factory.informerFor(PersistentVolumes) as unknown as SharedInformer<PV & { [k: string]: unknown }>;
  const storageClasses = factory.informerFor(StorageClasses) as unknown as SharedInformer<StorageClass & { metadata: { name: string } } & { [k: string]: unknown }>;

  /** PreBind waiters (VolumeBinding) woken by any claim or volume change. */
  const volumeWaiters = new Set<() => void>();
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
    volumes: {
      claim: (ns, name) => claims.lister.get(`${ns}/${name}`),
      volume: (name) => volumes.lister.get(name),
      volumes: () => volumes.lister.list(),
      storageClass: (name) => storageClasses.lister.get(name),
      onChange: (fn) => { volumeWaiters.add(fn); return () => volumeWaiters.delete(fn); },
    },
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
  // A claim, volume or class that appears or changes may make a pod with claims schedulable.
  for (const inf of [claims, volumes, storageClasses] as SharedInformer<{ metadata: { name: string } } & { [k: string]: unknown }>[]) {
    inf.addEventHandler({ onAdd: () => sched.queue.moveAllToActiveOrBackoffQueue('PersistentVolumeChange'), onUpdate: () => sched.queue.moveAllToActiveOrBackoffQueue('PersistentVolumeChange') });
  }
  const wakeVolumeWaiters = () => { for (const fn of [...volumeWaiters]) fn(); };
  for (const inf of [claims, volumes] as SharedInformer<{ metadata: { name: string } } & { [k: string]: unknown }>[]) {
    inf.addEventHandler({ onAdd: wakeVolumeWaiters, onUpdate: wakeVolumeWaiters, onDelete: wakeVolumeWaiters });
  }
  // A new PriorityClass may resolve the priority of pods already queued.
  priorityClasses.addEventHandler({ onAdd: () => sched.queue.moveAllToActiveOrBackoffQueue('ForceActivate') });

  const component = newLeaderElectedComponent({
    name: 'scheduler', leaseName: 'kube-scheduler',
    client, clock, logger: log, registry, informers: factory,
    healthPort: cfg.healthPort ?? 10259,
    ...(cfg.healthHost ? { healthHost: cfg.healthHost } : {}),
    ...(cfg.leaderElect !== undefined ? { leaderElect: cfg.leaderElect } : {}),
    ...(cfg.identity ? { identity: cfg.identity } : {}),
    ...(cfg.leaderElection ? { leaderElection: cfg.leaderElection } : {}),
    onSynced: () => log.info({ nodes: nodes.lister.list().length, pods: pods.lister.list().length }, 'Synced scheduler caches'),
    lead: (signal) => sched.run(signal),
    shutdown: async () => {
      await sched.waitForPendingWrites();
      await (recorder as { flush?: () => Promise<void> }).flush?.();
    },
  });
  fence = component.writeFence;
  return { ...component, scheduler: sched };
}
