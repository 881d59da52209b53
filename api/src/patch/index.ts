export { applyMergePatch } from './merge-patch.js';
export { applyJsonPatch, type JsonPatchOperation } from './json-patch.js';
export { applyStrategicMergePatch } from './strategic-merge-patch.js';
export { patchSchemaFor, PATCH_SCHEMAS, type PatchMeta, type PatchSchema, type PatchStrategy } from './schema.js';
