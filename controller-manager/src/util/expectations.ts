/**
 * ControllerExpectations (upstream controller_utils.go, with the UID-tracking variant for
 * deletions): a controller records how many creates/deletes it has issued for a key and holds
 * off the next sync until its informer has observed them, so a slow watch cannot make it create
 * the same pods twice. Records expire after 5 minutes, as upstream, so a lost event cannot wedge a key.
 * Not shared across processes: a new leader starts with no expectations and relists.
 */
import { realClock, type Clock } from '@mk8s/component-base';

export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Record_ { add: number; del: number; timestamp: number; deleteKeys: Set<string> }

export class ControllerExpectations {
  private readonly m = new Map<string, Record_>();
  constructor(private readonly clock: Clock = realClock) {}

  /** True when nothing is pending for key (or the record expired): the controller may act. */
  satisfied(key: string): boolean {
    const r = this.m.get(key);
    if (!r) return true;
    if (r.add <= 0 && r.del <= 0) return true;
    return this.clock.now() - r.timestamp > EXPECTATIONS_TIMEOUT_MS;
  }

  /** Resets the record to expect adds creations. */
  expectCreations(key: string, adds: number): void {
    this.m.set(key, { add: adds, del: 0, timestamp: this.clock.now(), deleteKeys: new Set() });
  }

  /** Resets the record to expect the deletion of each of podKeys. */
  expectDeletions(key: string, podKeys: readonly string[]): void {
    this.m.set(key, { add: 0, del: podKeys.length, timestamp: this.clock.now(), deleteKeys: new Set(podKeys) });
  }

  /** An informer saw one of key's creations (or a create failed and will not be seen). */
  creationObserved(key: string): void {
    const r = this.m.get(key);
    if (r) r.add--;
  }

  /** An informer saw podKey deleted (or a delete failed); counted once per podKey. */
  deletionObserved(key: string, podKey: string): void {
    const r = this.m.get(key);
    if (r && r.deleteKeys.delete(podKey)) r.del--;
  }

  /** Forgets key (its owner was deleted). */
  delete(key: string): void {
    this.m.delete(key);
  }

  /** Pending counts, for tests and debugging. */
  get(key: string): { add: number; del: number } | undefined {
    const r = this.m.get(key);
    return r && { add: r.add, del: r.del };
  }
}
