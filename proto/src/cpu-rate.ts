/**
 * CpuRateCache turns cumulative CPU samples into usageNanoCores, with the semantics of upstream's
 * CRI stats (cadvisor, containerd's CRI plugin, the kubelet's cri_stats_provider): the rate is
 * (usage₂ − usage₁) / (t₂ − t₁) between two cumulative samples of the same key. Several readers
 * (metrics-server every 15 s, /stats/summary, /metrics/cadvisor) share one runtime, so the cache
 * keeps a few recent samples and measures against the newest one at least `minWindowMs` older
 * than the new sample: a scrape 15 s after the previous one reads the rate over those 15 s even
 * when another reader sampled in between, and two reads 10 ms apart do not yield a noisy 10 ms rate.
 * Pure and synchronous: time comes in with each sample (no clock inside), so tests need no fakes.
 */

/** One cumulative sample: CPU nanoseconds used so far, at timestampNs (ns since the epoch). */
export interface CpuSample { usageCoreNanoSeconds: number; timestampNs: number }

export interface CpuRateCacheOptions {
  /** The shortest window a rate is measured over, when an older sample exists. @default 1000 (cadvisor's housekeeping interval) */
  minWindowMs?: number;
  /** Samples kept per key (bounded memory however often it is read). @default 8 */
  maxSamples?: number;
}

export class CpuRateCache {
  private readonly samples = new Map<string, CpuSample[]>();
  private readonly minWindowNs: number;
  private readonly maxSamples: number;

  constructor(o: CpuRateCacheOptions = {}) {
    this.minWindowNs = (o.minWindowMs ?? 1000) * 1e6;
    this.maxSamples = Math.max(2, o.maxSamples ?? 8);
  }

  /**
   * Records a sample of key and returns the rate in nanocores since the chosen earlier sample,
   * undefined on the first sample (or when the counter went backwards: a restarted process under
   * the same key starts over). A sample not newer than the last one is not recorded.
   */
  record(key: string, s: CpuSample): number | undefined {
    let list = this.samples.get(key);
    if (!list) { this.samples.set(key, [s]); return undefined; }
    const last = list[list.length - 1]!;
    if (s.usageCoreNanoSeconds < last.usageCoreNanoSeconds) { this.samples.set(key, [s]); return undefined; }
    // The reference: the newest sample at least minWindow older than s, else the oldest kept.
    let ref = list[0]!;
    for (const x of list) if (s.timestampNs - x.timestampNs >= this.minWindowNs) ref = x;
    const dt = s.timestampNs - ref.timestampNs;
    if (s.timestampNs > last.timestampNs) {
      list.push(s);
      // Drop samples older than the newest one that is already a full window old: never needed again.
      let keepFrom = 0;
      for (let i = 0; i < list.length; i++) if (s.timestampNs - list[i]!.timestampNs >= this.minWindowNs) keepFrom = i;
      if (keepFrom > 0) list = list.slice(keepFrom);
      if (list.length > this.maxSamples) list = list.slice(list.length - this.maxSamples);
      this.samples.set(key, list);
    }
    if (dt <= 0) return undefined;
    return Math.round(((s.usageCoreNanoSeconds - ref.usageCoreNanoSeconds) / dt) * 1e9);
  }

  /** Forgets every key not in live (containers and pods that are gone). */
  retain(live: ReadonlySet<string>): void {
    for (const k of this.samples.keys()) if (!live.has(k)) this.samples.delete(k);
  }

  /** How many keys are cached (tests, bounded-memory checks). */
  get size(): number { return this.samples.size; }
}
