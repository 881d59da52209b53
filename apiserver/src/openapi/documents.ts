/**
 * Builds the OpenAPI v3 documents: the /openapi/v3 index and one document per group/version,
 * with the paths kubectl inspects (PATCH operations tagged with x-kubernetes-group-version-kind
 * and a fieldValidation parameter, which make kubectl leave validation to the server) and the
 * component schemas `kubectl explain` and client-side apply's patch computation read.
 */
import { createHash } from 'node:crypto';
import type { ResourceDescriptor } from '@mk8s/api';
import { subresourceInfo, type ResolvedSubresource } from '../discovery/subresources.js';
import {
  LIST_META, PATCH_SCHEMA, REF_PREFIX, definitionName, kindSchemaName, lookupSchema, permissiveKindSchema, type Schema,
} from './schemas.js';

export interface GroupVersionDoc {
  /** The index key: 'api/v1' or 'apis/<group>/<version>'. */
  key: string;
  group: string;
  version: string;
  document: Schema;
  /** The serialized document, as served. */
  body: Buffer;
  /** Upper-case hex sha512 of body, as upstream's ?hash=. */
  hash: string;
}

type Gvk = { group: string; version: string; kind: string };

/** The schemas a resource publishes itself (custom resources): definition names and bodies. */
export interface OwnSchemas {
  kindSchema: string;
  listSchema: string;
  schemas: Readonly<Record<string, Schema>>;
}

/** A served resource as OpenAPI documents it: its subresources and, for custom ones, its own schemas. */
export interface OpenApiResource {
  descriptor: ResourceDescriptor;
  subresources: readonly ResolvedSubresource[];
  schemas?: OwnSchemas | undefined;
  /** Patch types the resource refuses (custom resources: 'strategic'); left out of PATCH's content types. */
  refusedPatchTypes?: readonly string[] | undefined;
}

const asOpenApiResource = (x: ResourceDescriptor | OpenApiResource): OpenApiResource =>
  'descriptor' in x ? x : { descriptor: x, subresources: x.subresources.map((sub) => subresourceInfo(x, sub)) };

const ref = (name: string): Schema => ({ $ref: REF_PREFIX + name });
const query = (name: string, type: string, description: string): Schema =>
  ({ name, in: 'query', description, schema: { type, uniqueItems: true } });

const DRY_RUN = query('dryRun', 'string', 'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed');
const FIELD_MANAGER = query('fieldManager', 'string', 'fieldManager is a name associated with the actor or entity that is making these changes.');
const FIELD_VALIDATION = query('fieldValidation', 'string',
  'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict');
