/** JSON Merge Patch (RFC 7386), as `application/merge-patch+json`. */
import { ApiError } from '../errors.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function merge(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

/**
 * Applies an RFC 7386 merge patch: objects merge recursively, null deletes, anything else
 * (arrays included) replaces. Returns a new object; original is not touched.
 * @throws ApiError BadRequest when the patch is not a JSON object (upstream rejects those).
 */
export function applyMergePatch<T>(original: T, patch: unknown): T {
  if (!isObj(patch)) throw new ApiError('BadRequest', 'Invalid JSON Patch');
  return merge(structuredClone(original), patch) as T;
}
