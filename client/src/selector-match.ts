/**
 * Minimal label/field selector matching for the fake clientset and client-side filtering.
 * Delegates to @mk8s/api's parsers once they exist there; this covers the string grammar's
 * common forms: k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b); fields by dotted path.
 */
import { ApiError } from '@mk8s/api';

type Pred = (obj: unknown) => boolean;

function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0; let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) { out.push(cur.trim()); cur = ''; continue; }
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** Compiles a label selector string; '' matches everything. Throws ApiError BadRequest when unparsable. */
export function labelSelectorMatcher(selector: string | undefined): (labels: Readonly<Record<string, string>> | undefined) => boolean {
  if (!selector?.trim()) return () => true;
  const reqs = splitTerms(selector).map((term): (l: Readonly<Record<string, string>>) => boolean => {
    let m = /^([^\s!=]+)\s+(in|notin)\s+\((.*)\)$/.exec(term);
    if (m) {
      const [, k, op, vals] = m as unknown as [string, string, string, string];
      const set = vals.split(',').map((v) => v.trim());
      return op === 'in' ? (l) => l[k] !== undefined && set.includes(l[k]!) : (l) => l[k] === undefined || !set.includes(l[k]!);
    }
    m = /^([^\s!=]+)\s*(==|!=|=)\s*([^\s]*)$/.exec(term);
    if (m) {
      const [, k, op, v] = m as unknown as [string, string, string, string];
      return op === '!=' ? (l) => l[k] !== v : (l) => l[k] === v;
    }
    m = /^(!?)\s*([^\s!=(),]+)$/.exec(term);
    if (m) {
      const [, not, k] = m as unknown as [string, string, string];
      return not ? (l) => l[k] === undefined : (l) => l[k] !== undefined;
    }
    throw new ApiError('BadRequest', `unable to parse requirement: ${term}`);
  });
  return (labels) => reqs.every((r) => r(labels ?? {}));
}

/** Value of a dotted field path as a string ('' when absent), as field selectors compare. */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur === undefined || cur === null ? '' : String(cur);
}

/** Compiles a field selector string (f=v, f==v, f!=v, comma-AND-ed); '' matches everything. */
export function fieldSelectorMatcher(selector: string | undefined): Pred {
  if (!selector?.trim()) return () => true;
  const reqs = splitTerms(selector).map((term): Pred => {
    const m = /^([^\s!=]+)\s*(==|!=|=)\s*(.*)$/.exec(term);
    if (!m) throw new ApiError('BadRequest', `invalid selector: '${selector}'; can't understand '${term}'`);
    const [, f, op, v] = m as unknown as [string, string, string, string];
    return op === '!=' ? (o) => fieldValue(o, f) !== v : (o) => fieldValue(o, f) === v;
  });
  return (o) => reqs.every((r) => r(o));
}

/** One predicate for both selectors over an object with metadata.labels. */
export function objectMatcher(o: { labelSelector?: string | undefined; fieldSelector?: string | undefined }): Pred {
  const l = labelSelectorMatcher(o.labelSelector);
  const f = fieldSelectorMatcher(o.fieldSelector);
  return (obj) => l((obj as { metadata?: { labels?: Record<string, string> } }).metadata?.labels) && f(obj);
}
