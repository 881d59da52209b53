/** Shared helpers for benchmarks: percentiles, bounded concurrency, printing. */
export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const i = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[i]!;
}

export function summarize(latMs: number[]): { p50: number; p99: number; n: number } {
  const s = [...latMs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), n: s.length };
}

/** Runs fn(i) for i in [0, total) with at most `inFlight` at once; returns per-call latencies (ms). */
export async function runConcurrent(total: number, inFlight: number, fn: (i: number) => Promise<void>): Promise<{ latMs: number[]; elapsedMs: number }> {
  const latMs: number[] = [];
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const t = performance.now();
      await fn(i);
      latMs.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, total) }, worker));
  return { latMs, elapsedMs: performance.now() - start };
}

export const fmt = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

export function printRow(name: string, ours: string, floor: string, ratio: string, goal: string): void {
  console.log(`${name.padEnd(38)} ${ours.padStart(14)} ${floor.padStart(14)} ${ratio.padStart(10)}   goal ${goal}`);
}

export function printHeader(title: string): void {
  console.log(`\n${title}`);
  console.log(`${'figure'.padEnd(38)} ${'mk8s'.padStart(14)} ${'raw floor'.padStart(14)} ${'ratio'.padStart(10)}`);
}
