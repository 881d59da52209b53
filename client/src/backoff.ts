import type { Clock } from '@mk8s/component-base';

/**
 * Backoff: per-key exponential delays (client-go `util/flowcontrol.Backoff`, as the kubelet uses it
 * for CrashLoopBackOff, ImagePullBackOff and sandbox creation). An entry not touched for 2 × max is forgotten, which is
 * what resets a container's back-off after it ran for 10 minutes.
 */
export class Backoff {
  private readonly entries = new Map<string, { durationMs: number; lastUpdateMs: number }>();
  readonly initialMs: number;
  readonly maxMs: number;
  constructor(private readonly o: { clock: Clock; initialMs: number; maxMs: number }) {
    this.initialMs = o.initialMs;
    this.maxMs = o.maxMs;
  }

  /** The live entry of key at nowMs, for pure decisions that read the back-off (a copy). */
  entry(key: string, nowMs: number): { durationMs: number; lastUpdateMs: number } | undefined {
    const e = this.entries.get(key);
    return e && nowMs - e.lastUpdateMs <= 2 * this.o.maxMs ? { ...e } : undefined;
  }

  private live(key: string, at: number): { durationMs: number; lastUpdateMs: number } | undefined {
    const e = this.entries.get(key);
    if (e && at - e.lastUpdateMs > 2 * this.o.maxMs) { this.entries.delete(key); return undefined; }
    return e;
  }

  /** The current delay of key (0 when none). */
  get(key: string): number { return this.live(key, this.o.clock.now())?.durationMs ?? 0; }

  /** Records one more failure at eventTimeMs: the first gives initialMs, then it doubles up to maxMs. */
  next(key: string, eventTimeMs: number = this.o.clock.now()): void {
    const e = this.live(key, eventTimeMs);
    if (!e) this.entries.set(key, { durationMs: this.o.initialMs, lastUpdateMs: eventTimeMs });
    else { e.durationMs = Math.min(e.durationMs * 2, this.o.maxMs); e.lastUpdateMs = eventTimeMs; }
  }

  /** Sets key's delay as if its last failure was at lastUpdateMs (rebuilding state after a restart). */
  seed(key: string, durationMs: number, lastUpdateMs: number): void {
    if (this.o.clock.now() - lastUpdateMs > 2 * this.o.maxMs) return;
    this.entries.set(key, { durationMs, lastUpdateMs });
  }

  /** True while now is within the key's delay after eventTimeMs (e.g. the container's finish time). */
  isInBackOffSince(key: string, eventTimeMs: number): boolean {
    const now = this.o.clock.now();
    const e = this.live(key, now);
    if (!e) return false;
    return now - eventTimeMs < e.durationMs;
  }

  /** True while now is within the key's delay after its last update. */
  isInBackOffSinceUpdate(key: string): boolean {
    const now = this.o.clock.now();
    const e = this.live(key, now);
    return !!e && now - e.lastUpdateMs < e.durationMs;
  }

  /** Milliseconds until the back-off since eventTimeMs ends (0 when not backing off). */
  remaining(key: string, eventTimeMs: number): number {
    const e = this.live(key, this.o.clock.now());
    return e ? Math.max(0, eventTimeMs + e.durationMs - this.o.clock.now()) : 0;
  }

  /** Milliseconds until the back-off since the key's last update ends (0 when not backing off). */
  remainingSinceUpdate(key: string): number {
    const e = this.live(key, this.o.clock.now());
    return e ? Math.max(0, e.lastUpdateMs + e.durationMs - this.o.clock.now()) : 0;
  }

  /** Forgets keys starting with prefix (a deleted pod's entries). */
  forgetPrefix(prefix: string): void { for (const k of [...this.entries.keys()]) if (k.startsWith(prefix)) this.entries.delete(k); }
}
