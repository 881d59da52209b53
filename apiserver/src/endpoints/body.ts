/**
 * Request body decoding. fastify's default parsers are replaced by one catch-all that buffers the
 * body (bodyLimit 3 MiB → 413); the handler decodes it here by media type, so every failure
 * becomes a proper Status: malformed JSON/YAML/protobuf → 400, unknown types → 415.
 */
import { ApiError } from '@mk8s/api';
import yaml from 'js-yaml';
import { decodeKubernetesProtobuf, PROTOBUF_MEDIA_TYPE } from '../protobuf/decode.js';
import { goJsonSyntaxError, summarizeBody } from './go-json-error.js';

export type PatchContentType = 'json' | 'merge' | 'strategic' | 'apply';

const PATCH_TYPES: Record<string, PatchContentType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

/** The patch media types served, in upstream's order of listing them. */
export const PATCH_MEDIA_TYPES: Readonly<Record<string, PatchContentType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
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
  const v = decodeBodyUnchecked(body, contentType);
  // Upstream's decoders refuse nesting deeper than 10000 ("exceeded max depth"); the handlers here
  // walk objects recursively (defaulting, managedFields, merge), so a far smaller depth is refused,
  // before anything walks it: no real object nests anywhere near it.
  if (v !== null && typeof v === 'object' && !withinDepth(v, MAX_NESTING_DEPTH)) {
    const json = !/yaml/.test(mediaTypeOf(contentType));
    throw new BodySyntaxError(json ? 'exceeded max depth' : 'yaml: exceeded max depth of ' + MAX_NESTING_DEPTH, json);
  }
  return v;
}

/** Deepest nesting of objects and arrays a body may have. */
export const MAX_NESTING_DEPTH = 1000;

/** Whether v nests at most max levels deep (iterative: a deep value must not overflow the stack here). */
export function withinDepth(v: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[v, 1]];
  // YAML aliases share nodes: a node is walked again only when reached deeper than before.
  const seen = new Map<object, number>();
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d > max) return false;
    if ((seen.get(x) ?? 0) >= d) continue;
    seen.set(x, d);
    for (const y of Array.isArray(x) ? x : Object.values(x)) if (y !== null && typeof y === 'object') stack.push([y, d + 1]);
  }
  return true;
}

function decodeBodyUnchecked(body: unknown, contentType: string | undefined): unknown {
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
      throw new BodySyntaxError(`error converting YAML to JSON: yaml: ${(err as Error).message.split('\n')[0]}`, false);
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

/** A body that is not JSON/YAML at all; `detail` is the decoder's own words (Go's, for JSON). */
class BodySyntaxError extends ApiError {
  constructor(readonly detail: string, readonly json: boolean) { super('BadRequest', json ? `json parse error: ${detail}` : detail); }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new BodySyntaxError(goJsonSyntaxError(text) ?? (err as Error).message, true);
  }
}

/** The kind a request body must decode into (the URL's resource). */
export interface ExpectedKind { group: string; version: string; kind: string }

/** upstream's scheme name in "no kind … is registered" errors (the kube-apiserver's legacyscheme). */
const SCHEME_NAME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';

/** The Go package of a group's internal types, as upstream's conversion errors name it (core.Namespace, apps.Deployment). */
const internalPackage = (group: string) => (group === '' || group === 'events.k8s.io' ? 'core' : group.split('.')[0]!);

/**
 * decodeObject decodes a body that must be a JSON object (create, update, subresource POSTs).
 * With `expect`, failures are worded as upstream's create/update decoding (transformDecodeError):
 * an undecodable body is "the object provided is unrecognized (must be of type Namespace): …",
 * a body of an unregistered kind/version "… cannot be handled as a Namespace: no kind … is
 * registered …", a body of another kind "… converting (v1.Pod) to (core.Namespace): unknown
 * conversion". All 400 BadRequest. `isRegistered` says whether apiVersion/kind is a kind the
 * server knows.
 */
export function decodeObject(body: unknown, contentType: string | undefined, expect?: ExpectedKind,
  isRegistered?: (apiVersion: string, kind: string) => boolean): Record<string, unknown> {
  if (expect) return decodeTyped(body, contentType, expect, isRegistered ?? (() => true));
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

/** Go's error for a JSON value that is not an object, decoded into the version/kind finder struct. */
const FIND_KIND_TYPE = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

function decodeTyped(body: unknown, contentType: string | undefined, expect: ExpectedKind, isRegistered: (apiVersion: string, kind: string) => boolean): Record<string, unknown> {
  const raw = body === undefined || body === null ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const unrecognized = (detail: string) =>
    new ApiError('BadRequest', `the object provided is unrecognized (must be of type ${expect.kind}): ${detail} (${summarizeBody(raw)})`);
  let v: unknown;
  try {
    v = decodeBody(raw, contentType);
  } catch (err) {
    if (err instanceof BodySyntaxError) throw unrecognized(err.json ? `couldn't get version/kind; json parse error: ${err.detail}` : err.detail);
    throw err;
  }
  if (v === undefined) throw unrecognized("couldn't get version/kind; json parse error: unexpected end of JSON input");
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    const goType = Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'boolean' ? 'bool' : typeof v;
    throw unrecognized(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goType} into Go value of type ${FIND_KIND_TYPE}`);
  }
  const obj = v as Record<string, unknown>;
  const want = expect.group ? `${expect.group}/${expect.version}` : expect.version;
  // Absent apiVersion or kind default to the URL's (upstream's defaultGVK).
  const apiVersion = typeof obj['apiVersion'] === 'string' && obj['apiVersion'] !== '' ? obj['apiVersion'] : want;
  const kind = typeof obj['kind'] === 'string' && obj['kind'] !== '' ? obj['kind'] : expect.kind;
  if (apiVersion === want && kind === expect.kind) return obj;
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  const prefix = `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${expect.kind}`;
  if (!isRegistered(apiVersion, kind)) {
    throw new ApiError('BadRequest', `${prefix}: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme ${JSON.stringify(SCHEME_NAME)}`);
  }
  if (kind !== expect.kind) {
    throw new ApiError('BadRequest', `${prefix}: converting (${version}.${kind}) to (${internalPackage(expect.group)}.${expect.kind}): unknown conversion`);
  }
  // The same kind in another registered version converts; the store refuses the version
  // ("the API version in the data … does not match the expected API version …").
  return obj;
}
