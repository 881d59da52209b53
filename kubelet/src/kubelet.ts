/**
 * createKubelet: the node agent as a Component. It watches only its own pods (field selector
 * spec.nodeName), keeps one serialized worker per pod, relists the runtime every second (PLEG;
 * a change a sync made itself wakes no second sync), writes pod status in the background,
 * cleans up what no pod owns, registers the Node and heartbeats, and serves the kubelet API.
 */
import { mkdir } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Server } from 'node:http';
import { realClock, silentLogger, serveHealth, newRegistry, type Clock, type Component, type Logger } from '@mk8s/component-base';
import { newInformerFactory, createEventRecorder, type Clientset, type EventRecorder, type SharedInformerFactory } from '@mk8s/client';
import { ConfigMaps, Nodes, PersistentVolumeClaims, PersistentVolumes, Pods, Secrets, ServiceAccounts, isNotFound, type Pod } from '@mk8s/api';
import type { ImageService, RuntimeService } from '@mk8s/proto';
import type { ConfigSource } from './env.js';
import { ServiceAccountTokenManager } from './volumes.js';
import { NodeStatusManager } from './node-status.js';
import type { ConfigMapObj, NodeObj, PodObj, PvcObj, PvObj, SecretObj } from './objects.js';
import { GenericPleg, eventState, plegState, type PlegState } from './pleg.js';
import { PodSyncer } from './pod-syncer.js';
import { PodWorkers, type PodSyncResult } from './pod-workers.js';
import { ProbeManager, RuntimeProber, type Prober } from './prober.js';
import { serveKubelet, type KubeletServerOptions } from './server.js';
import { computePodStatus, type PodRuntimeState } from './status.js';
import { StatusManager } from './status-manager.js';

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
  /** PLEG relist period. @default 1000 */
  relistPeriodMs?: number;
  /** Every pod is synced at least this often (ConfigMap/Secret volumes refresh). @default 20_000 */
  resyncPeriodMs?: number;
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
  readonly syncer: PodSyncer;
  readonly pleg: GenericPleg;
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
  const configs: ConfigSource = {
    async configMap(ns, name) {
      try { return await client.resource<ConfigMapObj>(ConfigMaps, ns).get(name); } catch (err) { if (isNotFound(err)) return undefined; throw err; }
    },
    async secret(ns, name) {
      try { return await client.resource<SecretObj>(Secrets, ns).get(name); } catch (err) { if (isNotFound(err)) return undefined; throw err; }
    },
    serviceAccountToken: (pod, req) => tokens.get(pod, req),
    async persistentVolumeClaim(ns, name) {
      try { return await client.resource<PvcObj>(PersistentVolumeClaims, ns).get(name); } catch (err) { if (isNotFound(err)) return undefined; throw err; }
    },
    async persistentVolume(name) {
      try { return await client.resource<PvObj>(PersistentVolumes).get(name); } catch (err) { if (isNotFound(err)) return undefined; throw err; }
    },
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
  const syncer = new PodSyncer({
    runtime, images, configs, recorder, probes, prober, clock, logger, nodeName, nodeIP: () => cfg.nodeIP, rootDir: cfg.rootDir,
    ...(cfg.clusterDNS ? { clusterDNS: cfg.clusterDNS } : {}), ...(cfg.clusterDomain ? { clusterDomain: cfg.clusterDomain } : {}),
    ...(cfg.crashBackoffInitialMs !== undefined ? { crashBackoffInitialMs: cfg.crashBackoffInitialMs } : {}),
  });
  const statuses = new StatusManager({ client, logger, clock });
  const nodeStatus = new NodeStatusManager({ client, runtime, recorder, clock, logger, nodeName, nodeIP: cfg.nodeIP, rootDir: cfg.rootDir, ...(cfg.port && cfg.port > 0 ? { kubeletPort: cfg.port } : {}) });

  /** Pods whose worker has synced (and so may have made containers the PLEG has not seen yet). */
  const touched = new Set<string>();
  /**
   * Per pod, the PLEG state of each container and sandbox as its last sync accounted for them: a
   * PLEG event that only reports one of these is an echo of that sync and wakes no other.
   */
  const seen = new Map<string, Map<string, PlegState>>();
  const sandboxState = (ready: boolean): PlegState => (ready ? 'running' : 'exited');
  const remember = (uid: string, before: PodRuntimeState, rt: PodRuntimeState) => {
    const was = new Map<string, PlegState>();
    for (const c of before.containers) was.set(c.id, plegState(c.state));
    for (const sb of before.sandboxes) was.set(sb.id, sandboxState(sb.state === 'SANDBOX_READY'));
    // An exit the sync did not see before it decided is news, not an echo: a container it just
    // started and that is gone by the time it is read back (`sh -c 'exit 1'`) still needs the
    // sync that puts it in back-off (CrashLoopBackOff, requeued to the window's end). Taken as an
    // echo, its ContainerDied was dropped and nothing synced the pod until the next resync, so
    // the back-off window never reached the API (and the restart came at the resync).
    const put = (m: Map<string, PlegState>, id: string, now: PlegState) =>
      m.set(id, now === 'exited' && was.get(id) !== 'exited' ? was.get(id) ?? 'running' : now);
    const m = new Map<string, PlegState>();
    for (const c of rt.containers) put(m, c.id, plegState(c.state));
    for (const sb of rt.sandboxes) put(m, sb.id, sandboxState(sb.state === 'SANDBOX_READY'));
    seen.set(uid, m);
  };

  const status = (pod: Pod, rt: PodRuntimeState, terminating: boolean) => {
    const uid = pod.metadata?.uid ?? '';
    const previous = statuses.lastWritten(uid);
    return computePodStatus({
      pod, rt, waiting: terminating ? new Map() : syncer.waitingOf(uid), hostIP: cfg.nodeIP, nowMs: clock.now(), terminating,
      ...(previous ? { previous } : {}),
      ready: (name, id) => (probes.has(uid, name, id, 'readiness') ? probes.result(uid, name, id, 'readiness') === true : true),
      started: (name, id) => (probes.has(uid, name, id, 'startup') ? probes.result(uid, name, id, 'startup') === true : true),
    });
  };

  const sync = async (uid: string, signal: AbortSignal): Promise<PodSyncResult | void> => {
    const pod = pods.get(uid);
    if (!pod) {
      // Not known yet is not gone: until the pod informer has synced (a restarted kubelet, whose
      // first relist wakes every pod that has containers), a pod missing here may well exist, and
      // cleaning it up would kill a running pod. Its ADD comes with the sync; what is really gone
      // is found by housekeeping then (upstream: no cleanup before the sources are ready).
      if (!podInformer.hasSynced()) return;
      // Gone from the API (deleted, force-deleted, or never ours): remove everything it left.
      probes.remove(uid);
      await syncer.cleanupPod(uid);
      tokens.forget(uid);
      statuses.forget(uid);
      seen.delete(uid);
      touched.delete(uid);
      return;
    }
    if (pod.metadata?.deletionTimestamp) {
      const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
      const rt = await syncer.terminatePod(pod, uid, grace);
      const stillRunning = rt.containers.some((c) => c.state === 'CONTAINER_RUNNING');
      const exists = await statuses.setStatus(pod, status(pod, rt, true));
      if (stillRunning) return { requeueAfterMs: 1000 };
      if (exists) {
        try {
          await client.resource<PodObj>(Pods, pod.metadata.namespace ?? 'default').delete(pod.metadata.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid } });
          logger.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, 'Deleted terminated pod');
        } catch (err) { if (!isNotFound(err) && !(err instanceof Error && /Conflict|precondition/i.test(err.message))) throw err; }
      }
      return;
    }
    // A pod this kubelet never synced, unknown to a completed relist, has nothing in the runtime:
    // only its own worker could have made something since. Saves a new pod two list calls.
    const fresh = !touched.has(uid) && pleg.hasRelisted() && !pleg.podUids().has(uid);
    touched.add(uid);
    const before = fresh ? { sandboxes: [], containers: [] } : await syncer.podRuntime(uid);
    if (!statuses.lastWritten(uid) && !pod.status?.containerStatuses) {
      // First sight of the pod: report Pending/ContainerCreating (hostIP, startTime) while the
      // sandbox and pulls, which may take a while, go on.
      statuses.queueStatus(pod, status(pod, before, false));
    }
    const { result, rt } = await syncer.syncPod(pod, signal, before);
    remember(uid, before, rt);
    const st = status(pod, rt, false);
    // Written in the background: the worker is free for the next event at once.
    statuses.queueStatus(pod, st);
    if ((st.phase === 'Succeeded' || st.phase === 'Failed') && pod.status?.phase !== st.phase) {
      // Stop what may still run (sidecars) now that the pod is terminal.
      probes.remove(uid);
    }
    return result;
  };
  workers = new PodWorkers({ sync, clock, logger });

  const pleg = new GenericPleg({
    runtime, clock, logger, ...(cfg.relistPeriodMs ? { relistPeriodMs: cfg.relistPeriodMs } : {}),
    onEvent: (ev) => {
      logger.trace({ event: ev }, 'Pod lifecycle event');
      // A change the pod's last sync made and already reported (its own container start) needs no
      // second sync; anything else (a death, a removal, a change by someone else) does.
      if (seen.get(ev.podUid)?.get(ev.containerId) === eventState(ev.type)) return;
      workers.enqueue(ev.podUid);
    },
  });

  const housekeeping = async () => {
    if (!podInformer.hasSynced()) return;
    // The PLEG's last relist already knows every owner; listing again would double Docker's load.
    const owners = pleg.podUids();
    for (const uid of owners) if (!pods.has(uid) && !workers.isRunning(uid)) workers.enqueue(uid);
  };

  podInformer.addEventHandler({
    onAdd: (p) => {
      const uid = p.metadata.uid ?? '';
      pods.set(uid, p);
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
    onDelete: (p) => { const uid = p.metadata.uid ?? ''; pods.delete(uid); workers.enqueue(uid); },
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
    workers, syncer, pleg,
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
            podRuntime: (uid) => syncer.podRuntime(uid),
            ...cfg.server,
          });
          apiPort = srv.port;
          closers.push(srv.close);
        }
        if (cfg.healthPort !== undefined) {
          const h = await serveHealth({
            port: cfg.healthPort, host: cfg.healthBindAddress ?? '127.0.0.1', registry: newRegistry('kubelet'),
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
          while (!signal.aborted) {
            await clock.sleep(cfg.housekeepingPeriodMs ?? 2000, signal).catch(() => undefined);
            if (signal.aborted) break;
            try { await housekeeping(); } catch (err) { logger.warn({ err }, 'Housekeeping failed'); }
          }
        })());
        loops.push((async () => {
          while (!signal.aborted) {
            await clock.sleep(cfg.resyncPeriodMs ?? 20_000, signal).catch(() => undefined);
            for (const uid of pods.keys()) workers.enqueue(uid);
          }
        })());
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
