/**
 * Leader election on coordination.k8s.io Leases (client-go tools/leaderelection). One elector
 * leads at a time: it acquires a free or expired Lease, renews it with compare-and-swap updates,
 * and steps down (aborting the leading signal) when it cannot renew within renewDeadlineMs.
 * Expiry is judged by local observation time, not the holder's clock (as upstream does).
 */
import { Leases, isAlreadyExists, isConflict, isNotFound, type Lease, type KubeObject } from '@mk8s/api';
import { realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';
import type { Clientset, ResourceClient } from './interfaces.js';

/** Options for {@link runLeaderElection}. */
export interface LeaderElectionOptions {
  client: Clientset;
  lock: { namespace: string; name: string };
  /** Unique per process, e.g. `${hostname}_${uuid}`. */
  identity: string;
  /** How long a non-renewed lease blocks others. @default 15_000 */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before stepping down. @default 10_000 */
  renewDeadlineMs?: number;
  /** Interval between acquire/renew attempts. @default 2_000 */
  retryPeriodMs?: number;
  /** Called once leadership is acquired; leading aborts when it is lost or the election stops. */
  onStartedLeading(leading: AbortSignal): void | Promise<void>;
  /** Called once after leading ended (only if leadership was acquired). */
  onStoppedLeading?(): void;
  /** Called when the observed leader changes (including to us). */
  onNewLeader?(identity: string): void;
  /** Aborting stops the election (and releases the lease if releaseOnCancel). */
  signal: AbortSignal;
  /** Clear holderIdentity on a clean stop so a successor need not wait for expiry. @default true */
  releaseOnCancel?: boolean;
  clock?: Clock;
  logger?: Logger;
}

/** Lease times are metav1.MicroTime: RFC3339 with microseconds. */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

type LeaseSpec = NonNullable<Lease['spec']>;
type LeaseObject = KubeObject & { spec?: LeaseSpec };

/** A LeaderElector; runLeaderElection is the usual entry point. */
export class LeaderElector {
  private readonly leases: ResourceClient<LeaseObject>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observed: { spec: LeaseSpec; rv: string | undefined } | undefined;
  private observedTime = 0;
  private reportedLeader: string | undefined;
  private leading = false;
  /** When the last successful acquire/renew attempt started (clock ms). */
  private lastRenewStart = 0;

  constructor(private readonly o: LeaderElectionOptions) {
    this.leases = o.client.resource<LeaseObject>(Leases, o.lock.namespace);
    this.clock = o.clock ?? realClock;
    this.log = (o.logger ?? silentLogger()).child({ lease: `${o.lock.namespace}/${o.lock.name}`, identity: o.identity });
    this.leaseDurationMs = o.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = o.retryPeriodMs ?? 2_000;
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leaseDurationMs must be greater than renewDeadlineMs');
  }

  /** True while this elector holds the lease. */
  isLeader(): boolean { return this.leading; }

  /**
   * True while this elector leads and its last successful renewal started less than
   * renewDeadlineMs ago, i.e. no other candidate can have taken the Lease over yet (they wait
   * leaseDurationMs from when they saw that renewal). A leader that was frozen (SIGSTOP, a long
   * GC pause) sees false here at once when it resumes, before its renew loop runs: work done
   * while leading must check this before each write (the leader-elected component's write fence).
   */
  holdsLease(now = this.clock.now()): boolean {
    return this.leading && now - this.lastRenewStart < this.renewDeadlineMs;
  }
  /** The last observed holder ('' if none). */
  getLeader(): string { return this.observed?.spec.holderIdentity ?? ''; }

  /** Runs the election until the signal aborts or leadership is lost. */
  async run(): Promise<void> {
    const { signal } = this.o;
    if (!(await this.acquire(signal))) return;
    const leadingAc = new AbortController();
    const onOuterAbort = () => leadingAc.abort(signal.reason);
    signal.addEventListener('abort', onOuterAbort, { once: true });
    this.leading = true;
    this.log.info({}, 'Acquired lease');
    void Promise.resolve()
      .then(() => this.o.onStartedLeading(leadingAc.signal))
      .catch((err: unknown) => this.log.error({ err }, 'Leader callback failed'));
    try {
      await this.renewLoop(signal);
    } finally {
      signal.removeEventListener('abort', onOuterAbort);
      this.leading = false;
      leadingAc.abort(new Error('leadership lost'));
      if (signal.aborted && (this.o.releaseOnCancel ?? true)) await this.release();
      this.o.onStoppedLeading?.();
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew(signal)) return true;
      try { await this.clock.sleep(this.acquireRetryDelayMs(this.clock.now()), signal); } catch { return false; }
    }
    return false;
  }

  /**
   * How long a candidate waits before its next try: the retry period with jitter (factor 1.2, as
   * upstream, so candidates do not retry in lockstep), but no later than the moment the lease it
   * observed expires (observedTime + leaseDuration, the same expiry rule as upstream). A poll that
   * lands up to a retry period after the expiry would add that much to every takeover.
   */
  acquireRetryDelayMs(now: number): number {
    const jittered = this.retryPeriodMs * (1 + Math.random() * 0.2);
    const spec = this.observed?.spec;
    if (!spec?.holderIdentity || spec.holderIdentity === this.o.identity) return jittered;
    const expiresIn = this.observedTime + (spec.leaseDurationSeconds ?? 0) * 1000 - now;
    return expiresIn >= 0 && expiresIn < jittered ? expiresIn + 1 : jittered;
  }

  private async renewLoop(signal: AbortSignal): Promise<void> {
    let lastRenew = this.lastRenewStart;
    while (!signal.aborted) {
      try { await this.clock.sleep(this.retryPeriodMs, signal); } catch { return; }
      // Woken past the renew deadline (the process was frozen): another candidate may lead by now,
      // so step down without renewing, as upstream's renew timeout does.
      if (this.clock.now() - lastRenew >= this.renewDeadlineMs) {
        this.log.warn({ renewDeadlineMs: this.renewDeadlineMs, sinceRenewMs: this.clock.now() - lastRenew }, 'Lease not renewed within the renew deadline (process paused?), stepping down');
        return;
      }
      // Bound one attempt by what is left of the renew deadline, so a hung request cannot keep us "leading".
      const left = Math.max(1, this.renewDeadlineMs - (this.clock.now() - lastRenew));
      const attempt = new AbortController();
      const cancelTimer = this.clock.setTimeout(() => attempt.abort(new Error('renew deadline exceeded')), left);
      const onAbort = () => attempt.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      let ok = false;
      try { ok = await this.tryAcquireOrRenew(attempt.signal); } finally { cancelTimer(); signal.removeEventListener('abort', onAbort); }
      if (signal.aborted) return;
      if (ok) { lastRenew = this.lastRenewStart; continue; }
      if (this.clock.now() - lastRenew >= this.renewDeadlineMs) {
        this.log.warn({ renewDeadlineMs: this.renewDeadlineMs }, 'Failed to renew lease, stepping down');
        return;
      }
    }
  }

  /** One acquire-or-renew attempt; false when someone else holds a live lease or the write lost a race. */
  async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    const mine = (spec: Partial<LeaseSpec>): LeaseSpec => ({
      ...spec,
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      renewTime: formatMicroTime(now),
    });
    const opts = signal ? { signal } : {};
    let lease: LeaseObject;
    try {
      lease = await this.leases.get(this.o.lock.name, opts);
    } catch (err) {
      if (!isNotFound(err)) { this.log.warn({ err }, 'Could not get lease'); return false; }
      try {
        const created = await this.leases.create({
          apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
          metadata: { name: this.o.lock.name, namespace: this.o.lock.namespace },
          spec: mine({ acquireTime: formatMicroTime(now), leaseTransitions: 0 }),
        }, opts);
        this.observe(created, now);
        this.lastRenewStart = now;
        return true;
      } catch (e) {
        if (!isAlreadyExists(e)) this.log.warn({ err: e }, 'Could not create lease');
        return false;
      }
    }
    this.observe(lease, now);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder && holder !== this.o.identity && this.observedTime + durationMs > now) return false;
    const next: LeaseSpec = holder === this.o.identity && this.leading
      ? mine(spec)
      : mine({ ...spec, acquireTime: formatMicroTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === this.o.identity ? 0 : 1) });
    try {
      const updated = await this.leases.update({ ...lease, spec: next }, opts);
      this.observe(updated, now);
      this.lastRenewStart = now;
      return true;
    } catch (err) {
      if (!isConflict(err)) this.log.warn({ err }, 'Could not update lease');
      return false;
    }
  }

  private observe(lease: LeaseObject, now: number): void {
    const spec = lease.spec ?? {};
    const prev = this.observed?.spec;
    if (!prev || prev.holderIdentity !== spec.holderIdentity || prev.renewTime !== spec.renewTime || prev.leaseDurationSeconds !== spec.leaseDurationSeconds) {
      this.observedTime = now;
    }
    this.observed = { spec, rv: lease.metadata.resourceVersion };
    const leader = spec.holderIdentity ?? '';
    if (leader && leader !== this.reportedLeader) {
      this.reportedLeader = leader;
      this.o.onNewLeader?.(leader);
    }
  }

  /** Gives the lease up (holder cleared, 1s duration) so a successor can take over at once. */
  private async release(): Promise<void> {
    try {
      const lease = await this.leases.get(this.o.lock.name);
      if (lease.spec?.holderIdentity !== this.o.identity) return;
      const now = this.clock.now();
      await this.leases.update({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: formatMicroTime(now), acquireTime: formatMicroTime(now) } }, { signal: AbortSignal.timeout(5_000) });
      this.log.info({}, 'Released lease');
    } catch (err) {
      this.log.warn({ err }, 'Could not release lease');
    }
  }
}

/**
 * runLeaderElection campaigns for the lease, calls onStartedLeading once acquired, renews until the
 * signal aborts or renewal fails past renewDeadlineMs, then aborts the leading signal and calls
 * onStoppedLeading. Resolves when the election is over (callers usually exit the process then).
 */
export async function runLeaderElection(o: LeaderElectionOptions): Promise<void> {
  await new LeaderElector(o).run();
}
