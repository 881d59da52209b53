/**
 * Strategic merge patch (`application/strategic-merge-patch+json`), the patch kubectl apply,
 * edit, set image, rollout restart, cordon and patch send. Mirrors apimachinery
 * util/strategicpatch's mergeMap with MergeParallelList and IgnoreUnmatchedNulls, the options
 * the apiserver uses:
 * - maps merge recursively; `null` deletes a key;
 * - lists whose field is tagged `merge` merge by their merge key (primitive lists: set union),
 *   other lists are replaced;
 * - `$patch: replace|delete` on a map, `$patch: delete|replace` elements in a list,
 *   `$retainKeys`, `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>`.
 */
import { ApiError } from '../errors.js';
import { patchSchemaFor, type PatchMeta, type PatchSchema } from './schema.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JMap = { [k: string]: Json };

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

const isMap = (v: unknown): v is JMap => typeof v === 'object' && v !== null && !Array.isArray(v);
const bad = (msg: string) => new ApiError('BadRequest', msg);
/** Go's %v of a decoded JSON value, as upstream's error messages print patches (`map[a:1 b:[x y]]`). */
function render(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(render).join(' ')}]`;
  if (isMap(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${render(v[k])}`).join(' ')}]`;
  return v === null ? '<nil>' : String(v);
}

/** Go interface{} equality for merge-key values (JSON scalars). */
const sameKey = (a: unknown, b: unknown) => a === b;

const hasStrategy = (m: PatchMeta | undefined, s: 'merge' | 'retainKeys' | 'replace') =>
  (m?.strategy ?? '').split(',').includes(s);

/**
 * Drops nulls (IgnoreUnmatchedNulls) and directives from a patch value taken over wholesale
 * because the original had nothing there to merge with.
 */
function cleanPatchValue(v: Json): Json {
  if (Array.isArray(v)) {
    return v.filter((x) => !(isMap(x) && x[DIRECTIVE] === 'delete')).map((x) => cleanPatchValue(x));
  }
  if (!isMap(v)) return v;
  const out: JMap = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(SET_ORDER) || k.startsWith(DELETE_PRIMITIVE)) continue;
    out[k] = cleanPatchValue(x);
  }
  return out;
}

function mergeMap(original: JMap | undefined, patch: JMap, schema: PatchSchema | undefined): JMap {
  if (DIRECTIVE in patch) {
    const d = patch[DIRECTIVE];
    if (d === 'replace') { const p = { ...patch }; delete p[DIRECTIVE]; return cleanPatchValue(p) as JMap; }
    if (d === 'delete') return {};
    throw bad(`unknown patch type: ${String(d)} in map: ${render(patch)}`);
  }
  const orig: JMap = original ? { ...original } : {};
  const p: JMap = { ...patch };
  applyRetainKeys(orig, p);
  mergeOrderedLists(orig, p, schema);
  for (const [rawKey, pv] of Object.entries(p)) {
    if (rawKey.startsWith(SET_ORDER)) continue;
    let k = rawKey;
    let isDeleteList = false;
    if (rawKey.startsWith(DELETE_PRIMITIVE)) { k = rawKey.slice(DELETE_PRIMITIVE.length); isDeleteList = true; }
    if (pv === null) { delete orig[k]; continue; }
    if (!(k in orig)) {
      if (!isDeleteList) orig[k] = cleanPatchValue(pv);
      continue;
    }
    const ov = orig[k]!;
    const sameType = Array.isArray(ov) === Array.isArray(pv) && isMap(ov) === isMap(pv) && (typeof ov === typeof pv);
    if (!sameType) {
      if (!isDeleteList) orig[k] = cleanPatchValue(pv);
      continue;
    }
    const meta = schema?.[k];
    if (isMap(ov) && isMap(pv)) {
      orig[k] = hasStrategy(meta, 'replace') ? cleanPatchValue(pv) : mergeMap(ov, pv, meta?.fields);
    } else if (Array.isArray(ov) && Array.isArray(pv)) {
      orig[k] = mergeSliceHandler(ov, pv, meta, isDeleteList);
    } else {
      orig[k] = pv;
    }
  }
  return orig;
}

function applyRetainKeys(original: JMap, patch: JMap): void {
  if (!(RETAIN_KEYS in patch)) return;
  const keys = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(keys)) throw bad('invalid patch format of retainKeys');
  const retain = new Set<string>();
  for (const k of keys) {
    if (typeof k !== 'string') throw bad('invalid patch format of retainKeys');
    retain.add(k);
  }
  // Every field the patch sets must be one of the retained keys.
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_PRIMITIVE) || k.startsWith(SET_ORDER) || k === DIRECTIVE) continue;
    if (!retain.has(k)) throw bad('invalid patch format of retainKeys');
  }
  for (const k of Object.keys(original)) if (!retain.has(k)) delete original[k];
}

function mergeSliceHandler(original: Json[], patch: Json[], meta: PatchMeta | undefined, isDeleteList: boolean): Json[] {
  if (!hasStrategy(meta, 'merge')) return cleanPatchValue(patch) as Json[];
  return mergeSlice(original, patch, meta, isDeleteList);
}

type Kind = 'map' | 'primitive';

function elementKind(original: Json[], patch: Json[]): Kind {
  let kind: Kind | undefined;
  for (const v of [...original, ...patch]) {
    if (Array.isArray(v)) throw bad('lists of lists are not supported');
    const k: Kind = isMap(v) ? 'map' : 'primitive';
    if (kind && kind !== k) throw bad(`mismatched types in list: ${render(original)} and ${render(patch)}`);
    kind = k;
  }
  return kind ?? 'primitive';
}

/** Position of item in list by merge key (maps) or value (primitives); -1 when absent. */
function indexOf(list: readonly Json[], item: Json, mergeKey: string | undefined, kind: Kind): number {
  if (kind === 'primitive') return list.findIndex((x) => x === item);
  const v = isMap(item) ? item[mergeKey!] : undefined;
  return list.findIndex((x) => isMap(x) && sameKey(x[mergeKey!], v));
}

/**
 * Emulates the Go slice the live list is held in while upstream merges into it: deletions shift
 * elements left in place and appends write into the freed tail, so the caller's view of the
 * live list (which $setElementOrder then uses as "server order") changes. Upstream's list order
 * after a patch that both deletes and adds items depends on this; mirrored so results match.
 */
interface GoSliceView { backing: Json[]; len: number; detached: boolean }

function mergeSlice(original: Json[], patch: Json[], meta: PatchMeta | undefined, isDeleteList: boolean, view?: GoSliceView): Json[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  const mergeKey = meta?.mergeKey;
  let merged: Json[];
  let orig = original;
  let effectivePatch = patch;
  if (kind === 'primitive') {
    if (isDeleteList) return original.filter((x) => !patch.includes(x));
    merged = [];
    for (const v of [...original, ...patch]) if (!merged.includes(v)) merged.push(v);
  } else {
    if (!mergeKey) throw bad(`cannot merge lists without merge key for ${render(patch)}`);
    const special = mergeSpecialElements(original, patch, mergeKey, view);
    orig = special.original;
    effectivePatch = special.patch;
    merged = mergeWithoutSpecialElements(orig, effectivePatch, mergeKey, meta?.fields, view);
  }
  const { inList: patchItems, notInList: serverOnly } = partition(merged, effectivePatch, mergeKey, kind);
  return normalizeElementOrder(patchItems, serverOnly, effectivePatch, orig, mergeKey, kind);
}

/** Handles `$patch` elements: delete removes the matching original, replace drops the original list. */
function mergeSpecialElements(original: Json[], patch: Json[], mergeKey: string, view?: GoSliceView): { original: Json[]; patch: Json[] } {
  const plain: Json[] = [];
  let replace = false;
  let orig = original;
  for (const v of patch) {
    if (!isMap(v) || !(DIRECTIVE in v)) { plain.push(v); continue; }
    switch (v[DIRECTIVE]) {
      case 'delete':
        if (!(mergeKey in v)) throw bad(`map: ${render(v)} does not contain declared merge key: ${mergeKey}`);
        orig = orig.filter((x) => !(isMap(x) && sameKey(x[mergeKey], v[mergeKey])));
        if (view && !view.detached) {
          for (let k = 0; k < view.len;) {
            const x = view.backing[k];
            if (isMap(x) && sameKey(x[mergeKey], v[mergeKey])) { view.backing.copyWithin(k, k + 1, view.len); view.len--; } else k++;
          }
        }
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw bad('merging lists cannot yet be specified in the patch');
      default:
        throw bad(`unknown patch type: ${String(v[DIRECTIVE])} in map: ${render(v)}`);
    }
  }
  if (replace) {
    if (view) view.detached = true;
    return { original: plain, patch: [] };
  }
  return { original: orig, patch: plain };
}

function mergeWithoutSpecialElements(original: Json[], patch: Json[], mergeKey: string, fields: PatchSchema | undefined, view?: GoSliceView): Json[] {
  const out = [...original];
  for (const v of patch) {
    if (!isMap(v) || !(mergeKey in v)) throw bad(`map: ${render(v)} does not contain declared merge key: ${mergeKey}`);
    const i = out.findIndex((x) => isMap(x) && sameKey(x[mergeKey], v[mergeKey]));
    if (i >= 0) {
      out[i] = mergeMap(out[i] as JMap, v, fields);
    } else {
      out.push(cleanPatchValue(v));
      // An append lands in the live list's freed tail while capacity lasts.
      if (view && !view.detached && view.len < view.backing.length) view.backing[view.len] = out[out.length - 1]!;
      if (view) view.len++;
    }
  }
  return out;
}

function partition(list: Json[], present: Json[], mergeKey: string | undefined, kind: Kind): { inList: Json[]; notInList: Json[] } {
  const inList: Json[] = [], notInList: Json[] = [];
  for (const v of list) (indexOf(present, v, mergeKey, kind) >= 0 ? inList : notInList).push(v);
  return { inList, notInList };
}

/** Sorts list by order, as upstream's normalizeSliceOrder (delete directives go last). */
function normalizeSliceOrder(list: Json[], order: Json[], mergeKey: string | undefined, kind: Kind): Json[] {
  let items = list;
  let toDelete: Json[] = [];
  if (kind === 'map') {
    items = list.filter((x) => !(isMap(x) && x[DIRECTIVE] === 'delete'));
    toDelete = list.filter((x) => isMap(x) && x[DIRECTIVE] === 'delete');
  }
  // Upstream sorts with sort.SliceStable (an insertion sort at these sizes) and a "less" that is
  // true whenever either item is missing from order; reproduced step by step so items missing
  // from the order list land where upstream puts them.
  const pos = (v: Json) => indexOf(order, v, mergeKey, kind);
  const less = (x: Json, y: Json) => {
    const ix = pos(x);
    if (ix >= 0) { const iy = pos(y); if (iy >= 0) return ix < iy; }
    return true;
  };
  const out = [...items];
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j]!, out[j - 1]!); j--) [out[j], out[j - 1]] = [out[j - 1]!, out[j]!];
  }
  return [...out, ...toDelete];
}

/**
 * Patch items in patch order, server-only items in live order, interleaved as upstream's
 * mergeSortedSlice: a server-only item goes before the first patch item it precedes live.
 */
function normalizeElementOrder(patchItems: Json[], serverOnly: Json[], patchOrder: Json[], serverOrder: Json[], mergeKey: string | undefined, kind: Kind): Json[] {
  const right = normalizeSliceOrder(patchItems, patchOrder, mergeKey, kind);
  const left = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  const out: Json[] = [];
  let i = 0, j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]!);
    else if (j >= right.length) out.push(left[i++]!);
    else {
      const li = indexOf(serverOrder, left[i]!, mergeKey, kind), ri = indexOf(serverOrder, right[j]!, mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]!);
      else out.push(right[j++]!);
    }
  }
  return out;
}

/**
 * validatePatchWithSetOrderList: the patch list's items (deletions aside) must appear in the
 * order list, in the same relative order.
 */
function validateOrder(patchList: Json[], order: Json[], mergeKey: string | undefined): void {
  if (order.length === 0 || patchList.length === 0) return;
  const items = mergeKey ? patchList.filter((x) => !(isMap(x) && x[DIRECTIVE] === 'delete')) : patchList;
  let p = 0, o = 0;
  while (p < items.length && o < order.length) {
    const item = items[p]!;
    if (isMap(item) && DIRECTIVE in item) { p++; continue; }
    const equal = mergeKey
      ? isMap(item) && isMap(order[o]) && mergeKey in item && mergeKey in (order[o] as JMap) && sameKey(item[mergeKey], (order[o] as JMap)[mergeKey])
      : item === order[o];
    if (mergeKey && (!isMap(item) || !(mergeKey in item))) throw bad(`map: ${render(item)} does not contain declared merge key: ${mergeKey}`);
    if (equal) p++;
    o++;
  }
  if (p < items.length) {
    throw bad(`The order in patch list:\n${render(patchList)}\n doesn't match $setElementOrder list:\n${render(order)}`);
  }
}

