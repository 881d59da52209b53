/**
 * Completion indexes as upstream's orderedIntervals (pkg/controller/job/indexed_job_utils.go):
 * status.completedIndexes is "1,3-5,7" — sorted, two adjacent numbers listed, three or more
 * compressed into first-last.
 */

/** Parses completedIndexes, keeping only indexes below completions. Sorted, unique. */
export function parseIndexes(s: string | undefined, completions: number): number[] {
  const out = new Set<number>();
  for (const part of (s ?? '').split(',')) {
    if (!part) continue;
    const [a, b] = part.split('-');
    const first = Number(a), last = b === undefined ? first : Number(b);
    if (!Number.isInteger(first) || !Number.isInteger(last)) continue;
    for (let i = first; i <= last && i < completions; i++) out.add(i);
  }
  return [...out].sort((x, y) => x - y);
}

/** Formats sorted or unsorted indexes as upstream prints them. */
export function formatIndexes(indexes: Iterable<number>): string {
  const xs = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < xs.length;) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j]! + 1) j++;
    if (j === i) parts.push(String(xs[i]));
    else if (j === i + 1) parts.push(`${xs[i]},${xs[j]}`);
    else parts.push(`${xs[i]}-${xs[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
