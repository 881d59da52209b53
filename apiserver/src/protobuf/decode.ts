/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`) decoded to the JSON
 * form the rest of the apiserver works on. kubectl's typed clientset always sends this for
 * `create namespace|configmap|secret|deployment|service|…`, `auth can-i` and `create token`.
 *
 * Wire format (apimachinery runtime/serializer/protobuf): the magic `k8s\0`, then a runtime.Unknown
 * whose `raw` is the object's own message (k8s.io/api generated.proto). The conversion follows what
 * the Go types' JSON tags would produce: gogo-protobuf writes every non-pointer field even when
 * empty, so zero scalars are dropped (`omitempty`) unless the schema marks them `(emit_zero)`
 * (pointers such as `replicas`); empty structs stay `{}`, zero Times are null (omitted).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '@mk8s/api';
import protobuf from 'protobufjs';

/** The media type of Kubernetes protobuf bodies. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const PROTO_FILES = ['runtime.proto', 'meta.proto', 'intstr.proto', 'resource.proto', 'core.proto', 'apps.proto',
  'authentication.proto', 'authorization.proto', 'rbac.proto', 'scheduling.proto',
  'batch.proto', 'policy.proto', 'autoscaling.proto', 'certificates.proto'];

// Go embedded structs: their fields appear inline in the parent's JSON.
const INLINE_FIELDS = new Set(['localObjectReference', 'handler', 'volumeSource']);

const META = '.k8s.io.apimachinery.pkg.apis.meta.v1';
const TIME = `${META}.Time`;
const MICRO_TIME = `${META}.MicroTime`;
const FIELDS_V1 = `${META}.FieldsV1`;
const INT_OR_STRING = '.k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const QUANTITY = '.k8s.io.apimachinery.pkg.api.resource.Quantity';
const RAW_EXTENSION = '.k8s.io.apimachinery.pkg.runtime.RawExtension';
const EXTRA_VALUE = '.k8s.io.api.authorization.v1.ExtraValue';
const CSR_EXTRA_VALUE = '.k8s.io.api.certificates.v1.ExtraValue';

let root: protobuf.Root | undefined;

function protoDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // tsc does not copy .proto files: from dist/protobuf/ they are read from the package's src/.
  const local = join(here, 'proto');
  return existsSync(local) ? local : join(here, '..', '..', 'src', 'protobuf', 'proto');
}

/** The schema root, loaded once per process on first use. */
function schema(): protobuf.Root {
  if (root) return root;
  const dir = protoDir();
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => join(dir, target.split('/').pop()!);
  r.loadSync(PROTO_FILES.map((f) => join(dir, f)), { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

/** The protobuf package holding apiVersion's messages ('' → core, 'apps' → apps, 'rbac.authorization.k8s.io' → rbac). */
function packageOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return `k8s.io.api.${group === '' ? 'core' : group.split('.')[0]!}.${version}`;
}

const badRequest = (msg: string) => new ApiError('BadRequest', msg);

/**
 * decodeKubernetesProtobuf decodes one protobuf-encoded object to its JSON form (with apiVersion and
 * kind from the envelope). Throws a 400 ApiError for a malformed body or a kind this server has no
 * schema for. Pure; safe to call concurrently.
 */
export function decodeKubernetesProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw badRequest('provided object is not a Kubernetes protobuf object: the magic prefix "k8s\\x00" is missing');
  }
  const r = schema();
  const unknown = decodeMessage(r.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown'), body.subarray(MAGIC.length)) as {
    typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array; contentEncoding?: string;
  };
  if (unknown.contentEncoding) throw badRequest(`unsupported content encoding "${unknown.contentEncoding}"`);
  const apiVersion = unknown.typeMeta?.apiVersion ?? '';
  const kind = unknown.typeMeta?.kind ?? '';
  if (!kind) throw badRequest('Object \'Kind\' is missing in the protobuf envelope');
  let type: protobuf.Type;
  try {
    type = r.lookupType(`${packageOf(apiVersion)}.${kind}`);
  } catch {
    throw badRequest(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/api/legacyscheme/scheme.go:30"`);
  }
  const msg = decodeMessage(type, unknown.raw ?? new Uint8Array());
  return { apiVersion, kind, ...messageToJson(type, msg) };
}

