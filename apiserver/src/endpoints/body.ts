/**
 * Request body decoding. fastify's default parsers are replaced by one catch-all that buffers the
 * body (bodyLimit 3 MiB → 413); the handler decodes it here by media type, so every failure
 * becomes a proper Status: malformed JSON/YAML/protobuf → 400, unknown types → 415.
 */
import { ApiError } from '@mk8s/api';
import yaml from 'js-yaml';
import { decodeKubernetesProtobuf, PROTOBUF_MEDIA_TYPE } from '../protobuf/decode.js';

export type PatchContentType = 'json' | 'merge' | 'strategic' | 'apply';

const PATCH_TYPES: Record<string, PatchContentType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

/** The media type without parameters, lower case; '' when absent. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** patchTypeOf returns the patch flavour of a PATCH request, or throws 415 with upstream's message. */
export function patchTypeOf(contentType: string | undefined): PatchContentType {
  const t = PATCH_TYPES[mediaTypeOf(contentType)];
  if (!t || mediaTypeOf(contentType) === 'application/apply-patch+cbor') {
    throw new ApiError('UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${Object.keys(PATCH_TYPES).filter((k) => !k.endsWith('cbor')).join(', ')}`);
  }
  return t;
}

/**
 * decodeBody parses a buffered body by its content type. A missing content type is JSON (client-go's
 * scale client sends PUT …/scale without one). Returns undefined for an empty body.
 */
export function decodeBody(body: unknown, contentType: string | undefined): unknown {
  const buf = body === undefined || body === null ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  if (!buf || buf.length === 0) return undefined;
  const type = mediaTypeOf(contentType);
  if (type === PROTOBUF_MEDIA_TYPE) return decodeKubernetesProtobuf(buf);
  if (type.endsWith('+protobuf')) {
    throw new ApiError('UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf`);
  }
  const text = buf.toString('utf8');
  if (type === '' || type === 'application/json' || type === 'text/plain' || type === '*/*' || type.endsWith('+json')) {
    return parseJson(text);
  }
  if (type === 'application/yaml' || type === 'application/apply-patch+yaml' || type === 'application/x-yaml' || type === 'text/yaml') {
    const trimmed = text.trimStart();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      try { return JSON.parse(text) as unknown; } catch { /* not JSON after all: YAML below */ }
    }
    let doc: unknown;
    try {
      doc = yaml.load(text);
    } catch (err) {
      throw new ApiError('BadRequest', `error converting YAML to JSON: ${(err as Error).message}`);
    }
    // Aliases make a small document expand into billions of nodes ("billion laughs"): count the
    // expanded size with a budget before anything walks it (upstream's yaml limits alias expansion too).
    if (!withinExpandedSize(doc, MAX_YAML_EXPANDED_NODES)) {
      throw new ApiError('RequestEntityTooLarge', 'error converting YAML to JSON: yaml: document is too large after alias expansion');
    }
    return doc;
  }
  throw new ApiError('UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ApiError('BadRequest', `json parse error: ${(err as Error).message}`);
  }
}

/** decodeObject decodes a body that must be a JSON object (create, update, subresource POSTs). */
export function decodeObject(body: unknown, contentType: string | undefined): Record<string, unknown> {
  const v = decodeBody(body, contentType);
  if (v === undefined) throw new ApiError('BadRequest', 'the body of the request was empty');
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new ApiError('BadRequest', `json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go value of type struct`);
  }
  return v as Record<string, unknown>;
}

/** Budget of nodes a YAML body may expand to (aliases counted every time they are referenced). */
const MAX_YAML_EXPANDED_NODES = 1_000_000;

function withinExpandedSize(v: unknown, budget: number): boolean {
  const stack: unknown[] = [v];
  let n = 0;
  while (stack.length > 0) {
    const x = stack.pop();
    if (++n > budget) return false;
    if (Array.isArray(x)) { for (const y of x) stack.push(y); } else if (x && typeof x === 'object') { for (const y of Object.values(x)) stack.push(y); }
  }
  return true;
}
