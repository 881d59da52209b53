/**
 * PodCache (upstream `kubelet/container/cache.go`): the runtime state of every pod as the PLEG's
 * relist last read it. The relist is its only writer: `set(uid, state, at)` for each pod whose
 * containers changed, then `updateTime(at)` once it has looked at every pod (an entry it did not
 * touch is still true at that time). A pod worker asks `getNewerThan(uid, t)` with the time its
 * previous sync ended, so every sync decides on state that already shows what the previous one
 * did: no bookkeeping of "echoes" of our own changes, no relist per sync.
 *
 * Times are the start of the read (a state read at `at` is at least that fresh).
 */
import type { PodRuntimeState } from './status.js';

export interface CachedPodState { state: PodRuntimeState; at: number }

const EMPTY: PodRuntimeState = { sandboxes: [], containers: [] };

interface Waiter { uid: string; minMs: number; resolve: (v: CachedPodState) => void; reject: (err: unknown) => void; signal?: AbortSignal; onAbort?: () => void }

export class PodCache {
  private readonly pods = new Map<string, CachedPodState>();
  /** Every entry (and every absent pod) is known to be true as of this time. 0: no relist yet. */
  private timestamp = 0;
  private waiters: Waiter[] = [];

  /** Records uid's state as read at `at` (the relist's start). Wakes syncs waiting for it. */
  set(uid: string, state: PodRuntimeState, at: number): void {
    this.pods.set(uid, { state, at });
    this.notify();
  }

  /** The newest state of uid (empty when the runtime has nothing of it) and its time. */
  get(uid: string): CachedPodState {
    const e = this.pods.get(uid);
    return { state: e?.state ?? EMPTY, at: Math.max(e?.at ?? 0, this.timestamp) };
  }

  /** Resolves with uid's state once it is newer than minMs (strictly), or rejects when signal aborts. */
  getNewerThan(uid: string, minMs: number, signal?: AbortSignal): Promise<CachedPodState> {
    const now = this.get(uid);
    if (now.at > minMs) return Promise.resolve(now);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const w: Waiter = { uid, minMs, resolve, reject, ...(signal ? { signal } : {}) };
      if (signal) {
        w.onAbort = () => { this.waiters = this.waiters.filter((x) => x !== w); reject(signal.reason); };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.push(w);
    });
  }

  /** Marks every entry true as of at: the relist that started then saw no other change. */
  updateTime(at: number): void {
    if (at > this.timestamp) this.timestamp = at;
    this.notify();
  }

  /** Forgets uid (its pod is cleaned up). */
  delete(uid: string): void { this.pods.delete(uid); }

  /** Whether a relist has completed (so an absent pod is known to have nothing in the runtime). */
  hasTimestamp(): boolean { return this.timestamp > 0; }

  private notify(): void {
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      const now = this.get(w.uid);
      if (now.at > w.minMs) {
        if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
        w.resolve(now);
      } else still.push(w);
    }
    this.waiters = still;
  }
}
