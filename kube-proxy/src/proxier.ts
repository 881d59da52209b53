/**
 * Proxier (upstream pkg/proxy/iptables.Proxier): Services + EndpointSlices from informers →
 * per-service-port rules → one iptables-restore --noflush per sync. A sync runs when an informer
 * event asks for it, no more often than minSyncPeriodMs (BoundedFrequencyRunner). Events only
 * mark their Service dirty (upstream's change trackers); a sync re-renders just the dirty
 * Services' ports and restores just the chains whose text changed, or nothing. Every
 * syncPeriodMs two chains of ours are read back; if they are gone or empty, and otherwise every
 * fullSyncPeriodMs and after a failure, a full sync re-reads the kernel's chains, re-applies
 * everything and re-ensures the jumps from the built-in chains, which repairs rules someone
 * flushed.
 */
import type { EndpointSlice, KubeObject, Named, Service } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import type { Clock, Logger } from '@mk8s/component-base';
import { BoundedFrequencyRunner } from './bounded-frequency-runner.js';
import type { IptablesRunner } from './iptables.js';
import type { ProxyMetrics } from './metrics.js';
import { JUMP_RULES, NAT_PREAMBLE, comparePorts, fixedRules, incrementalRestoreInput, isLargeCluster, missingJumps, natPostamble, portBlock, programStats, renderCleanup, renderServicePort, restoreTail, ruleContext, type FixedRules, type RuleContext, type ServicePortRules } from './rules.js';
import { endpointsByServicePort, servicePorts, type EndpointInfo, type ServicePortInfo } from './service-state.js';

export type ServiceObj = Named<Service> & KubeObject;
export type EndpointSliceObj = Named<EndpointSlice> & KubeObject;

export interface ProxierOptions {
  services: SharedInformer<ServiceObj>;
  endpointSlices: SharedInformer<EndpointSliceObj>;
  iptables: IptablesRunner;
  clusterCidr: string;
  /** @default 1000 */
  minSyncPeriodMs?: number;
  /**
   * Period of the check that our rules are still there (upstream's canary monitor): if nat
   * KUBE-MARK-MASQ or filter KUBE-FORWARD is gone or empty (a table flushed or deleted), the
   * next sync is full. Also the longest time without a sync. @default 30000
   */
  syncPeriodMs?: number;
  /** A full sync (re-apply everything, re-ensure the jumps) at least this often (upstream FullSyncPeriod). @default 3600000 */
  fullSyncPeriodMs?: number;
  clock: Clock;
  logger: Logger;
  metrics?: ProxyMetrics;
  /** Called after every sync that got as far as rendering (benchmarks, debugging). */
  onSync?: (r: SyncResult) => void;
}

/** What one sync did (tests and benchmarks). */
export interface SyncResult {
  applied: boolean;
  full: boolean;
  ruleCounts: { filter: number; nat: number };
  /** The restore input ('' when nothing was restored). */
  input?: string;
  /** Services re-rendered (all of them on a full sync). */
  servicesRendered?: number;
  /** performance.now() at the sync's start, after rendering, after the restore (or skip). */
  perf?: { start: number; rendered: number; done: number };
}

/** The slices of a Service, by "ns/name" (the kubernetes.io/service-name label). */
const BY_SERVICE = 'kube-proxy/service';
const sliceService = (s: EndpointSlice): string | undefined => {
  const svc = s.metadata?.labels?.['kubernetes.io/service-name'];
  return svc ? `${s.metadata?.namespace ?? 'default'}/${svc}` : undefined;
};
const serviceKey = (s: Service) => `${s.metadata?.namespace ?? 'default'}/${s.metadata?.name ?? ''}`;

