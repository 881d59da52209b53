/**
 * ResourceAmounts arithmetic as upstream's pkg/quota/v1 helpers (Add, Subtract, Max, Mask,
 * LessThanOrEqual, IsZero) on exact quantities, printed in upstream's canonical form.
 */
import { formatQuantity, parseQuantityExact, type Quantity } from '../quantity.js';

/** resource name → quantity string (a core/v1 ResourceList). */
export type ResourceAmounts = Record<string, string>;

const q = (v: string | number | undefined): Quantity => parseQuantityExact(v ?? '0');
const fmt = (x: Quantity): string => formatQuantity(x);
function plus(a: Quantity, b: Quantity, sign: 1n | -1n): Quantity {
  return { num: a.num * b.den + sign * b.num * a.den, den: a.den * b.den, format: a.format };
}
const cmp = (a: Quantity, b: Quantity): number => { const l = a.num * b.den, r = b.num * a.den; return l < r ? -1 : l > r ? 1 : 0; };

/** a + b for every key of either (a's format wins). */
export function addLists(a: ResourceAmounts | undefined, b: ResourceAmounts | undefined): ResourceAmounts {
  const out: ResourceAmounts = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b ?? {})) out[k] = k in out ? fmt(plus(q(out[k]), q(v), 1n)) : fmt(q(v));
  return out;
}

/** a - b for every key of either. */
export function subtractLists(a: ResourceAmounts | undefined, b: ResourceAmounts | undefined): ResourceAmounts {
  const out: ResourceAmounts = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b ?? {})) out[k] = fmt(plus(q(out[k] ?? '0'), q(v), -1n));
  return out;
}

/** The larger of a[k] and b[k] for every key of either (init containers). */
export function maxLists(a: ResourceAmounts | undefined, b: ResourceAmounts | undefined): ResourceAmounts {
  const out: ResourceAmounts = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b ?? {})) if (!(k in out) || cmp(q(v), q(out[k])) > 0) out[k] = fmt(q(v));
  return out;
}

/** Only the given keys of list. */
export function maskList(list: ResourceAmounts | undefined, names: Iterable<string>): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const n of names) if (list && n in list) out[n] = list[n]!;
  return out;
}

/** LessThanOrEqual: whether a[k] <= b[k] for every k of a that b limits; the keys that exceed, sorted. */
export function lessThanOrEqual(a: ResourceAmounts, b: ResourceAmounts): { ok: boolean; exceeded: string[] } {
  const exceeded: string[] = [];
  for (const [k, v] of Object.entries(a)) if (k in b && cmp(q(v), q(b[k])) > 0) exceeded.push(k);
  exceeded.sort();
  return { ok: exceeded.length === 0, exceeded };
}

/** Whether every quantity is zero. */
export function isZeroList(list: ResourceAmounts): boolean {
  return Object.values(list).every((v) => q(v).num === 0n);
}

/** Semantic equality (same keys, equal quantities). */
export function equalLists(a: ResourceAmounts | undefined, b: ResourceAmounts | undefined): boolean {
  const ka = Object.keys(a ?? {}), kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  return ka.every((k) => b && k in b && cmp(q(a![k]), q(b[k])) === 0);
}

/** a[k] compared with b (-1, 0, 1). */
export function compareQuantity(a: string | number, b: string | number): number { return cmp(q(a), q(b)); }

/** Canonical form of every quantity of list (as the apiserver stores them). */
export function canonicalList(list: ResourceAmounts | undefined): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const [k, v] of Object.entries(list ?? {})) out[k] = fmt(q(v));
  return out;
}

/** prettyPrint in the quota admission messages: `cpu=1,pods=2` sorted by name. */
export function prettyPrint(list: ResourceAmounts): string {
  return Object.keys(list).sort().map((k) => `${k}=${fmt(q(list[k]))}`).join(',');
}
