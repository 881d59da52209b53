/**
 * Proxier (upstream pkg/proxy/iptables.Proxier): Services + EndpointSlices from informers →
 * renderRules → one iptables-restore --noflush per sync. A sync runs when an informer event
 * asks for it, no more often than minSyncPeriodMs (BoundedFrequencyRunner), and only calls
 * iptables-restore when the rendered program differs from the last one applied. Every
 * syncPeriodMs a full sync re-reads the kernel's chains, re-applies everything and re-ensures the
 * jumps from the built-in chains, which repairs rules someone flushed.
 */
import type { EndpointSlice, KubeObject, Named, Service } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import type { Clock, Logger } from '@mk8s/component-base';
import { BoundedFrequencyRunner } from './bounded-frequency-runner.js';
import type { IptablesRunner } from './iptables.js';
import type { ProxyMetrics } from './metrics.js';
import { JUMP_RULES, incrementalRestoreInput, missingJumps, renderCleanup, renderRules, withJumps, type JumpRule, type RenderedRules } from './rules.js';
import { endpointsByServicePort, servicePorts } from './service-state.js';

export type ServiceObj = Named<Service> & KubeObject;
export type EndpointSliceObj = Named<EndpointSlice> & KubeObject;

export interface ProxierOptions {
  services: SharedInformer<ServiceObj>;
  endpointSlices: SharedInformer<EndpointSliceObj>;
  iptables: IptablesRunner;
  clusterCidr: string;
  /** @default 1000 */
  minSyncPeriodMs?: number;
  /** Full resync (re-apply and re-check jumps) period. @default 30000 */
  syncPeriodMs?: number;
  clock: Clock;
  logger: Logger;
  metrics?: ProxyMetrics;
}

/** What one sync did (tests and benchmarks). */
export interface SyncResult { applied: boolean; full: boolean; ruleCounts: { filter: number; nat: number } }

export class Proxier {
  private readonly runner: BoundedFrequencyRunner;
  private lastApplied: RenderedRules | undefined;
  private knownNatChains = new Set<string>();
  private needFull = true;
  private cancelPeriodic: (() => void) | undefined;
  private synced = false;
  private lastError: unknown;
  /** Resolvers waiting for the next successful sync. */
  private syncWaiters: (() => void)[] = [];

  constructor(private readonly o: ProxierOptions) {
    this.runner = new BoundedFrequencyRunner({
      fn: async () => { await this.syncProxyRules(); },
      minIntervalMs: o.minSyncPeriodMs ?? 1000,
      clock: o.clock,
      onError: (err) => { this.lastError = err; this.needFull = true; o.metrics?.restoreFailures.inc(); o.logger.warn({ err }, 'Sync of proxy rules failed, will retry'); },
    });
    const ask = () => this.runner.run();
    o.services.addEventHandler({ onAdd: ask, onUpdate: ask, onDelete: ask });
    o.endpointSlices.addEventHandler({ onAdd: ask, onUpdate: ask, onDelete: ask });
  }

  /** Starts syncing (the first, full sync at once) and the periodic full resync. */
  start(): void {
    this.runner.run();
    const periodic = () => {
      this.needFull = true;
      this.runner.run();
      this.cancelPeriodic = this.o.clock.setTimeout(periodic, this.o.syncPeriodMs ?? 30_000);
    };
    this.cancelPeriodic = this.o.clock.setTimeout(periodic, this.o.syncPeriodMs ?? 30_000);
  }

  stop(): void { this.runner.stop(); this.cancelPeriodic?.(); }

  /** True once a sync succeeded and the last attempt did not fail. */
  healthy(): boolean { return this.synced && this.lastError === undefined; }

  /** Resolves after the next successful sync (tests, benchmarks). */
  nextSync(): Promise<void> { return new Promise((r) => this.syncWaiters.push(r)); }

  /** Asks for a sync (coalesced, rate-limited). */
  requestSync(): void { this.runner.run(); }

  /** Resolves once no sync is running or scheduled. */
  whenIdle(): Promise<void> { return this.runner.whenIdle(); }

  /**
   * syncProxyRules renders the rules from the informers' caches and applies them if they
   * changed (always on a full sync). Rejects if iptables-restore fails (the runner retries).
   */
  async syncProxyRules(): Promise<SyncResult> {
    if (!this.o.services.hasSynced() || !this.o.endpointSlices.hasSynced()) {
      this.o.clock.setTimeout(() => this.runner.run(), 100);
      return { applied: false, full: false, ruleCounts: { filter: 0, nat: 0 } };
    }
    const started = this.o.clock.now();
    const full = this.needFull;
    let existing: Iterable<string> = this.knownNatChains;
    let jumps: JumpRule[] = [];
    if (full) {
      // One iptables-save tells both which of our chains exist and which jumps are missing.
      const saved = await this.o.iptables.save();
      const natSection = saved.split('*nat')[1]?.split('COMMIT')[0] ?? '';
      const natChains = natSection.split('\n').filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0] ?? '');
      existing = new Set([...this.knownNatChains, ...natChains]);
      jumps = missingJumps(saved);
    }
    const sps = servicePorts(this.o.services.lister.list());
    const eps = endpointsByServicePort(this.o.endpointSlices.lister.list());
    const r = renderRules({ services: sps, endpoints: eps, clusterCidr: this.o.clusterCidr, existingNatChains: existing });
    const m = this.o.metrics;
    if (!full && r.text === this.lastApplied?.text) {
      m?.skippedSyncs.inc();
      this.lastError = undefined;
      this.finishSync();
      return { applied: false, full, ruleCounts: r.ruleCounts };
    }
    // Full: everything (the kernel may have lost anything). Otherwise only what changed since the
    // last successful restore, which is exactly what the kernel holds.
    // Missing jumps from the built-in chains ride in the same restore (one exec per sync).
    const input = full || !this.lastApplied ? withJumps(r.text, jumps) : incrementalRestoreInput(this.lastApplied, r);
    await this.o.iptables.restore(input, { noflush: true });
    this.lastApplied = r;
    this.knownNatChains = r.natChains;
    this.needFull = false;
    this.lastError = undefined;
    const seconds = (this.o.clock.now() - started) / 1000;
    if (m) {
      m.syncDuration.observe(seconds);
      m.ruleCount.set({ table: 'filter' }, r.ruleCounts.filter);
      m.ruleCount.set({ table: 'nat' }, r.ruleCounts.nat);
      m.lastSync.set(this.o.clock.now() / 1000);
      m.servicePorts.set(sps.length);
      m.endpoints.set([...eps.values()].reduce((n, l) => n + l.length, 0));
    }
    this.o.logger.debug({ full, servicePorts: sps.length, rules: r.ruleCounts, seconds }, 'Synced proxy rules');
    this.finishSync();
    return { applied: true, full, ruleCounts: r.ruleCounts };
  }

  private finishSync(): void {
    this.synced = true;
    for (const w of this.syncWaiters.splice(0)) w();
  }
}

/** cleanupRules removes the jumps and every chain of ours (kube-proxy --cleanup). Idempotent. */
export async function cleanupRules(iptables: IptablesRunner): Promise<void> {
  for (const j of JUMP_RULES) await iptables.deleteRule(j.table, j.chain, j.args);
  const [nat, filter] = await Promise.all([iptables.listChains('nat'), iptables.listChains('filter')]);
  await iptables.restore(renderCleanup({ nat, filter }), { noflush: true });
}
