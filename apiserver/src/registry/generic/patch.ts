/**
 * Applying PATCH bodies to the current object: RFC 6902 JSON patch, RFC 7386 merge patch and a
 * strategic merge patch that merges the well-known lists by key.
 * TODO(api): delegate to applyMergePatch / applyJsonPatch / applyStrategicMergePatch from
 * @mk8s/api once exported there.
 */
import { ApiError, type ResourceDescriptor } from '@mk8s/api';
import fastJsonPatch from 'fast-json-patch';
import type { PatchContentType } from '../../endpoints/body.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386: objects merge recursively, null deletes, everything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v) as Json;
  }
  return out;
}

/** List fields merged by key in a strategic merge patch (patchMergeKey of the Go types). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name', initContainers: 'name', ephemeralContainers: 'name', volumes: 'name', env: 'name',
  volumeMounts: 'mountPath', volumeDevices: 'devicePath', imagePullSecrets: 'name', hostAliases: 'ip',
  conditions: 'type', ownerReferences: 'uid', topologySpreadConstraints: 'topologyKey', resourceClaims: 'name',
  addresses: 'type', taints: 'key', images: '', // images: replace
};
/** Primitive lists with merge semantics (patchStrategy=merge without a key). */
const MERGE_PRIMITIVE_LISTS = new Set(['finalizers']);

function listMergeKey(field: string, items: unknown[], resource: ResourceDescriptor | undefined): string | undefined {
  if (field === 'ports') {
    // Container ports merge by containerPort, Service ports by port (their patchMergeKey).
    const first = items.find(isObject);
    if (first && 'containerPort' in first) return 'containerPort';
    if (resource?.resource === 'services' || (first && 'port' in first)) return 'port';
    return undefined;
  }
  const k = MERGE_KEYS[field];
  return k === '' ? undefined : k;
}

/**
 * strategicMergePatch applies a strategic merge patch: like a merge patch, except that lists of
 * known types merge by key and honour `$patch: delete|replace|merge`, `$setElementOrder/<field>`,
 * `$retainKeys` and `$deleteFromPrimitiveList/<field>`.
 */
export function strategicMergePatch(original: unknown, patch: unknown, resource?: ResourceDescriptor): unknown {
  return smpObject(isObject(original) ? original : {}, patch, resource);
}

function smpObject(original: JsonObject, patch: unknown, resource: ResourceDescriptor | undefined): Json {
  if (!isObject(patch)) return structuredClone(patch) as Json;
  if (patch['$patch'] === 'replace') {
    const rest = { ...patch }; delete rest['$patch'];
    return stripDirectives(rest);
  }
  if (patch['$patch'] === 'delete') return null;
  const out: JsonObject = { ...original };
  const retain = Array.isArray(patch['$retainKeys']) ? new Set(patch['$retainKeys'] as string[]) : undefined;
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const del = new Set(Array.isArray(v) ? v.map((x) => JSON.stringify(x)) : []);
      const cur = out[field];
      if (Array.isArray(cur)) out[field] = cur.filter((x) => !del.has(JSON.stringify(x)));
      continue;
    }
    if (v === null) { delete out[k]; continue; }
    const cur = out[k];
    if (Array.isArray(v)) {
      out[k] = smpList(k, Array.isArray(cur) ? cur : [], v, resource);
    } else if (isObject(v)) {
      const merged = smpObject(isObject(cur) ? cur : {}, v, resource);
      if (merged === null) delete out[k]; else out[k] = merged;
    } else {
      out[k] = v;
    }
  }
  if (retain) for (const k of Object.keys(out)) if (!retain.has(k) && !(k in patch)) delete out[k];
  for (const [k, v] of Object.entries(patch)) {
    if (!k.startsWith('$setElementOrder/') || !Array.isArray(v)) continue;
    const field = k.slice('$setElementOrder/'.length);
    const list = out[field];
    if (Array.isArray(list)) out[field] = reorder(field, list, v, resource);
  }
  return out;
}

function smpList(field: string, cur: Json[], patch: Json[], resource: ResourceDescriptor | undefined): Json[] {
  const directive = patch.find((x) => isObject(x) && x['$patch'] === 'replace' && Object.keys(x).length === 1);
  if (directive) return patch.filter((x) => x !== directive).map((x) => stripDirectives(x));
  if (MERGE_PRIMITIVE_LISTS.has(field) && patch.every((x) => !isObject(x))) {
    const out = [...cur];
    for (const x of patch) if (!out.some((y) => JSON.stringify(y) === JSON.stringify(x))) out.push(x);
    return out;
  }
  const key = listMergeKey(field, [...patch, ...cur], resource);
  if (!key) return patch.map((x) => stripDirectives(x));
  const out = cur.map((x) => x);
  for (const item of patch) {
    if (!isObject(item)) continue;
    const idx = out.findIndex((x) => isObject(x) && x[key] === item[key]);
    if (item['$patch'] === 'delete') { if (idx >= 0) out.splice(idx, 1); continue; }
    if (idx >= 0) out[idx] = smpObject(out[idx] as JsonObject, item, resource) ?? {};
    else out.push(stripDirectives(item));
  }
  return out;
}

function reorder(field: string, list: Json[], order: Json[], resource: ResourceDescriptor | undefined): Json[] {
  const key = listMergeKey(field, [...order, ...list], resource);
  const id = (x: Json) => (key && isObject(x) ? JSON.stringify(x[key]) : JSON.stringify(x));
  const pos = new Map(order.map((x, i) => [id(x), i]));
  return [...list].sort((a, b) => (pos.get(id(a)) ?? Infinity) - (pos.get(id(b)) ?? Infinity));
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}

/** RFC 6902. A failing `test` or a bad path → 422 Invalid as upstream's jsonpatch errors. */
export function jsonPatch(original: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new ApiError('BadRequest', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  try {
    return fastJsonPatch.applyPatch(structuredClone(original), ops as fastJsonPatch.Operation[], true, false).newDocument;
  } catch (err) {
    throw new ApiError('Invalid', `the server rejected our request due to an error in our request: ${(err as Error).message.split('\n')[0]}`,
      { code: 422 });
  }
}

/** applyPatch applies a decoded PATCH body of the given type to the current object. */
export function applyPatch(type: PatchContentType, original: unknown, patch: unknown, resource?: ResourceDescriptor): unknown {
  switch (type) {
    case 'json': return jsonPatch(original, patch);
    case 'merge': return mergePatch(original, requireObject(patch));
    case 'strategic': return strategicMergePatch(original, requireObject(patch), resource);
    // Server-side apply without managedFields: the applied configuration is merged over the live object.
    case 'apply': return mergePatch(original, requireObject(patch));
  }
}

function requireObject(patch: unknown): unknown {
  if (!isObject(patch)) throw new ApiError('BadRequest', 'json: cannot unmarshal non-object into Go value of type map[string]interface {}');
  return patch;
}