/**
 * `$setElementOrder/<list>`: merges the list's patch into the live list, then orders the items
 * named in the order list as given, keeping server-only items at their relative live places.
 * Removes the processed list from patch.
 */
function mergeOrderedLists(original: JMap, patch: JMap, schema: PatchSchema | undefined): void {
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    if (!Array.isArray(order)) throw bad(`invalid patch: ${key} must be a list`);
    const field = key.slice(SET_ORDER.length);
    const meta = schema?.[field];
    const patchList = patch[field];
    const origList = original[field];
    if (patchList !== undefined && patchList !== null && !Array.isArray(patchList)) throw bad(`invalid patch: ${field} must be a list`);
    if (origList !== undefined && origList !== null && !Array.isArray(origList)) continue;
    const pl: Json[] = Array.isArray(patchList) ? patchList : [];
    const ol: Json[] = Array.isArray(origList) ? origList : [];
    delete patch[key];
    if (!hasStrategy(meta, 'merge')) continue; // only merge lists carry an order directive
    const mergeKey = meta?.mergeKey;
    validateOrder(pl, order, mergeKey);
    if (!Array.isArray(origList) && !Array.isArray(patchList)) continue;
    if (ol.length === 0 && pl.length === 0) throw bad('no elements in any of the given slices');
    const kind = elementKind(ol, pl);
    if (kind === 'map' && !mergeKey) continue;
    const view: GoSliceView = { backing: [...ol], len: ol.length, detached: false };
    const merged = Array.isArray(origList) && Array.isArray(patchList) ? mergeSlice(ol, pl, meta, false, view)
      : Array.isArray(patchList) ? mergeSliceHandler([], pl, meta, false) : ol;
    const { inList: ordered, notInList: serverOnly } = partition(merged, order, mergeKey, kind);
    original[field] = normalizeElementOrder(ordered, serverOnly, order, view.backing, mergeKey, kind);
    delete patch[field];
  }
}

/**
 * Applies a strategic merge patch to original using the merge metadata of resource's kind.
 * Returns a new object; original is untouched.
 * @throws ApiError BadRequest for a malformed patch (not an object, unknown `$patch`, list
 * elements without their merge key, ...).
 */
export function applyStrategicMergePatch<T>(original: T, patch: unknown, resource: { group: string; resource: string } | PatchSchema): T {
  if (!isMap(patch)) throw bad('invalid JSON document');
  const schema = 'resource' in resource && typeof resource.resource === 'string' && 'group' in resource
    ? patchSchemaFor(resource as { group: string; resource: string })
    : (resource as PatchSchema);
  const orig = structuredClone(original) as unknown;
  return mergeMap(isMap(orig) ? orig : {}, structuredClone(patch) as JMap, schema) as T;
}
