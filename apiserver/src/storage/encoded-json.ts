/**
 * The JSON a storage already produced for an object it returned, so the response need not
 * serialize the same object again (upstream's apiserver likewise encodes a created object once per
 * output format). Keyed weakly by the returned object; absent when the storage did not keep it.
 * The JSON is of the object exactly as returned (resourceVersion included); treat the object as
 * read-only once it has an entry.
 */
import type { KubeObject } from '@mk8s/api';

const encoded = new WeakMap<object, string>();

export function rememberJson(obj: object, json: string): void { encoded.set(obj, json); }

export function rememberedJson(obj: object): string | undefined { return encoded.get(obj); }

/**
 * The stored JSON of obj cut around metadata's value (JSON.stringify's output, key order kept), for
 * an object whose metadata has no resourceVersion key; undefined otherwise (then encode()).
 */
export function splitAtMetadata(obj: KubeObject): { before: string; meta: string; after: string } | undefined {
  const meta = obj.metadata as unknown as Record<string, unknown> | undefined;
  if (!meta || typeof meta !== 'object' || 'resourceVersion' in meta) return undefined;
  let before = '{';
  let after = '';
  let metaJson: string | undefined;
  let n = 0;
  for (const k of Object.keys(obj)) {
    const v = JSON.stringify((obj as Record<string, unknown>)[k]);
    if (v === undefined) continue;                                     // as JSON.stringify skips it
    const field = `${n++ > 0 ? ',' : ''}${JSON.stringify(k)}:`;
    if (k === 'metadata') { before += field; metaJson = v; } else if (metaJson === undefined) before += field + v; else after += field + v;
  }
  if (metaJson === undefined) return undefined;
  return { before, meta: metaJson, after: after + '}' };
}

/** metadata's JSON with resourceVersion as its last key. */
export function withResourceVersion(metaJson: string, rv: string): string {
  return `${metaJson.length > 2 ? metaJson.slice(0, -1) + ',' : '{'}"resourceVersion":${JSON.stringify(rv)}}`;
}