const FORCE = query('force', 'boolean', 'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people.');
const PRETTY = query('pretty', 'string', "If 'true', then the output is pretty printed.");
const LIST_PARAMS = [
  query('allowWatchBookmarks', 'boolean', 'allowWatchBookmarks requests watch events with type "BOOKMARK".'),
  query('continue', 'string', 'The continue option should be set when retrieving more results from the server.'),
  query('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  query('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  query('limit', 'integer', 'limit is a maximum number of responses to return for a list call.'),
  query('resourceVersion', 'string', 'resourceVersion sets a constraint on what resource versions a request may be served from.'),
  query('resourceVersionMatch', 'string', 'resourceVersionMatch determines how resourceVersion is applied to list calls.'),
  query('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  query('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.'),
];
const PATCH_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];
const PATCH_TYPE_NAMES: Record<string, string> = {
  'application/apply-patch+yaml': 'apply', 'application/json-patch+json': 'json', 'application/merge-patch+json': 'merge', 'application/strategic-merge-patch+json': 'strategic',
};
const RESPONSE_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

function responses(codes: string[], schema: string): Schema {
  const content = Object.fromEntries(RESPONSE_TYPES.map((t) => [t, { schema: ref(schema) }]));
  return { ...Object.fromEntries(codes.map((c) => [c, { description: c === '201' ? 'Created' : c === '202' ? 'Accepted' : 'OK', content }])), '401': { description: 'Unauthorized' } };
}

function op(action: string, id: string, description: string, gvk: Gvk, extra: Schema): Schema {
  return { description, operationId: id, ...extra, 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk };
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function pathsFor(res: OpenApiResource, schemaOf: (g: Gvk) => string): Record<string, Schema> {
  const r = res.descriptor;
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const gvk: Gvk = { group: r.group, version: r.version, kind: r.kind };
  const kindSchema = schemaOf(gvk);
  const listSchema = schemaOf({ ...gvk, kind: r.listKind });
  const idBase = `${r.kind}${r.group ? cap(r.group.split('.')[0]!) : 'Core'}${cap(r.version)}`;
  const ns = r.namespaced ? 'Namespaced' : '';
  const nsParam: Schema[] = r.namespaced ? [{ name: 'namespace', in: 'path', description: 'object name and auth scope, such as for teams and projects', required: true, schema: { type: 'string', uniqueItems: true } }] : [];
  const nameParam = (what: string): Schema => ({ name: 'name', in: 'path', description: `name of the ${what}`, required: true, schema: { type: 'string', uniqueItems: true } });
  const coll = r.namespaced ? `${base}/namespaces/{namespace}/${r.resource}` : `${base}/${r.resource}`;
  const item = `${coll}/{name}`;
  const has = (v: string) => (r.verbs as readonly string[]).includes(v);
  const writeBody = (schema: string) => ({ requestBody: { content: { '*/*': { schema: ref(schema) } }, required: true } });
  // kubectl's client-side apply sends a strategic merge patch only where PATCH lists its type.
  const patchTypes = PATCH_TYPES.filter((t) => !(res.refusedPatchTypes ?? []).includes(PATCH_TYPE_NAMES[t]!));
  const patchBody = { requestBody: { content: Object.fromEntries(patchTypes.map((t) => [t, { schema: ref(PATCH_SCHEMA) }])), required: true } };
  const out: Record<string, Schema> = {};

  const collection: Schema = { parameters: [...nsParam, PRETTY] };
  if (has('list')) collection['get'] = op('list', `list${ns}${idBase}`, `list or watch objects of kind ${r.kind}`, gvk, { parameters: LIST_PARAMS, responses: responses(['200'], listSchema) });
  if (has('create')) collection['post'] = op('post', `create${ns}${idBase}`, `create ${r.singular}`, gvk, { parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION], ...writeBody(kindSchema), responses: responses(['200', '201', '202'], kindSchema) });
  if (has('deletecollection')) collection['delete'] = op('deletecollection', `deleteCollection${ns}${idBase}`, `delete collection of ${r.kind}`, gvk, { parameters: [...LIST_PARAMS, DRY_RUN], responses: responses(['200'], 'io.k8s.apimachinery.pkg.apis.meta.v1.Status') });
  out[coll] = collection;

  const single: Schema = { parameters: [nameParam(r.kind), ...nsParam, PRETTY] };
  if (has('get')) single['get'] = op('get', `read${ns}${idBase}`, `read the specified ${r.kind}`, gvk, { responses: responses(['200'], kindSchema) });
  if (has('update')) single['put'] = op('put', `replace${ns}${idBase}`, `replace the specified ${r.kind}`, gvk, { parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION], ...writeBody(kindSchema), responses: responses(['200', '201'], kindSchema) });
  if (has('patch')) single['patch'] = op('patch', `patch${ns}${idBase}`, `partially update the specified ${r.kind}`, gvk, { parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE], ...patchBody, responses: responses(['200', '201'], kindSchema) });
  if (has('delete')) single['delete'] = op('delete', `delete${ns}${idBase}`, `delete ${r.singular}`, gvk, { parameters: [DRY_RUN], responses: responses(['200', '202'], kindSchema) });
  out[item] = single;

  if (r.namespaced && has('list')) {
    out[`${base}/${r.resource}`] = {
      parameters: [PRETTY],
      get: op('list', `list${idBase}ForAllNamespaces`, `list or watch objects of kind ${r.kind}`, gvk, { parameters: LIST_PARAMS, responses: responses(['200'], listSchema) }),
    };
  }

  for (const s of res.subresources) {
    const sub = s.name;
    const sgvk: Gvk = { group: s.group, version: s.version, kind: s.kind };
    const sSchema = schemaOf(sgvk);
    const subId = `${idBase}${cap(sub)}`;
    const entry: Schema = { parameters: [nameParam(s.kind), ...nsParam, PRETTY] };
    if (s.verbs.includes('get') && (sub === 'status' || sub === 'scale')) entry['get'] = op('get', `read${ns}${subId}`, `read ${sub} of the specified ${r.kind}`, sgvk, { responses: responses(['200'], sSchema) });
    if (s.verbs.includes('update')) entry['put'] = op('put', `replace${ns}${subId}`, `replace ${sub} of the specified ${r.kind}`, sgvk, { parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION], ...writeBody(sSchema), responses: responses(['200', '201'], sSchema) });
    if (s.verbs.includes('patch')) entry['patch'] = op('patch', `patch${ns}${subId}`, `partially update ${sub} of the specified ${r.kind}`, sgvk, { parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE], ...patchBody, responses: responses(['200', '201'], sSchema) });
    if (s.verbs.includes('create') && (sub === 'binding' || sub === 'eviction')) entry['post'] = op('post', `create${ns}${subId}`, `create ${sub} of a ${r.kind}`, sgvk, { parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION], ...writeBody(sSchema), responses: responses(['200', '201', '202'], sSchema) });
    if (Object.keys(entry).length > 1) out[`${item}/${sub}`] = entry;
  }
  return out;
}

