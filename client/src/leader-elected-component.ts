/**
 * The life of a leader-elected control-plane process (kube-controller-manager, kube-scheduler):
 * serve /healthz, /readyz and /metrics, start the informers at once so that a standby has warm
 * caches, and do the work only while holding the Lease. Losing the Lease ends run() with an error,
 * as upstream exits so that a restart begins from clean state.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import { serveHealth, type Clock, type Component, type Logger } from '@mk8s/component-base';
import type { Clientset } from './interfaces.js';
import { runLeaderElection } from './leader-election.js';

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

  const lead = async (signal: AbortSignal): Promise<void> => {
    setMaxListeners(0, signal);
    leading = true;
    try { await o.lead(signal); } finally { leading = false; }
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
      const le = o.leaderElection ?? {};
      let loop: Promise<void> | undefined;
      await runLeaderElection({
        client: o.client, signal, clock: o.clock, logger: log,
        lock: { namespace: le.namespace ?? 'kube-system', name: le.name ?? o.leaseName },
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
      await loop;
      if (!signal.aborted && loop) throw new Error('leaderelection lost');
    } finally {
      await o.shutdown?.().catch((err: unknown) => log.warn({ err }, 'Shutdown step failed'));
      await health?.close();
    }
  }

  return { name: o.name, ready, run, healthPort, isLeader: () => leading };
}
