/**
 * Applying a decoded PATCH body to the current object, by patch type. The patch algorithms live
 * in @mk8s/api (RFC 6902, RFC 7386, strategic merge patch with per-resource merge keys).
 */
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from '@mk8s/api';
import type { PatchContentType } from '../../endpoints/body.js';

/**
 * applyPatch returns the patched copy of original. `resource` selects the strategic-merge schema
 * (list merge keys); the Scale subresource passes autoscaling/scale, which merges generically.
 * Server-side apply without managedFields: the applied configuration is merged over the live object.
 */
export function applyPatch(type: PatchContentType, original: unknown, patch: unknown, resource: { group: string; resource: string }): unknown {
  switch (type) {
    case 'json': return applyJsonPatch(original, patch);
    case 'merge': return applyMergePatch(original, patch);
    case 'strategic': return applyStrategicMergePatch(original, patch, resource);
    case 'apply': return applyMergePatch(original, patch);
  }
}
