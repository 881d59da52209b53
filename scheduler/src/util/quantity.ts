/**
 * Quantities come from @mk8s/api (resource.Quantity semantics: MilliValue/Value rounded up),
 * memoized: every pod the informer delivers is parsed into a PodInfo, and a cluster's pods use a
 * handful of distinct request strings ('100m', '128Mi'), so parsing them again is wasted work.
 */
import { parseBytes as parseBytesUncached, parseCpuMillis as parseCpuMillisUncached } from '@mk8s/api';

const MAX_MEMO = 4096;
function memoize(parse: (q: string) => number): (q: string) => number {
  const memo = new Map<string, number>();
  return (q) => {
    let v = memo.get(q);
    if (v === undefined) {
      v = parse(q); // throws on an invalid quantity, which is then not remembered
      if (memo.size >= MAX_MEMO) memo.clear();
      memo.set(q, v);
    }
    return v;
  };
}

export const parseBytes = memoize(parseBytesUncached);
export const parseCpuMillis = memoize(parseCpuMillisUncached);