function decodeMessage(type: protobuf.Type, buf: Uint8Array): protobuf.Message {
  try {
    return type.decode(buf);
  } catch (err) {
    throw badRequest(`unable to decode protobuf ${type.name}: ${(err as Error).message}`);
  }
}

type Dict = Record<string, unknown>;

function messageToJson(type: protobuf.Type, msg: protobuf.Message | Dict): Dict {
  const out: Dict = {};
  const m = msg as unknown as Dict;
  for (const f of type.fieldsArray) {
    if (!Object.hasOwn(m, f.name)) continue; // absent on the wire (proto2 defaults live on the prototype)
    const v = fieldToJson(f, m[f.name]);
    if (v === undefined) continue;
    if (INLINE_FIELDS.has(f.name) && f.resolvedType instanceof protobuf.Type && v && typeof v === 'object') Object.assign(out, v);
    else out[f.name] = v;
  }
  return out;
}

const emitZero = (f: protobuf.Field): boolean => f.options?.['(emit_zero)'] === true;

function fieldToJson(f: protobuf.Field, v: unknown): unknown {
  if (f instanceof protobuf.MapField) {
    const entries = Object.entries(v as Dict);
    if (entries.length === 0) return undefined;
    const out: Dict = {};
    for (const [k, x] of entries) out[k] = valueToJson(f, x, true);
    return out;
  }
  if (f.repeated) {
    const list = v as unknown[];
    if (list.length === 0) return undefined;
    return list.map((x) => valueToJson(f, x, true));
  }
  const x = valueToJson(f, v, emitZero(f));
  return x;
}

/** One value of field f; keep: zero values are meaningful (list items, map values, pointers). */
function valueToJson(f: protobuf.Field, v: unknown, keep: boolean): unknown {
  const t = f.resolvedType;
  if (t instanceof protobuf.Type) return messageValue(t, v as Dict);
  if (t instanceof protobuf.Enum) return v;
  switch (f.type) {
    case 'string': return v === '' && !keep ? undefined : v;
    case 'bool': return v === false && !keep ? undefined : v;
    case 'bytes': {
      const b = Buffer.from(v as Uint8Array);
      return b.length === 0 && !keep ? undefined : b.toString('base64');
    }
    default: {
      const n = toNumber(v);
      return n === 0 && !keep ? undefined : n;
    }
  }
}

function messageValue(t: protobuf.Type, v: Dict): unknown {
  switch (t.fullName) {
    case TIME: return formatTime(v, false);
    case MICRO_TIME: return formatTime(v, true);
    case INT_OR_STRING: return toNumber(v['type'] ?? 0) === 1 ? (v['strVal'] ?? '') : toNumber(v['intVal'] ?? 0);
    case QUANTITY: return v['string'] ?? '0';
    case FIELDS_V1: return parseRawJson(v['Raw']);
    case RAW_EXTENSION: return parseRawJson(v['raw']);
    case EXTRA_VALUE: case CSR_EXTRA_VALUE: return (v['items'] as string[] | undefined) ?? [];
    default: return messageToJson(t, v);
  }
}

function parseRawJson(raw: unknown): unknown {
  const b = raw ? Buffer.from(raw as Uint8Array) : Buffer.alloc(0);
  if (b.length === 0) return {};
  try { return JSON.parse(b.toString('utf8')) as unknown; } catch { throw badRequest('invalid JSON in a raw protobuf field'); }
}

/** int64 fields decode to Long (long.js is installed); JSON numbers are enough for every API int64. */
function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && 'low' in v) return Number(String(v));
  return Number(v);
}

/** metav1.Time: RFC 3339 in seconds (MicroTime: microseconds); the zero time is null and omitted. */
function formatTime(v: Dict, micro: boolean): string | undefined {
  // Go writes the zero time as an empty message (apimachinery time_proto.go).
  if (!Object.hasOwn(v, 'seconds') && !Object.hasOwn(v, 'nanos')) return undefined;
  const seconds = toNumber(v['seconds'] ?? 0);
  const nanos = toNumber(v['nanos'] ?? 0);
  if (seconds === GO_ZERO_TIME_SECONDS) return undefined;
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${iso}Z`;
}

/** Go's time.Time{} in Unix seconds (0001-01-01T00:00:00Z). */
const GO_ZERO_TIME_SECONDS = -62135596800;
