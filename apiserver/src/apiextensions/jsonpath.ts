/**
 * The JSONPath subset CRDs use in additionalPrinterColumns and scale paths (client-go jsonpath
 * with AllowMissingKeys): `.a.b`, `.a[0]`, `.a[*].b`, `.a['b.c']`, and filters
 * `.a[?(@.type=="Ready")].status`. Pure.
 */

type Step = { field: string } | { index: number } | { all: true } | { filter: { path: string[]; value: string } };

/** Parses a path like `.status.conditions[?(@.type=="Ready")].status`; throws on what it cannot read. */
export function parseJsonPath(path: string): Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  if (p.startsWith('$')) p = p.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '.') {
      let j = i + 1;
      while (j < p.length && p[j] !== '.' && p[j] !== '[') j++;
      const name = p.slice(i + 1, j);
      if (name) steps.push({ field: name });
      i = j;
    } else if (c === '[') {
      const end = matchBracket(p, i);
      const inner = p.slice(i + 1, end).trim();
      if (inner === '*') steps.push({ all: true });
      else if (/^-?\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ field: inner.slice(1, -1) });
      else {
        const m = /^\?\(@((?:\.[^.=!<>\s]+)+)\s*==\s*(?:"([^"]*)"|'([^']*)'|([^)\s]+))\)$/.exec(inner);
        if (!m) throw new Error(`unrecognized JSONPath element [${inner}]`);
        steps.push({ filter: { path: m[1]!.slice(1).split('.'), value: m[2] ?? m[3] ?? m[4] ?? '' } });
      }
      i = end + 1;
    } else {
      throw new Error(`unrecognized character in JSONPath at ${i}: ${c}`);
    }
  }
  return steps;
}

function matchBracket(p: string, start: number): number {
  let depth = 0; let quote = '';
  for (let i = start; i < p.length; i++) {
    const c = p[i]!;
    if (quote) { if (c === quote) quote = ''; continue; }
    if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return i;
  }
  throw new Error('unterminated [ in JSONPath');
}

const get = (v: unknown, k: string | number): unknown =>
  v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined;

/** Every value the path selects (missing keys select nothing). */
export function evalJsonPath(steps: readonly Step[], root: unknown): unknown[] {
  let cur: unknown[] = [root];
  for (const s of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      if ('field' in s) { const x = get(v, s.field); if (x !== undefined) next.push(x); }
      else if ('index' in s) {
        if (Array.isArray(v)) { const x = v[s.index < 0 ? v.length + s.index : s.index]; if (x !== undefined) next.push(x); }
      } else if ('all' in s) {
        if (Array.isArray(v)) next.push(...v); else if (v && typeof v === 'object') next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        for (const item of v) {
          let x: unknown = item;
          for (const k of s.filter.path) x = get(x, k);
          if (x !== undefined && String(x) === s.filter.value) next.push(item);
        }
      }
    }
    cur = next;
  }
  return cur;
}

/** Field names of a simple path (`.spec.replicas` → ['spec', 'replicas']); undefined for anything else. */
export function simplePath(path: string): string[] | undefined {
  try {
    const steps = parseJsonPath(path);
    return steps.every((s) => 'field' in s) ? steps.map((s) => (s as { field: string }).field) : undefined;
  } catch {
    return undefined;
  }
}
