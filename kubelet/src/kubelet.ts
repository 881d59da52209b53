/**
 * createKubelet: the node agent as a Component. It watches only its own pods (field selector
 * spec.nodeName), keeps one serialized worker per pod, relists the runtime every second (PLEG,
 * which fills the pod cache), writes pod status in the background, cleans up what no pod owns,
 * registers the Node and heartbeats, and serves the kubelet API.
 *
 * A pod worker's sync reads the pod's runtime state from the cache, newer than the end of its
 * previous sync (so it always sees what that sync did), and runs one of upstream's three phases:
 * `syncPod` (a live pod: plan and execute), `syncTerminatingPod` (deletionTimestamp: kill with
 * the grace period) and `syncTerminatedPod` (all stopped: final status, delete the object);
 * what a gone pod left is removed by `cleanupPod`.
 */
import { mkdir } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Server } from 'node:http';
import { realClock, runEvery, silentLogger, serveHealth, newRegistry, type Clock, type Component, type Logger } from '@mk8s/component-base';
import { newInformerFactory, createEventRecorder, type Clientset, type EventRecorder, type SharedInformerFactory } from '@mk8s/client';
import { ConfigMaps, Nodes, PersistentVolumeClaims, PersistentVolumes, Pods, Secrets, ServiceAccounts, isConflict, isNotFound, type Pod } from '@mk8s/api';
import type { ImageService, RuntimeService } from '@mk8s/proto';
import type { ConfigSource } from './env.js';
import { ServiceAccountTokenManager } from './volumes.js';
import { NodeStatusManager } from './node-status.js';
import { ObjectCache } from './object-cache.js';
import type { ConfigMapObj, NodeObj, PodObj, PvcObj, PvObj, SecretObj } from './objects.js';
import { GenericPleg } from './pleg.js';
import { PodCache } from './pod-cache.js';
import { KubeRuntimeManager } from './runtime-manager.js';
import { PodWorkers, type PodSyncContext, type PodSyncResult } from './pod-workers.js';
import { ProbeManager, RuntimeProber, type Prober } from './prober.js';
import { serveKubelet, type KubeletServerOptions } from './server.js';
import { StatsProvider } from './stats-provider.js';
import { computePodStatus, isTerminalPhase, type PodRuntimeState } from './status.js';
import { StatusManager } from './status-manager.js';
import { newKubeletMetrics } from './metrics.js';
import type { Registry } from 'prom-client';

export interface KubeletConfig {
  nodeName: string;
  nodeIP: string;
  /** Pod volumes live under <rootDir>/pods/<uid>. */
  rootDir: string;
  client: Clientset;
  runtime: RuntimeService;
  images: ImageService;
  logger?: Logger;
  clock?: Clock;
  /** /healthz port; undefined = not served. */
  healthPort?: number;
  /** @default '127.0.0.1' */
  healthBindAddress?: string;
  /** Kubelet API port; -1 = not served. @default 10250 */
  port?: number;
  /** @default '0.0.0.0' */
  address?: string;
  /** The kubelet API's TLS and authn/authz (server.ts, server-auth.ts). @default plain HTTP, no authentication */
  server?: Pick<KubeletServerOptions, 'tls' | 'auth'>;
  /** @default ['10.96.0.10'] */
  clusterDNS?: string[];
  /** @default 'cluster.local' */
  clusterDomain?: string;
  /** The kubelet's metrics registry (/metrics on the API port and the health port). @default newRegistry() */
  registry?: Registry;
  /** PLEG relist period. @default 1000 */
  relistPeriodMs?: number;
  /** Every pod is synced at least this often (ConfigMap/Secret volumes refresh). @default 20_000 */
  resyncPeriodMs?: number;
  /** ConfigMaps and Secrets read for volumes and env are reused this long (object-cache.ts). @default 5000 */
  configCacheTtlMs?: number;
  /** Orphan cleanup period. @default 2000 */
  housekeepingPeriodMs?: number;
  informers?: SharedInformerFactory;
  recorder?: EventRecorder;
  prober?: Prober;
  /** Node registration, lease and status. @default true */
  registerNode?: boolean;
  /** @default 10_000 */
  crashBackoffInitialMs?: number;
}

export interface Kubelet extends Component {
  /** The kubelet API's port once listening (0 before). */
  port(): number;
  /** Pods bound to this node as the kubelet knows them. */
  pods(): Pod[];
  readonly workers: PodWorkers;
  readonly runtimeManager: KubeRuntimeManager;
  readonly pleg: GenericPleg;
  readonly cache: PodCache;
  /** Runs one orphan-cleanup pass (tests). */
  housekeeping(): Promise<void>;
}

