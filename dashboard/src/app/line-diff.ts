/** A line diff (longest common subsequence) for the YAML review before an apply. */

export interface DiffLine { op: ' ' | '+' | '-'; text: string }

/** The lines of a → b as kept (' '), removed ('-') and added ('+'), in order. */
export function lineDiff(a: string, b: string): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  const n = x.length;
  const m = y.length;
  // lcs[i][j]: length of the LCS of x[i..] and y[j..].
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push({ op: ' ', text: x[i]! }); i++; j++; }
    else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: '-', text: x[i++]! });
    else out.push({ op: '+', text: y[j++]! });
  }
  while (i < n) out.push({ op: '-', text: x[i++]! });
  while (j < m) out.push({ op: '+', text: y[j++]! });
  return out;
}

/** Only the changed lines with `context` unchanged lines around each change. */
export function hunks(d: readonly DiffLine[], context = 3): (DiffLine | { op: '…'; text: string })[] {
  const keep = new Array<boolean>(d.length).fill(false);
  d.forEach((l, i) => { if (l.op !== ' ') for (let k = Math.max(0, i - context); k <= Math.min(d.length - 1, i + context); k++) keep[k] = true; });
  const out: (DiffLine | { op: '…'; text: string })[] = [];
  let skipped = false;
  d.forEach((l, i) => {
    if (keep[i]) { out.push(l); skipped = false; } else if (!skipped) { out.push({ op: '…', text: '' }); skipped = true; }
  });
  return out;
}
