/** JSON Patch (RFC 6902), as `application/json-patch+json`, on fast-json-patch. */
import fjp from 'fast-json-patch';
import { ApiError } from '../errors.js';

/** One RFC 6902 operation as sent on the wire. */
export interface JsonPatchOperation { op: string; path: string; value?: unknown; from?: string }

const REJECTED = 'the server rejected our request due to an error in our request';

/** Rewrites fast-json-patch's error in the words of upstream's json-patch library (evanphx). */
function describe(err: { name?: string; operation?: JsonPatchOperation }): string {
  const op = err.operation ?? { op: '', path: '' };
  switch (err.name) {
    case 'TEST_OPERATION_FAILED': return `testing value ${op.path} failed: test failed`;
    case 'OPERATION_PATH_UNRESOLVABLE':
      return op.op === 'replace'
        ? `replace operation does not apply: doc is missing key: ${op.path}: missing value`
        : `${op.op} operation does not apply: doc is missing path: ${JSON.stringify(op.path)}: missing value`;
    case 'OPERATION_PATH_CANNOT_ADD': return `add operation does not apply: doc is missing path: ${JSON.stringify(op.path)}: missing value`;
    case 'OPERATION_FROM_UNRESOLVABLE': return `${op.op} operation does not apply: doc is missing from path: ${op.from}: missing value`;
    case 'OPERATION_OP_INVALID': return `Unexpected kind: ${op.op}`;
    case 'OPERATION_VALUE_OUT_OF_BOUNDS': case 'OPERATION_PATH_ILLEGAL_ARRAY_INDEX':
      return `${op.op} operation does not apply: doc is missing path: ${JSON.stringify(op.path)}: invalid index referenced`;
    case 'OPERATION_VALUE_REQUIRED': return `${op.op} operation missing value`;
    case 'OPERATION_FROM_REQUIRED': return `${op.op} operation missing from`;
    case 'OPERATION_PATH_INVALID': return `${op.op} operation missing path`;
    default: return (err as Error).message?.split('\n')[0] ?? String(err);
  }
}

/**
 * Applies an RFC 6902 patch. Returns a new document; original is untouched.
 * Errors as upstream: a body that is not an array of objects is 400 BadRequest; an operation
 * that does not apply (including a failed `test`) is 422 Invalid with the library's message as
 * the single cause.
 */
export function applyJsonPatch<T>(original: T, ops: unknown): T {
  if (!Array.isArray(ops) || ops.some((o) => typeof o !== 'object' || o === null || Array.isArray(o))) {
    throw new ApiError('BadRequest', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  try {
    return fjp.applyPatch(original, ops as fjp.Operation[], true, false).newDocument;
  } catch (err) {
    const message = describe(err as { name?: string; operation?: JsonPatchOperation });
    throw new ApiError('Invalid', REJECTED, { details: { causes: [{ reason: 'UnexpectedServerResponse', message }] } });
  }
}
