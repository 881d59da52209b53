/**
 * CumulativeSum keeps a monotonic total over a changing set of cumulative counters, as a cgroup
 * parent's counter is the monotonic total of its children, the gone ones included. A pod here has
 * no cgroup of its own (each container is its own cgroup) and a node is its pods plus its
 * processes, so their CPU counters are sums of members that come and go: a member's last value
 * is folded into a base when it disappears (or restarts under the same key), so the total never
 * goes backwards and a rate over it stays right (rate() and metrics-server drop decreasing counters).
 * Pure; not safe for interleaved use by concurrent callers of the same instance (keep one per owner).
 */
export class CumulativeSum {
  private base = 0;
  private readonly last = new Map<string, number>();

  /** Folds in the current values of every live member (all of them: absent ones are gone) and returns the total. */
  update(members: ReadonlyMap<string, number>): number {
    for (const [k, v] of this.last) {
      const now = members.get(k);
      if (now === undefined || now < v) this.base += v;          // gone, or restarted from 0 under the same key
      if (now === undefined) this.last.delete(k);
    }
    let total = this.base;
    for (const [k, v] of members) { this.last.set(k, v); total += v; }
    return total;
  }
}
