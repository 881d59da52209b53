/**
 * Equality of API objects as apimachinery's equality.Semantic.DeepEqual sees it: absent, null,
 * empty list and empty map are the same, resource quantities compare by value ('1' = '1000m'),
 * and timestamps by the second they denote. Use it to decide whether an update changes anything
 * (e.g. metadata.generation bumps, "unchanged" results, controllers skipping no-op writes).
 */
import { compareQuantities, isValidQuantity } from './quantity.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObj(v) && Object.keys(v).every((k) => v[k] === undefined));

/** Keys whose map values are resource quantities (ResourceList fields). */
const QUANTITY_MAPS = new Set(['limits', 'requests', 'capacity', 'allocatable', 'hard', 'used', 'overhead']);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** quantity: a and b are values of a ResourceList. */
function eq(a: unknown, b: unknown, quantity: boolean): boolean {
  if (a === b) return true;
  if (isEmpty(a) && isEmpty(b)) return true;
  if (quantity && (typeof a === 'string' || typeof a === 'number') && (typeof b === 'string' || typeof b === 'number')
    && isValidQuantity(a) && isValidQuantity(b)) {
    return compareQuantities(a, b) === 0;
  }
  if (typeof a === 'string' && typeof b === 'string' && RFC3339.test(a) && RFC3339.test(b)) {
    return Math.floor(Date.parse(a) / 1000) === Math.floor(Date.parse(b) / 1000);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => eq(x, b[i], false));
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const av = a[k], bv = b[k];
      if (QUANTITY_MAPS.has(k) && isObj(av) && isObj(bv)) {
        for (const r of new Set([...Object.keys(av), ...Object.keys(bv)])) if (!eq(av[r], bv[r], true)) return false;
      } else if (!eq(av, bv, false)) return false;
    }
    return true;
  }
  return false;
}

/** Semantic equality of two JSON API values (see module comment). */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return eq(a, b, false);
}