export class Proxier {
  private readonly runner: BoundedFrequencyRunner;
  /** Rebuilt (and every port re-rendered by a full sync) when large-cluster mode flips. */
  private ctx: RuleContext;
  /** Wanted: the rules of every service port by key, its endpoint count, each Service's port keys. */
  private readonly desired = new Map<string, ServicePortRules>();
  private readonly endpointCount = new Map<string, number>();
  private readonly portsOf = new Map<string, string[]>();
  /** Port keys in program order; undefined when a port came or went. */
  private order: string[] | undefined;
  /** The fixed chains' text for desired; undefined when a port's part of them changed. */
  private fixed: FixedRules | undefined;
  private ruleCounts = { filter: 3, nat: 5 };
  /** What the kernel holds since the last successful restore. */
  private applied = new Map<string, ServicePortRules>();
  private appliedFixed: FixedRules | undefined;
  /** Services whose objects changed since their last render. */
  private dirty = new Set<string>();
  /** Port keys re-rendered since the last successful restore. */
  private pendingPorts = new Set<string>();
  private needFull = true;
  /** clock.now() of the last successful full sync. */
  private lastFullAt = -Infinity;
  private cancelPeriodic: (() => void) | undefined;
  private synced = false;
  private lastError: unknown;
  /** Resolvers waiting for the next successful sync. */
  private syncWaiters: (() => void)[] = [];

  constructor(private readonly o: ProxierOptions) {
    this.ctx = ruleContext(o.clusterCidr);
    this.runner = new BoundedFrequencyRunner({
      fn: async () => { await this.syncProxyRules(); },
      minIntervalMs: o.minSyncPeriodMs ?? 1000,
      clock: o.clock,
      onError: (err) => { this.lastError = err; this.needFull = true; o.metrics?.restoreFailures.inc(); o.logger.warn({ err }, 'Sync of proxy rules failed, will retry'); },
    });
    o.endpointSlices.addIndexer(BY_SERVICE, (s) => { const k = sliceService(s); return k ? [k] : []; });
    const svcChanged = (s: Service) => { this.dirty.add(serviceKey(s)); this.runner.run(); };
    const sliceChanged = (s: EndpointSlice) => { const k = sliceService(s); if (k) { this.dirty.add(k); this.runner.run(); } };
    o.services.addEventHandler({ onAdd: svcChanged, onUpdate: (a, b) => { svcChanged(a); svcChanged(b); }, onDelete: svcChanged });
    o.endpointSlices.addEventHandler({ onAdd: sliceChanged, onUpdate: (a, b) => { sliceChanged(a); sliceChanged(b); }, onDelete: sliceChanged });
  }

  /** Starts syncing (the first, full sync at once) and the periodic check and full resync. */
  start(): void {
    this.runner.run();
    const period = this.o.syncPeriodMs ?? 30_000;
    const periodic = () => {
      void this.periodicCheck().then((full) => {
        if (full) this.needFull = true;
        this.runner.run();
      });
      this.cancelPeriodic = this.o.clock.setTimeout(periodic, period);
    };
    this.cancelPeriodic = this.o.clock.setTimeout(periodic, period);
  }