/** Every schema name reachable from roots through $refs. */
function closure(roots: Iterable<string>, lookup: (name: string) => Schema | undefined): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) { v.forEach(walk); return; }
    if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string' && x.startsWith(REF_PREFIX)) stack.push(x.slice(REF_PREFIX.length));
        else walk(x);
      }
    }
  };
  while (stack.length) {
    const name = stack.pop()!;
    if (seen.has(name)) continue;
    const s = lookup(name);
    if (!s) continue;
    seen.add(name);
    walk(s);
  }
  return seen;
}

const gvkKey = (g: Gvk) => `${g.group}/${g.version}/${g.kind}`;

/**
 * Builds one document per served group/version. Kind and list schemas carry
 * x-kubernetes-group-version-kind (what `explain` and apply look kinds up by); kinds without a
 * generated schema get a permissive one so they still validate and explain minimally.
 */
export function buildGroupVersionDocs(resources: readonly (ResourceDescriptor | OpenApiResource)[]): GroupVersionDoc[] {
  const byGv = new Map<string, OpenApiResource[]>();
  for (const x of resources) {
    const res = asOpenApiResource(x);
    const r = res.descriptor;
    const key = r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`;
    byGv.set(key, [...(byGv.get(key) ?? []), res]);
  }
  const docs: GroupVersionDoc[] = [];
  for (const [key, rs] of byGv) {
    const { group, version } = rs[0]!.descriptor;
    const local = new Map<string, Schema>();
    const gvks = new Map<string, Gvk[]>();
    // Custom resources name their own definitions (com.example.stable.v1.CronTab).
    const own = new Map<string, string>();
    for (const { descriptor: r, schemas } of rs) {
      if (!schemas) continue;
      own.set(gvkKey({ group: r.group, version: r.version, kind: r.kind }), schemas.kindSchema);
      own.set(gvkKey({ group: r.group, version: r.version, kind: r.listKind }), schemas.listSchema);
      for (const [name, body] of Object.entries(schemas.schemas)) local.set(name, body);
    }
    const schemaOf = (g: Gvk): string => {
      const name = own.get(gvkKey(g)) ?? definitionName(g.group, g.version, g.kind);
      const list = gvks.get(name) ?? [];
      if (!list.some((x) => gvkKey(x) === gvkKey(g))) list.push(g);
      gvks.set(name, list);
      if (!lookupSchema(name) && !local.has(name)) {
        local.set(name, g.kind.endsWith('List')
          ? { description: `${g.kind} is a list of ${g.kind.slice(0, -4)}.`, type: 'object', required: ['items'],
              properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { allOf: [{ $ref: REF_PREFIX + LIST_META }] },
                items: { type: 'array', items: { allOf: [{ $ref: REF_PREFIX + definitionName(g.group, g.version, g.kind.slice(0, -4)) }] } } } }
          : permissiveKindSchema(g.kind));
      }
      return name;
    };
    const paths: Record<string, Schema> = {};
    for (const r of rs) Object.assign(paths, pathsFor(r, schemaOf));
    for (const { descriptor: r } of rs) schemaOf({ group: r.group, version: r.version, kind: r.kind });
    const lookup = (name: string) => local.get(name) ?? lookupSchema(name);
    const names = [...closure([...gvks.keys(), PATCH_SCHEMA, 'io.k8s.apimachinery.pkg.apis.meta.v1.Status', 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions'], lookup)].sort();
    const schemas: Record<string, Schema> = {};
    for (const name of names) {
      const s = lookup(name)!;
      const tags = gvks.get(name);
      schemas[name] = tags ? { ...s, 'x-kubernetes-group-version-kind': tags } : s;
    }
    const document: Schema = {
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: 'v1.32.0-mk8s' },
      paths,
      components: { schemas },
    };
    const body = Buffer.from(JSON.stringify(document));
    docs.push({ key, group, version, document, body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() });
  }
  return docs;
}

/** The /openapi/v3 index: every group/version with a hash-versioned URL (kubectl caches by it). */
export function openApiIndex(docs: readonly GroupVersionDoc[]): Schema {
  return { paths: Object.fromEntries(docs.map((d) => [d.key, { serverRelativeURL: `/openapi/v3/${d.key}?hash=${d.hash}` }])) };
}