export function createKubelet(cfg: KubeletConfig): Kubelet {
  const clock = cfg.clock ?? realClock;
  const logger = cfg.logger ?? silentLogger();
  const { client, runtime, images, nodeName } = cfg;
  const informers = cfg.informers ?? newInformerFactory({ client, clock, logger: logger.child({ component: 'informers' }) });
  const recorder = cfg.recorder ?? createEventRecorder({ client, component: 'kubelet', host: nodeName, clock, logger });
  const podInformer = informers.informerFor<PodObj>(Pods, { fieldSelector: `spec.nodeName=${nodeName}` });
  const nodeInformer = informers.informerFor<NodeObj>(Nodes, { fieldSelector: `metadata.name=${nodeName}` });
  const pods = new Map<string, Pod>();
  const tokens = new ServiceAccountTokenManager({
    request: (ns, sa, body) => client.resource(ServiceAccounts, ns).createSubresource(sa, 'token', body), now: () => clock.now(),
  });
  // ConfigMaps and Secrets of volumes and env: one cached read shared by every pod and sync (object-cache.ts).
  const ttlMs = cfg.configCacheTtlMs ?? 5_000;
  const configMaps = new ObjectCache<ConfigMapObj>({ clock, ttlMs, fetch: async (ns, name) => {
    try { return await client.resource<ConfigMapObj>(ConfigMaps, ns).get(name); } catch (err) { if (isNotFound(err)) return undefined; throw err; }
  } });
  const secrets = new ObjectCache<SecretObj>({ clock, ttlMs, fetch: async (ns, name) => {
    try { return await client.resource<SecretObj>(Secrets, ns).get(name); } catch (err) { if (isNotFound(err)) return undefined; throw err; }
  } });
  // Claims and PVs of persistentVolumeClaim volumes: every sync of a running pod re-resolves its
  // volumes, so a settled binding (claim Bound to a PV that names it back) is read once per TTL;
  // one still binding, or being deleted, is read live (upstream's populator reads a pod's claims
  // once, when it adds the pod).
  const claims = new ObjectCache<PvcObj>({ clock, ttlMs, keep: (c) => c.status?.phase === 'Bound' && !!c.spec?.volumeName && !c.metadata?.deletionTimestamp, fetch: async (ns, name) => {
    try { return await client.resource<PvcObj>(PersistentVolumeClaims, ns).get(name); } catch (err) { if (isNotFound(err)) return undefined; throw err; }
  } });
  const volumes = new ObjectCache<PvObj>({ clock, ttlMs, keep: (v) => v.status?.phase === 'Bound' && !!v.spec?.claimRef?.uid && !v.metadata?.deletionTimestamp, fetch: async (_ns, name) => {
    try { return await client.resource<PvObj>(PersistentVolumes).get(name); } catch (err) { if (isNotFound(err)) return undefined; throw err; }
  } });
  const configs: ConfigSource = {
    configMap: (ns, name) => configMaps.get(ns, name),
    secret: (ns, name) => secrets.get(ns, name),
    serviceAccountToken: (pod, req) => tokens.get(pod, req),
    persistentVolumeClaim: (ns, name) => claims.get(ns, name),
    persistentVolume: (name) => volumes.get('', name),
  };
  const prober = cfg.prober ?? new RuntimeProber(runtime);
  let workers: PodWorkers;
  const probes = new ProbeManager({
    prober, clock, logger,
    onChange: (uid) => workers.enqueue(uid),
    onFailure: (pod, c, kind, output) => {
      const Kind = kind[0]!.toUpperCase() + kind.slice(1);
      recorder.event(pod, 'Warning', 'Unhealthy', '%s probe failed: %s', Kind, output);
      logger.debug({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, container: c.name, probe: kind, output }, 'Probe failed');
    },
  });
  const runtimeManager = new KubeRuntimeManager({
    runtime, images, configs, recorder, probes, prober, clock, logger, nodeName, nodeIP: () => cfg.nodeIP, rootDir: cfg.rootDir,
    ...(cfg.clusterDNS ? { clusterDNS: cfg.clusterDNS } : {}), ...(cfg.clusterDomain ? { clusterDomain: cfg.clusterDomain } : {}),
    ...(cfg.crashBackoffInitialMs !== undefined ? { crashBackoffInitialMs: cfg.crashBackoffInitialMs } : {}),
  });
  const statuses = new StatusManager({ client, logger, clock });
  const nodeStatus = new NodeStatusManager({ client, runtime, recorder, clock, logger, nodeName, nodeIP: cfg.nodeIP, rootDir: cfg.rootDir, ...(cfg.port && cfg.port > 0 ? { kubeletPort: cfg.port } : {}) });

  const cache = new PodCache();
  const registry = cfg.registry ?? newRegistry();
  const metrics = newKubeletMetrics(registry, nodeName);

  const status = (pod: Pod, rt: PodRuntimeState, terminating: boolean) => {
    const uid = pod.metadata?.uid ?? '';
    const previous = statuses.lastWritten(uid);
    return computePodStatus({
      pod, rt, waiting: terminating ? new Map() : runtimeManager.waitingOf(uid), hostIP: cfg.nodeIP, nowMs: clock.now(), terminating,
      ...(previous ? { previous } : {}),
      ready: (name, id) => (probes.has(uid, name, id, 'readiness') ? probes.result(uid, name, id, 'readiness') === true : true),
      started: (name, id) => (probes.has(uid, name, id, 'startup') ? probes.result(uid, name, id, 'startup') === true : true),
    });
  };

  const podKey = (pod: Pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`;

  /** A live pod: volumes, then the plan (computePodActions) executed by the runtime manager; status from the result. */
  const syncPod = async (pod: Pod, uid: string, state: PodRuntimeState, signal: AbortSignal): Promise<PodSyncResult> => {
    if (!statuses.lastWritten(uid) && !pod.status?.containerStatuses) {
      // First sight of the pod: report Pending/ContainerCreating (hostIP, startTime) while the
      // sandbox and pulls, which may take a while, go on.
      statuses.queueStatus(pod, status(pod, state, false));
    }
    // The kubelet's own verdict outranks a stale copy from the informer: a pod it found terminal is
    // never set up again (upstream's pod workers: no volume is mounted again for a terminal pod).
    // Its claim's directory may already be gone (a Delete reclaim removed it) and must stay gone.
    const known = statuses.lastWritten(uid)?.phase;
    const view: Pod = known && isTerminalPhase(known) && !isTerminalPhase(pod.status?.phase) ? { ...pod, status: { ...pod.status, phase: known } } : pod;
    const { result, rt } = await runtimeManager.syncPod(view, signal, state);
    // Computed from what the sync left (the containers it started read back), so a started pod
    // is reported Running without waiting for the next relist; written in the background.
    const st = status(pod, rt, false);
    statuses.queueStatus(pod, st);
    metrics.podPhase(uid, st.phase, clock.now());
    if (isTerminalPhase(st.phase) && pod.status?.phase !== st.phase) {
      // Stop what may still run (sidecars) now that the pod is terminal.
      probes.remove(uid);
    }
    return result;
  };

  /** deletionTimestamp set: kill every container with the grace period, then syncTerminatedPod. */
  const syncTerminatingPod = async (pod: Pod, uid: string, state: PodRuntimeState): Promise<PodSyncResult> => {
    const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    const rt = await runtimeManager.terminatePod(pod, uid, grace, state);
    const exists = await statuses.setStatus(pod, status(pod, rt, true));
    if (rt.containers.some((c) => c.state === 'CONTAINER_RUNNING')) return { requeueAfterMs: 1000 };
    if (exists) await syncTerminatedPod(pod, uid);
    return {};
  };

  /** Every container stopped and the final status written: the object goes (uid precondition). */
  const syncTerminatedPod = async (pod: Pod, uid: string): Promise<void> => {
    try {
      await client.resource<PodObj>(Pods, pod.metadata?.namespace ?? 'default').delete(pod.metadata?.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid } });
      logger.info({ pod: podKey(pod) }, 'Deleted terminated pod');
    } catch (err) { if (!isNotFound(err) && !isConflict(err)) throw err; }
  };

  /** Gone from the API (deleted, force-deleted, or never ours): remove everything it left. */
  const cleanupPod = async (uid: string): Promise<void> => {
    probes.remove(uid);
    await runtimeManager.cleanupPod(uid);
    tokens.forget(uid);
    statuses.forget(uid);
    cache.delete(uid);
  };

  const sync = async (uid: string, signal: AbortSignal, ctx: PodSyncContext): Promise<PodSyncResult | void> => {
    const pod = pods.get(uid);
    if (!pod) {
      // Not known yet is not gone: until the pod informer has synced (a restarted kubelet, whose
      // first relist wakes every pod that has containers), a pod missing here may well exist, and
      // cleaning it up would kill a running pod. Its ADD comes with the sync; what is really gone
      // is found by housekeeping then (upstream: no cleanup before the sources are ready).
      if (!podInformer.hasSynced()) return;
      await cleanupPod(uid);
      return;
    }
    // The runtime as a relist saw it after this pod's previous sync ended (a new pod: after any
    // completed relist, which knows it has nothing yet).
    const { state } = await ctx.park(cache.getNewerThan(uid, ctx.lastSyncMs, signal));
    const current = pods.get(uid);
    // Deleted while the sync waited for the relist: nothing is set up for it again.
    if (!current) { await cleanupPod(uid); return; }
    if (current.metadata?.deletionTimestamp) return syncTerminatingPod(current, uid, state);
    return syncPod(current, uid, state, signal);
  };
  workers = new PodWorkers({ sync, clock, logger });

  const pleg = new GenericPleg({
    runtime, clock, logger, cache, inspect: (sbs, cs) => runtimeManager.inspect(sbs, cs),
    onRelist: (r) => metrics.observeRelist(r),
    ...(cfg.relistPeriodMs ? { relistPeriodMs: cfg.relistPeriodMs } : {}),
    onEvent: (ev) => {
      logger.trace({ event: ev }, 'Pod lifecycle event');
      // Every event syncs: the sync reads the cache newer than its previous one ended, so our
      // own changes, already acted on, only cost a sync that finds nothing to do.
      workers.enqueue(ev.podUid);
    },
  });

  const housekeeping = async () => {
    if (!podInformer.hasSynced()) return;
    // The PLEG's last relist already knows every owner; listing again would double Docker's load.
    const owners = pleg.podUids();
    for (const uid of owners) if (!pods.has(uid) && !workers.isRunning(uid)) workers.enqueue(uid);
    configMaps.prune(); secrets.prune(); claims.prune(); volumes.prune();
  };

  podInformer.addEventHandler({
    onAdd: (p) => {
      const uid = p.metadata.uid ?? '';
      pods.set(uid, p);
      metrics.podSeen(uid, clock.now());
      // Upstream's "SyncLoop ADD" (V(2)): when the pod reached this kubelet, for startup timelines.
      logger.info({ pod: `${p.metadata.namespace}/${p.metadata.name}`, podUid: uid }, 'Pod added');
      workers.enqueue(uid);
    },
    onUpdate: (o, p) => {
      const uid = p.metadata.uid ?? '';
      pods.set(uid, p);
      // Status-only updates (mostly our own writes) need no sync: PLEG and probes cover the runtime side.
      const same = o.metadata.uid === p.metadata.uid && o.metadata.deletionTimestamp === p.metadata.deletionTimestamp &&
        isDeepStrictEqual(o.spec, p.spec) && isDeepStrictEqual(o.metadata.labels, p.metadata.labels) && isDeepStrictEqual(o.metadata.annotations, p.metadata.annotations);
      if (!same) workers.enqueue(uid);
    },
    onDelete: (p) => { const uid = p.metadata.uid ?? ''; pods.delete(uid); metrics.podForgotten(uid); workers.enqueue(uid); },
  });
  nodeInformer.addEventHandler({ onAdd: (n) => nodeStatus.onNode(n), onUpdate: (_o, n) => nodeStatus.onNode(n) });

  let resolveReady!: () => void;
  let rejectReady!: (err: unknown) => void;
  const ready = new Promise<void>((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => undefined);
  let apiPort = 0;

  return {
    name: 'kubelet',
    ready,
    workers, runtimeManager, pleg, cache,
    port: () => apiPort,
    pods: () => [...pods.values()],
    housekeeping,
    async run(signal) {
      const closers: (() => Promise<void>)[] = [];
      try {
        await mkdir(cfg.rootDir, { recursive: true });
        workers.start(signal);
        if (cfg.port !== -1) {
          const srv = await serveKubelet({
            port: cfg.port ?? 10250, host: cfg.address ?? '0.0.0.0', runtime, logger, nodeName,
            pods: () => [...pods.values()],
            podRuntime: (uid) => runtimeManager.getPodStatus(uid),
            registry,
            stats: new StatsProvider({ nodeName, runtime, images, pods: () => [...pods.values()], rootDir: cfg.rootDir, clock }),
            ...cfg.server,
          });
          apiPort = srv.port;
          closers.push(srv.close);
        }
        if (cfg.healthPort !== undefined) {
          const h = await serveHealth({
            port: cfg.healthPort, host: cfg.healthBindAddress ?? '127.0.0.1', registry,
            isReady: () => podInformer.hasSynced(), isHealthy: () => pleg.healthy(),
          });
          closers.push(h.close);
        }
        informers.start(signal);
        const loops: Promise<void>[] = [];
        if (cfg.registerNode ?? true) loops.push(nodeStatus.run(signal));
        loops.push(pleg.run(signal));
        loops.push((async () => {
          await informers.waitForCacheSync(signal);
          resolveReady();
          logger.info({ node: nodeName, pods: pods.size }, 'Kubelet started');
          await runEvery(cfg.housekeepingPeriodMs ?? 2000, housekeeping, { clock, signal, logger, what: 'Housekeeping', immediate: false });
        })());
        loops.push(runEvery(cfg.resyncPeriodMs ?? 20_000, () => { for (const uid of pods.keys()) workers.enqueue(uid); }, { clock, signal, logger, what: 'Resync', immediate: false }));
        await Promise.all(loops);
      } catch (err) {
        rejectReady(err);
        throw err;
      } finally {
        probes.stopAll();
        await workers.idle();
        for (const c of closers.reverse()) await c().catch(() => undefined);
      }
    },
  };
}

export type { Server };
