/**
 * The life of a leader-elected control-plane process (kube-controller-manager, kube-scheduler):
 * serve /healthz, /readyz and /metrics, start the informers at once so that a standby has warm
 * caches, and do the work only while holding the Lease. Losing the Lease ends run() with an error,
 * as upstream exits so that a restart begins from clean state.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { Gauge, type Registry } from 'prom-client';
import { metricOnce, serveHealth, type Clock, type Component, type Logger } from '@mk8s/component-base';
import type { Clientset } from './interfaces.js';
import { LeaderElector } from './leader-election.js';

/** The leader-election settings a component takes (upstream's --leader-elect-* flags). */
export interface LeaderElectionConfig {
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** @default 'kube-system' */
  namespace?: string;
  /** @default the component's own Lease name */
  name?: string;
}

export interface LeaderElectedComponentOptions {
  /** The Component's name. */
  name: string;
  /** The Lease name when leaderElection.name is not given, e.g. 'kube-scheduler'. */
  leaseName: string;
  client: Clientset;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  /** /healthz, /readyz, /metrics port; 0 picks a free one; below 0 serves nothing. */
  healthPort: number;
  /** @default '127.0.0.1' */
  healthHost?: string;
  /** @default true */
  leaderElect?: boolean;
  /** @default `${hostname}_${uuid}` */
  identity?: string;
  leaderElection?: LeaderElectionConfig;
  /** The informers to start and wait for before campaigning. */
  informers: { start(signal: AbortSignal): void; waitForCacheSync(signal?: AbortSignal): Promise<boolean> };
  /** Called once the caches have synced. */
  onSynced?(): void;
  /** The work done while leading; leading aborts when the Lease is lost or the process stops. */
  lead(leading: AbortSignal): Promise<void>;
  /** Runs when run() ends, whatever the reason (flush events, wait for writes). */
  shutdown?(): Promise<void>;
}

export interface LeaderElectedComponent extends Component {
  /** The port /healthz listens on once serving (-1 when not serving). */
  readonly healthPort: Promise<number>;
  /** True while this instance holds the Lease (or runs without leader election) and is working. */
  isLeader(): boolean;
  /**
   * The write fence to give the component's Clientset (ClientsetOptions.writeFence): refuses every
   * write but the Lease's own and Events unless this instance leads with a Lease renewed within
   * the renew deadline. A leader frozen past its Lease (SIGSTOP) thus writes nothing when it
   * resumes, before its renew loop has even noticed and stepped down.
   */
  writeFence(req: { method: string; path: string }): Error | undefined;
}

/** A write refused by the fence (not sent): the instance is not, or may no longer be, the leader. */
export class NotLeaderError extends Error {
  constructor(lease: string, path: string) { super(`not the leader (Lease ${lease} not renewed within the renew deadline): ${path} not written`); this.name = 'NotLeaderError'; }
}

export function newLeaderElectedComponent(o: LeaderElectedComponentOptions): LeaderElectedComponent {
  const log = o.logger;
  let synced = false;
  let leading = false;
  let resolveReady!: () => void;
  let rejectReady!: (err: unknown) => void;
  const ready = new Promise<void>((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => undefined);
  let resolvePort!: (p: number) => void;
  const healthPort = new Promise<number>((res) => { resolvePort = res; });
  const le0 = o.leaderElection ?? {};
  const lock = { namespace: le0.namespace ?? 'kube-system', name: le0.name ?? o.leaseName };
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${lock.namespace}/leases`;
  let elector: LeaderElector | undefined;
  // Upstream's leader_election_master_status: 1 while this instance leads (mkctl chaos finds the leader by it).
  const masterStatus = metricOnce(o.registry, 'leader_election_master_status', () => new Gauge({ name: 'leader_election_master_status', help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. \'name\' is the string used to identify the lease.', labelNames: ['name'], registers: [o.registry] }));
  masterStatus.set({ name: lock.name }, 0);
  const writeFence = (req: { method: string; path: string }): Error | undefined => {
    if (o.leaderElect === false) return undefined;
    if (req.path === leasePath || req.path.startsWith(`${leasePath}/`) || /\/events(\/|$)/.test(req.path)) return undefined;
    return elector?.holdsLease() ? undefined : new NotLeaderError(`${lock.namespace}/${lock.name}`, req.path);
  };

  const lead = async (signal: AbortSignal): Promise<void> => {
    setMaxListeners(0, signal);
    leading = true;
    masterStatus.set({ name: lock.name }, 1);
    try { await o.lead(signal); } finally { leading = false; masterStatus.set({ name: lock.name }, 0); }
  };

  async function run(signal: AbortSignal): Promise<void> {
    // Every informer, worker, the election and each in-flight request listen on this one signal.
    setMaxListeners(0, signal);
    const health = o.healthPort >= 0
      ? await serveHealth({ port: o.healthPort, host: o.healthHost ?? '127.0.0.1', registry: o.registry, isReady: () => synced })
        .catch((err: unknown) => { rejectReady(err); throw err; })
      : undefined;
    resolvePort(health?.port ?? -1);
    try {
      o.informers.start(signal);
      if (!(await o.informers.waitForCacheSync(signal))) return;
      synced = true;
      resolveReady();
      o.onSynced?.();
      if (o.leaderElect === false) {
        await lead(signal);
        return;
      }
      const le = le0;
      let loop: Promise<void> | undefined;
      elector = new LeaderElector({
        client: o.client, signal, clock: o.clock, logger: log, lock,
        identity: o.identity ?? `${hostname()}_${randomUUID()}`,
        ...(le.leaseDurationMs ? { leaseDurationMs: le.leaseDurationMs } : {}),
        ...(le.renewDeadlineMs ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
        ...(le.retryPeriodMs ? { retryPeriodMs: le.retryPeriodMs } : {}),
        onStartedLeading: (leadingSignal) => {
          log.info('Started leading');
          loop = lead(leadingSignal);
        },
        onNewLeader: (id) => log.info({ leader: id }, 'New leader elected'),
      });
      await elector.run();
      await loop;
      if (!signal.aborted && loop) throw new Error('leaderelection lost');
    } finally {
      await o.shutdown?.().catch((err: unknown) => log.warn({ err }, 'Shutdown step failed'));
      await health?.close();
    }
  }

  return { name: o.name, ready, run, healthPort, isLeader: () => leading, writeFence };
}