  /**
   * Whether the periodic sync must be full: the full sync period passed, or our rules are gone
   * (upstream watches canary chains for this; reading two fixed chains of ours also catches a
   * flushed table, whose chains stay but lose their rules). A full sync every period instead
   * would make every change that comes during one wait for it (seconds with 1,000 Services).
   */
  private async periodicCheck(): Promise<boolean> {
    if (this.needFull) return true;     // already asked for (or running: its restore may not be in yet)
    if (this.o.clock.now() - this.lastFullAt >= (this.o.fullSyncPeriodMs ?? 3_600_000)) return true;
    const read = this.o.iptables.chainRules?.bind(this.o.iptables);
    if (!read) return true;     // a runner that cannot tell: re-apply everything, as before
    try {
      const [nat, filter] = await Promise.all([read('nat', 'KUBE-MARK-MASQ'), read('filter', 'KUBE-FORWARD')]);
      const intact = !!nat?.some((l) => l.startsWith('-A KUBE-MARK-MASQ ')) && !!filter?.some((l) => l.startsWith('-A KUBE-FORWARD '));
      if (!intact) this.o.logger.info('Proxy rules are gone (table flushed?), next sync is full');
      return !intact;
    } catch (err) {
      this.o.logger.warn({ err }, 'Could not read proxy rules back, next sync is full');
      return true;
    }
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

  /** One Service's ports with all their endpoints, from the listers' current state. */
  private servicePortsOf(key: string): { sp: ServicePortInfo; all: readonly EndpointInfo[] }[] {
    const svc = this.o.services.lister.get(key);
    const sps = svc ? servicePorts([svc]) : [];
    if (sps.length === 0) return [];
    const eps = endpointsByServicePort(this.o.endpointSlices.lister.byIndex(BY_SERVICE, key));
    return sps.map((sp) => ({ sp, all: eps.get(`${sp.name}/${sp.protocol}`) ?? [] }));
  }

  /** Re-renders one Service's ports from the listers' current state. */
  private renderService(key: string): void {
    const before = this.portsOf.get(key) ?? [];
    const now: string[] = [];
    for (const { sp, all } of this.servicePortsOf(key)) {
      const r = renderServicePort(sp, all, this.ctx);
      const old = this.desired.get(r.key);
      if (!old) this.order = undefined;
      if (!old || old.filter !== r.filter || old.natServices !== r.natServices || old.natNodePorts !== r.natNodePorts) this.fixed = undefined;
      this.count(old, -1);
      this.count(r, 1);
      this.desired.set(r.key, r);
      this.endpointCount.set(r.key, all.length);
      this.pendingPorts.add(r.key);
      now.push(r.key);
    }
    for (const k of before) {
      if (now.includes(k)) continue;
      this.count(this.desired.get(k), -1);
      this.desired.delete(k);
      this.endpointCount.delete(k);
      this.pendingPorts.add(k);
      this.order = undefined;
      this.fixed = undefined;
    }
    if (now.length > 0) this.portsOf.set(key, now); else this.portsOf.delete(key);
  }

  private count(r: ServicePortRules | undefined, sign: 1 | -1): void {
    if (!r) return;
    this.ruleCounts.filter += sign * r.ruleCounts.filter;
    this.ruleCounts.nat += sign * r.ruleCounts.nat;
  }

  private orderedPorts(): ServicePortRules[] {
    this.order ??= [...this.desired.values()].sort(comparePorts).map((r) => r.key);
    return this.order.map((k) => this.desired.get(k)!);
  }

  /**
   * syncProxyRules renders the dirty Services (all of them on a full sync) and restores what
   * changed (everything on a full sync). Rejects if iptables-restore fails (the runner retries).
   */
  async syncProxyRules(): Promise<SyncResult> {
    if (!this.o.services.hasSynced() || !this.o.endpointSlices.hasSynced()) {
      this.o.clock.setTimeout(() => this.runner.run(), 100);
      return { applied: false, full: false, ruleCounts: { filter: 0, nat: 0 } };
    }
    const start = performance.now();
    const started = this.o.clock.now();
    let full = this.needFull;
    let rendered = 0;
    let renderedAt = start;
    let input = '';
    if (!full) {
      const dirty = [...this.dirty];
      this.dirty.clear();
      for (const k of dirty) this.renderService(k);
      rendered = dirty.length;
      let total = 0;
      for (const n of this.endpointCount.values()) total += n;
      // Crossing the threshold changes every port's text: this sync becomes a full one.
      if (isLargeCluster(total) !== this.ctx.largeClusterMode) full = true;
    }
    if (full) {
      input = await this.fullRestore((n, t) => { rendered = n; renderedAt = t; });
    } else {
      this.fixed ??= fixedRules(this.orderedPorts(), this.ctx);
      input = incrementalRestoreInput({ ports: this.applied, fixed: this.appliedFixed ?? this.fixed }, { ports: this.desired, fixed: this.fixed }, this.pendingPorts);
      renderedAt = performance.now();
      if (input !== '') await this.o.iptables.restore(input, { noflush: true });
    }
    this.markApplied(full);
    // Only a full sync satisfies a request for one: a check that asked for it while this partial
    // sync was restoring must not be lost.
    if (full) { this.lastFullAt = started; this.needFull = false; }
    this.lastError = undefined;
    const m = this.o.metrics;
    if (input === '') {
      m?.skippedSyncs.inc();
    } else if (m) {
      m.syncDuration.observe((this.o.clock.now() - started) / 1000);
      m.ruleCount.set({ table: 'filter' }, this.ruleCounts.filter);
      m.ruleCount.set({ table: 'nat' }, this.ruleCounts.nat);
      m.lastSync.set(this.o.clock.now() / 1000);
      m.servicePorts.set(this.desired.size);
      let n = 0;
      for (const e of this.endpointCount.values()) n += e;
      m.endpoints.set(n);
    }
    if (input !== '') this.o.logger.debug({ full, servicePorts: this.desired.size, rendered, rules: this.ruleCounts, ms: performance.now() - start }, 'Synced proxy rules');
    this.finishSync();
    const res: SyncResult = { applied: input !== '', full, ruleCounts: { ...this.ruleCounts }, input, servicesRendered: rendered, perf: { start, rendered: renderedAt, done: performance.now() } };
    this.o.onSync?.(res);
    return res;
  }

  /**
   * A full sync as one iptables-restore that starts at once and is fed while we render: each
   * Service's rules go down the pipe as soon as they are rendered (iptables-restore parses them
   * meanwhile, on the other core), and the end that needs the kernel's state (stale chains,
   * missing jumps) follows when the iptables-save started at the same time has answered.
   * Resolves with the whole input.
   */
  private async fullRestore(onRendered: (services: number, at: number) => void): Promise<string> {
    const kernel = this.o.iptables.save();
    kernel.catch(() => undefined);
    const known: string[] = [];
    for (const r of this.applied.values()) for (const c of r.chains) known.push(c.name);
    const keys = this.o.services.lister.list().map(serviceKey).sort();
    let total = 0;
    for (const k of keys) for (const { all } of this.servicePortsOf(k)) total += all.length;
    if (isLargeCluster(total) !== this.ctx.largeClusterMode) this.ctx = { ...this.ctx, largeClusterMode: isLargeCluster(total) };
    this.dirty.clear();
    this.desired.clear();
    this.endpointCount.clear();
    this.portsOf.clear();
    this.pendingPorts.clear();
    this.ruleCounts = { filter: 3, nat: 5 };
    this.fixed = undefined;
    const parts: string[] = [];
    const chunks = async function* (this: Proxier) {
      parts.push(NAT_PREAMBLE);
      yield NAT_PREAMBLE;
      let buf = '';
      for (const k of keys) {
        this.renderService(k);
        for (const pk of this.portsOf.get(k) ?? []) buf += portBlock(this.desired.get(pk)!);
        if (buf.length > 64 * 1024) { parts.push(buf); yield buf; buf = ''; }   // ~a pipe buffer: the restore never waits long
      }
      // Services sorted, each one's ports in servicePorts' order: that is program order.
      this.order = keys.flatMap((k) => this.portsOf.get(k) ?? []);
      const ports = this.order.map((k) => this.desired.get(k)!);
      this.fixed = fixedRules(ports, this.ctx);
      const { natChains } = programStats(ports);
      onRendered(keys.length, performance.now());
      buf += natPostamble(this.ctx);
      parts.push(buf);
      yield buf;
      const text = await kernel;
      const natSection = text.split('*nat')[1]?.split('COMMIT')[0] ?? '';
      for (const l of natSection.split('\n')) if (l.startsWith(':')) known.push(l.slice(1).split(' ')[0] ?? '');
      const tail = restoreTail(this.fixed, natChains, known, missingJumps(text));
      parts.push(tail);
      yield tail;
    };
    await this.o.iptables.restore(chunks.call(this), { noflush: true });
    return parts.join('');
  }

  /** The kernel now holds the desired rules of every pending port (all ports after a full sync). */
  private markApplied(full: boolean): void {
    if (full) {
      this.applied = new Map(this.desired);
    } else {
      for (const k of this.pendingPorts) {
        const r = this.desired.get(k);
        if (r) this.applied.set(k, r); else this.applied.delete(k);
      }
    }
    this.pendingPorts.clear();
    this.appliedFixed = this.fixed;
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
