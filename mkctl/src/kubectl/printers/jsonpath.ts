/**
 * kubectl's JSONPath templates (k8s.io/client-go/util/jsonpath): literal text with `{...}`
 * actions: `.a.b`, `['a.b']`, `[n]`, `[a:b]`, `[*]`, `..name`, filters `[?(@.k=="v")]`,
 * `range ... end`, and quoted literals such as `{"\n"}`. Several results of one action are
 * joined by a space; objects print as JSON. Missing keys print nothing (kubectl get's default).
 */
import { CliError } from '../context.js';

type Step =
  | { t: 'field'; name: string }
  | { t: 'index'; start?: number; end?: number; single: boolean }
  | { t: 'all' }
  | { t: 'recurse'; name: string }
  | { t: 'filter'; path: Step[]; op?: string; value?: unknown };

type Node = { t: 'text'; text: string } | { t: 'path'; steps: Step[]; root: boolean } | { t: 'range'; steps: Step[]; body: Node[] };

function parsePath(expr: string): Step[] {
  const steps: Step[] = [];
  let i = 0;
  const s = expr.trim();
  if (s === '@' || s === '$') return steps;
  if (s[0] === '$' || s[0] === '@') i = 1;
  while (i < s.length) {
    if (s.startsWith('..', i)) {
      i += 2;
      const m = /^[\w-]+/.exec(s.slice(i));
      steps.push({ t: 'recurse', name: m?.[0] ?? '' });
      i += m?.[0].length ?? 0;
    } else if (s[i] === '.') {
      i++;
      const m = /^[\w-]+/.exec(s.slice(i));
      if (!m) { if (i >= s.length) break; throw new CliError(`error: error parsing jsonpath ${expr}, unrecognized identifier`); }
      steps.push({ t: 'field', name: m[0] });
      i += m[0].length;
    } else if (s[i] === '[') {
      const close = matching(s, i);
      const inner = s.slice(i + 1, close).trim();
      i = close + 1;
      if (inner === '*') steps.push({ t: 'all' });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ t: 'field', name: inner.slice(1, -1) });
      else if (inner.startsWith('?(')) {
        const body = inner.slice(2, -1).trim();
        const m = /^(@[^=!<>]*?)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(body);
        if (m) {
          const raw = m[3]!.trim();
          const value = /^['"]/.test(raw) ? raw.slice(1, -1) : Number(raw);
          steps.push({ t: 'filter', path: parsePath(m[1]!), op: m[2]!, value });
        } else steps.push({ t: 'filter', path: parsePath(body) });
      } else if (/^-?\d*(:-?\d*)?$/.test(inner)) {
        const [a, b] = inner.split(':');
        const step: Step = { t: 'index', single: b === undefined };
        if (a) step.start = Number(a);
        if (b) step.end = Number(b);
        steps.push(step);
      } else throw new CliError(`error: error parsing jsonpath ${expr}, invalid array index ${inner}`);
    } else if (/\w/.test(s[i]!)) {
      const m = /^[\w-]+/.exec(s.slice(i))!;
      steps.push({ t: 'field', name: m[0] });
      i += m[0].length;
    } else throw new CliError(`error: error parsing jsonpath ${expr}, unrecognized character in action: ${s[i]}`);
  }
  return steps;
}

function matching(s: string, open: number): number {
  let depth = 0;
  let quote = '';
  for (let i = open; i < s.length; i++) {
    const c = s[i]!;
    if (quote) { if (c === quote) quote = ''; continue; }
    if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') { depth--; if (depth === 0) return i; }
  }
  throw new CliError(`error: error parsing jsonpath ${s}, unclosed bracket`);
}

function parseTemplate(tpl: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  let i = 0;
  while (i < tpl.length) {
    const open = tpl.indexOf('{', i);
    if (open < 0) { stack.at(-1)!.push({ t: 'text', text: tpl.slice(i) }); break; }
    if (open > i) stack.at(-1)!.push({ t: 'text', text: tpl.slice(i, open) });
    let close = open + 1;
    let quote = '';
    for (; close < tpl.length; close++) {
      const c = tpl[close]!;
      if (quote) { if (c === '\\') close++; else if (c === quote) quote = ''; continue; }
      if (c === '"' || c === "'") quote = c;
      else if (c === '}') break;
    }
    if (close >= tpl.length) throw new CliError(`error: error parsing jsonpath ${tpl}, unclosed action`);
    const action = tpl.slice(open + 1, close).trim();
    i = close + 1;
    if (/^".*"$/s.test(action)) stack.at(-1)!.push({ t: 'text', text: JSON.parse(action) as string });
    else if (action.startsWith('range ')) {
      const node: Node = { t: 'range', steps: parsePath(action.slice(6)), body: [] };
      stack.at(-1)!.push(node);
      stack.push(node.body);
    } else if (action === 'end') {
      if (stack.length === 1) throw new CliError(`error: error parsing jsonpath ${tpl}, not in range, nothing to end`);
      stack.pop();
    } else stack.at(-1)!.push({ t: 'path', steps: parsePath(action), root: true });
  }
  return root;
}

function evalSteps(steps: Step[], input: unknown[]): unknown[] {
  let cur = input;
  for (const st of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (st.t === 'field') {
        if (v && typeof v === 'object' && !Array.isArray(v) && st.name in v) next.push((v as Record<string, unknown>)[st.name]);
      } else if (st.t === 'all') {
        if (Array.isArray(v)) next.push(...v);
        else if (v && typeof v === 'object') next.push(...Object.values(v));
      } else if (st.t === 'index') {
        if (!Array.isArray(v)) continue;
        const norm = (n: number) => (n < 0 ? v.length + n : n);
        if (st.single) { const k = norm(st.start ?? 0); if (k >= 0 && k < v.length) next.push(v[k]); }
        else next.push(...v.slice(norm(st.start ?? 0), st.end === undefined ? undefined : norm(st.end)));
      } else if (st.t === 'recurse') {
        const walk = (x: unknown) => {
          if (Array.isArray(x)) x.forEach(walk);
          else if (x && typeof x === 'object') {
            for (const [k, y] of Object.entries(x)) { if (!st.name || k === st.name) next.push(y); walk(y); }
          }
        };
        walk(v);
      } else if (st.t === 'filter') {
        const items = Array.isArray(v) ? v : [v];
        for (const it of items) {
          const got = evalSteps(st.path, [it]);
          if (!st.op) { if (got.length) next.push(it); continue; }
          const l = got[0];
          const r = st.value;
          const ok = st.op === '==' ? l === r || String(l) === String(r) : st.op === '!=' ? String(l) !== String(r)
            : st.op === '<' ? Number(l) < Number(r) : st.op === '>' ? Number(l) > Number(r)
              : st.op === '<=' ? Number(l) <= Number(r) : Number(l) >= Number(r);
          if (got.length && ok) next.push(it);
        }
      }
    }
    cur = next;
  }
  return cur;
}

const show = (v: unknown) => (typeof v === 'string' ? v : v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** Executes a kubectl JSONPath template against data. */
export function jsonpath(template: string, data: unknown, _o: { allowMissing?: boolean } = {}): string {
  // kubectl accepts a bare path without braces.
  const tpl = template.includes('{') ? template : `{${template}}`;
  const run = (nodes: Node[], ctx: unknown): string => nodes.map((n) => {
    if (n.t === 'text') return n.text;
    if (n.t === 'path') return evalSteps(n.steps, [ctx]).map(show).join(' ');
    return evalSteps(n.steps, [ctx]).map((item) => run(n.body, item)).join('');
  }).join('');
  return run(parseTemplate(tpl), data);
}
