/**
 * kubectl apply's client-side three-way strategic merge patch
 * (strategicpatch.CreateThreeWayMergePatch): fields the last applied configuration had and the
 * new one drops are deleted (null / `$patch: delete`); fields the new one sets that differ from
 * the live object are sent. Merge-keyed lists are diffed per element, with `$setElementOrder`.
 * Fields only the server set (defaults, status) are left alone.
 */
import { semanticEqual, type PatchSchema } from '@mk8s/api';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isObj(v)) { const o: Obj = {}; for (const k of Object.keys(v).sort()) o[k] = sortKeys(v[k]); return o; }
  return v;
}

/** The object to send, carrying the last-applied annotation (kubectl's GetModifiedConfiguration). */
export function withLastApplied<T extends { metadata?: { annotations?: Record<string, string> } }>(obj: T): T {
  const copy = structuredClone(obj) as T & { metadata: { annotations?: Record<string, string> } };
  copy.metadata ??= {};
  const ann = { ...(copy.metadata.annotations ?? {}) };
  delete ann[LAST_APPLIED];
  // kubectl keeps an emptied annotations map in the recorded configuration ("annotations":{}).
  copy.metadata.annotations = ann;
  // Go's json.Marshal of a map sorts keys and the encoder appends a newline.
  const value = `${JSON.stringify(sortKeys(copy))}\n`;
  copy.metadata.annotations = { ...ann, [LAST_APPLIED]: value };
  return copy;
}

/** The three-way patch; `{}` means unchanged. */
export function threeWayMergePatch(original: unknown, modified: unknown, current: unknown, schema: PatchSchema): Obj {
  return diffMaps(isObj(original) ? original : undefined, isObj(modified) ? modified : {}, isObj(current) ? current : {}, schema);
}

function diffMaps(orig: Obj | undefined, mod: Obj, cur: Obj, schema: PatchSchema | undefined): Obj {
  const patch: Obj = {};
  for (const [k, m] of Object.entries(mod)) {
    const c = cur[k];
    const o = orig?.[k];
    const meta = schema?.[k];
    if (isObj(m) && isObj(c)) {
      const sub = diffMaps(isObj(o) ? o : undefined, m, c, meta?.fields);
      if (Object.keys(sub).length) patch[k] = sub;
    } else if (Array.isArray(m) && Array.isArray(c) && meta?.mergeKey && meta.strategy?.startsWith('merge')) {
      const sub = diffMergeList(Array.isArray(o) ? o : undefined, m, c, meta.mergeKey, meta.fields);
      if (sub) { patch[k] = sub; patch[`$setElementOrder/${k}`] = m.map((it) => (isObj(it) ? { [meta.mergeKey!]: it[meta.mergeKey!] } : it)); }
    } else if (!semanticEqual(m, c)) patch[k] = m;
  }
  if (orig) for (const k of Object.keys(orig)) if (!(k in mod) && k in cur) patch[k] = null;
  return patch;
}

function diffMergeList(orig: unknown[] | undefined, mod: unknown[], cur: unknown[], key: string, fields: PatchSchema | undefined): unknown[] | undefined {
  const find = (list: unknown[] | undefined, v: unknown) => list?.find((x) => isObj(x) && semanticEqual(x[key], v));
  const out: unknown[] = [];
  for (const m of mod) {
    if (!isObj(m)) continue;
    const c = find(cur, m[key]);
    if (!isObj(c)) { out.push(m); continue; }
    const o = find(orig, m[key]);
    const sub = diffMaps(isObj(o) ? o : undefined, m, c, fields);
    if (Object.keys(sub).length) out.push({ [key]: m[key], ...sub });
  }
  for (const o of orig ?? []) {
    if (isObj(o) && !find(mod, o[key]) && find(cur, o[key])) out.push({ [key]: o[key], $patch: 'delete' });
  }
  return out.length ? out : undefined;
}
