/**
 * Local quantity parsing (resource.Quantity) until @mk8s/api exports its own; the scheduler only
 * needs integer milli-CPU and byte/count values, rounded up like Quantity.MilliValue()/Value().
 */
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const RE = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/** Parses a quantity into its numeric value (may be fractional); throws on a malformed one. */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = RE.exec(q.trim());
  if (!m) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${q}`);
  const n = Number(m[1]);
  if (m[2]) return n * (BINARY[m[2]] ?? DECIMAL[m[2]] ?? 1);
  if (m[3]) return n * 10 ** Number(m[3]);
  return n;
}

/** Milli-units rounded up (Quantity.MilliValue): '100m' → 100, '1' → 1000, '0.5' → 500. */
export function parseCpuMillis(q: string | number): number {
  return Math.ceil(Math.round(parseQuantity(q) * 1e3 * 1e6) / 1e6);
}

/** Whole units rounded up (Quantity.Value): '1Gi' → 1073741824, '1.5' → 2. */
export function parseBytes(q: string | number): number {
  return Math.ceil(Math.round(parseQuantity(q) * 1e6) / 1e6);
}
