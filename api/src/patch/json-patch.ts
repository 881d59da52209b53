/**
 * JSON Patch (RFC 6902), as `application/json-patch+json`, on fast-json-patch, with the
 * behaviour of the library upstream uses (gopkg.in/evanphx/json-patch.v4, checked against
 * kubectl 1.32's `patch --local --type=json`): `replace` of a missing member of an existing
 * object adds it, `test` of a missing path against null passes, and errors read as its messages.
 */
import fjp from 'fast-json-patch';
import { ApiError } from '../errors.js';

/** One RFC 6902 operation as sent on the wire. */
export interface JsonPatchOperation { op: string; path: string; value?: unknown; from?: string }

const REJECTED = 'the server rejected our request due to an error in our request';
const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

type Resolved = { parent: unknown; key: string; exists: boolean } | undefined;

/** Resolves a JSON pointer's parent container; undefined when the parent does not exist. */
function resolve(doc: unknown, pointer: string): Resolved {
  if (pointer === '') return { parent: undefined, key: '', exists: true };
  if (!pointer.startsWith('/')) return undefined;
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let cur: unknown = doc;
  for (const p of parts.slice(0, -1)) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(p) || Number(p) >= cur.length) return undefined;
      cur = cur[Number(p)];
    } else if (typeof cur === 'object' && cur !== null && Object.prototype.hasOwnProperty.call(cur, p)) {
      cur = (cur as Record<string, unknown>)[p];
    } else {
      return undefined;
    }
  }
  const key = parts[parts.length - 1]!;
  const exists = Array.isArray(cur)
    ? /^\d+$/.test(key) && Number(key) < cur.length
    : typeof cur === 'object' && cur !== null && Object.prototype.hasOwnProperty.call(cur, key);
  return { parent: cur, key, exists };
}

const isPlainObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The evanphx v4 message for an operation that does not apply to doc. */
function describe(op: JsonPatchOperation, doc: unknown, name: string | undefined): string {
  if (!OPS.has(op.op)) return `Unexpected kind: ${String(op.op ?? '')}`;
  if (typeof op.path !== 'string') return `${op.op} operation missing path`;
  const r = resolve(doc, op.path);
  const indexErr = (verb: string, key: string) => `error in ${verb} for path: '${op.path}': Unable to access invalid index: ${key}: invalid index referenced`;
  switch (op.op) {
    case 'test': return `testing value ${op.path} failed: test failed`;
    case 'remove':
      if (r && Array.isArray(r.parent)) return indexErr('remove', r.key);
      if (r) return `error in remove for path: '${op.path}': Unable to remove nonexistent key: ${r.key}: missing value`;
      return `remove operation does not apply: doc is missing path: "${op.path}": missing value`;
    case 'add':
      if (r && Array.isArray(r.parent)) return indexErr('add', r.key);
      return `add operation does not apply: doc is missing path: "${op.path}": missing value`;
    case 'replace':
      if (r && Array.isArray(r.parent)) return `Object to be patched is missing field (${op.path}: missing value)`;
      return `replace operation does not apply: doc is missing path: ${op.path}: missing value`;
    case 'move': case 'copy': {
      const f = typeof op.from === 'string' ? resolve(doc, op.from) : undefined;
      if (name === 'OPERATION_FROM_UNRESOLVABLE' || !f?.exists) {
        const key = f?.key ?? (op.from ?? '').split('/').pop() ?? '';
        return `error in ${op.op} for path: '${key}': Unable to remove nonexistent key: ${key}: missing value`;
      }
      return `${op.op} operation does not apply: doc is missing destination path: ${op.path}: missing value`;
    }
    default: return `Unexpected kind: ${op.op}`;
  }
}

/**
 * Applies an RFC 6902 patch. Returns a new document; original is untouched.
 * Errors as upstream: a body that is not an array of objects is 400 BadRequest; an operation
 * that does not apply (a failed `test`, a missing path, an unknown op) is 422 Invalid with the
 * json-patch library's message as the single cause.
 */
export function applyJsonPatch<T>(original: T, ops: unknown): T {
  if (!Array.isArray(ops) || ops.some((o) => typeof o !== 'object' || o === null || Array.isArray(o))) {
    throw new ApiError('BadRequest', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  let doc: unknown = structuredClone(original);
  for (const raw of ops as JsonPatchOperation[]) {
    let op = raw;
    const fail = (name?: string): never => {
      throw new ApiError('Invalid', REJECTED, { details: { causes: [{ reason: 'UnexpectedServerResponse', message: describe(raw, doc, name) }] } });
    };
    if (!OPS.has(op.op) || typeof op.path !== 'string' || ((op.op === 'move' || op.op === 'copy') && typeof op.from !== 'string')) fail();
    const r = resolve(doc, op.path);
    // evanphx v4: replace of an absent member of an existing object is an add.
    if (op.op === 'replace' && r && !r.exists && isPlainObject(r.parent)) op = { ...op, op: 'add' };
    // evanphx v4: a missing value compares equal to null.
    if (op.op === 'test' && (op.value === null || op.value === undefined) && (!r || !r.exists)) continue;
    if ((op.op === 'remove' || op.op === 'replace') && (!r || !r.exists)) fail();
    if (op.op === 'add' && r && Array.isArray(r.parent) && r.key !== '-' && (!/^\d+$/.test(r.key) || Number(r.key) > r.parent.length)) fail();
    try {
      doc = fjp.applyOperation(doc, op as fjp.Operation, true, true).newDocument;
    } catch (err) {
      fail((err as { name?: string }).name);
    }
  }
  return doc as T;
}
