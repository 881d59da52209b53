/**
 * Serving a CRD's versions: one registry entry per served version (upstream's crdHandler
 * serving info): a descriptor from the accepted names, a Store over the shared etcd prefix whose
 * strategy prunes, defaults and validates with the version's structural schema, the status and
 * scale subresources, the printer columns, the published OpenAPI schema, and strategic merge
 * patch refused. Building an entry is pure; the controller adds and removes them.
 */
import {
  ALL_VERBS, ApiError, apiVersionOf, patchSchemaFor, translateTimestampSince, validateObject,
  type KubeObject, type PatchMeta, type PatchSchema, type ResourceDescriptor,
} from '@mk8s/api';
import type { Clock } from '@mk8s/component-base';
import { Store, type StoreOptions } from '../registry/generic/store.js';
import type { RestStrategy } from '../registry/generic/strategy.js';
import type { ResourceEntry, Subresource, TablePrinter } from '../registry/registry.js';
import { scaleSubresource, statusSubresource, type ScaleMapping } from '../endpoints/subresources.js';
import { applySchemaDefaults, compileSchema, prune, unknownFieldPaths, type JSONSchemaProps } from './schema.js';
import { evalJsonPath, parseJsonPath, simplePath } from './jsonpath.js';
import { celErrors } from './cel.js';
import { storageVersionOf, type Crd, type CrdNames, type CrdVersion, type PrinterColumn, type ScaleSubresourceSpec } from './types.js';

type Obj = Record<string, unknown>;

/** What the entries need from the server: the Store's storage, clock and admission chain. */
export type CustomStoreOptions = Pick<StoreOptions, 'storage' | 'clock' | 'admission'>;

/** The descriptor of one served version, from the CRD's accepted names. */
export function customDescriptor(crd: Crd, version: CrdVersion): ResourceDescriptor {
  const names: CrdNames = crd.status?.acceptedNames?.plural ? crd.status.acceptedNames : crd.spec.names;
  const subresources: string[] = [];
  if (version.subresources?.status) subresources.push('status');
  if (version.subresources?.scale) subresources.push('scale');
  return {
    group: crd.spec.group, version: version.name, kind: names.kind, listKind: names.listKind || `${names.kind}List`,
    resource: names.plural, singular: names.singular || names.kind.toLowerCase(), namespaced: crd.spec.scope === 'Namespaced',
    shortNames: names.shortNames ?? [], categories: names.categories ?? [], verbs: ALL_VERBS, subresources,
  };
}

/** Upstream's OpenAPI definition name for a custom kind: the group reversed (com.example.stable.v1.CronTab). */
export function customDefinitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

const OBJECT_META_REF = '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META_REF = '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';

/** The OpenAPI v3 schemas of a version: the kind (schema plus apiVersion/kind/metadata) and its list. */
export function publishedSchemas(d: ResourceDescriptor, schema: JSONSchemaProps | undefined) {
  const kindSchema = customDefinitionName(d.group, d.version, d.kind);
  const listSchema = customDefinitionName(d.group, d.version, d.listKind);
  const base = structuredClone(schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Obj;
  const props = { ...((base['properties'] ?? {}) as Obj) };
  props['apiVersion'] = { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources' };
  props['kind'] = { type: 'string', description: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds' };
  props['metadata'] = { allOf: [{ $ref: OBJECT_META_REF }], description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata" };
  base['properties'] = props;
  base['type'] = 'object';
  const list = {
    description: `${d.listKind} is a list of ${d.kind}`, type: 'object', required: ['items'],
    properties: {
      apiVersion: props['apiVersion'], kind: props['kind'],
      items: { type: 'array', description: `List of ${d.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, items: { $ref: `#/components/schemas/${kindSchema}` } },
      metadata: { allOf: [{ $ref: LIST_META_REF }], description: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds' },
    },
  };
  return { kindSchema, listSchema, schemas: { [kindSchema]: base, [listSchema]: list } };
}

// ---- printer columns ----

const NAME_DESCRIPTION = 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** The columns a version prints; none listed: Age (upstream's serveDefaultColumnsIfEmpty). */
export function columnsOf(version: CrdVersion): PrinterColumn[] {
  const cols = version.additionalPrinterColumns ?? [];
  return cols.length ? cols : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
}

/** One cell as upstream's tableconvertor renders it. */
function cell(c: PrinterColumn, values: unknown[], now: number): unknown {
  if (values.length === 0) return null;
  const v = values[0];
  if (v === null || v === undefined) return null;
  switch (c.type) {
    case 'string': return typeof v === 'string' ? v : JSON.stringify(v);
    case 'integer': return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number': return typeof v === 'number' ? v : null;
    case 'boolean': return typeof v === 'boolean' ? v : null;
    case 'date': {
      if (typeof v !== 'string') return null;
      return Number.isNaN(Date.parse(v)) ? '<invalid>' : translateTimestampSince(v, now);
    }
    default: return null;
  }
}

/** One printed column: its definition and how a cell is computed. */
export interface PrintedColumn {
  name: string; type: string; format?: string; description: string; priority?: number;
  cell(obj: KubeObject, now: number): unknown;
}

/** A meta.k8s.io/v1 Table printer: Name, then the given columns (rows carry PartialObjectMetadata by default). */
export function columnsTablePrinter(d: ResourceDescriptor, columns: readonly PrintedColumn[], clock: Pick<Clock, 'now'>): TablePrinter {
  const headers = [
    { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
    ...columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority ?? 0 })),
  ];
  return (objects, opts) => {
    const now = clock.now();
    const include = opts.includeObject ?? 'Metadata';
    const metadata: Obj = {};
    if (opts.resourceVersion !== undefined) metadata['resourceVersion'] = opts.resourceVersion;
    if (opts.continue) metadata['continue'] = opts.continue;
    return {
      kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata,
      columnDefinitions: opts.noHeaders ? [] : headers,
      rows: objects.map((obj) => {
        const row: Obj = { cells: [obj.metadata.name, ...columns.map((c) => c.cell(obj, now))] };
        if (include === 'Metadata') row['object'] = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
        else if (include === 'Object') row['object'] = { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(d), kind: obj.kind ?? d.kind };
        return row;
      }),
    };
  };
}

/** A meta.k8s.io/v1 Table printer for a version's columns (upstream tableconvertor). */
export function customTablePrinter(d: ResourceDescriptor, version: CrdVersion, clock: Pick<Clock, 'now'>): TablePrinter {
  return columnsTablePrinter(d, columnsOf(version).map((c): PrintedColumn => {
    let path: ReturnType<typeof parseJsonPath> | undefined;
    try { path = parseJsonPath(c.jsonPath); } catch { path = undefined; }
    return {
      name: c.name, type: c.type, format: c.format ?? '', priority: c.priority ?? 0,
      description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
      cell: (obj, now) => (path ? cell(c, evalJsonPath(path, obj), now) : null),
    };
  }), clock);
}

// ---- scale ----

function getPath(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const k of path) cur = cur && typeof cur === 'object' ? (cur as Obj)[k] : undefined;
  return cur;
}

function setPath(obj: Obj, path: readonly string[], value: unknown): void {
  let cur = obj;
  for (const k of path.slice(0, -1)) {
    if (!cur[k] || typeof cur[k] !== 'object' || Array.isArray(cur[k])) cur[k] = {};
    cur = cur[k] as Obj;
  }
  cur[path[path.length - 1]!] = value;
}

/** The Scale view at a CRD's specReplicasPath / statusReplicasPath / labelSelectorPath. */
export function customScale(spec: ScaleSubresourceSpec): ScaleMapping {
  const specPath = simplePath(spec.specReplicasPath) ?? ['spec', 'replicas'];
  const statusPath = simplePath(spec.statusReplicasPath) ?? ['status', 'replicas'];
  const selectorPath = spec.labelSelectorPath ? simplePath(spec.labelSelectorPath) : undefined;
  return {
    toScale: (obj) => {
      const m = obj.metadata;
      const metadata: Obj = { name: m.name };
      for (const k of ['namespace', 'uid', 'resourceVersion', 'creationTimestamp'] as const) if (m[k] !== undefined) metadata[k] = m[k];
      const replicas = getPath(obj, specPath);
      const statusReplicas = getPath(obj, statusPath);
      const selector = selectorPath ? getPath(obj, selectorPath) : undefined;
      const status: Obj = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
      if (typeof selector === 'string' && selector) status['selector'] = selector;
      return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: metadata as unknown as KubeObject['metadata'], spec: { replicas: typeof replicas === 'number' ? replicas : 0 }, status } as KubeObject;
    },
    withReplicas: (obj, replicas) => { setPath(obj as Obj, specPath, replicas); return obj; },
  };
}

// ---- server-side apply ----

/**
 * The merge rules server-side apply uses for a version: lists with x-kubernetes-list-type `map`
 * merge by their (first) list-map key, `set` lists as sets, every other list is atomic (the CRD
 * default); ObjectMeta's rules at the root.
 */
export function applySchemaOf(schema: JSONSchemaProps | undefined): PatchSchema {
  const walk = (s: JSONSchemaProps | undefined): PatchSchema | undefined => {
    if (!s?.properties) return undefined;
    const out: Record<string, PatchMeta> = {};
    for (const [k, p] of Object.entries(s.properties)) {
      if (p.type === 'array') {
        const t = p['x-kubernetes-list-type'];
        const fields = walk(p.items);
        if (t === 'map' && p['x-kubernetes-list-map-keys']?.[0]) out[k] = { strategy: 'merge', mergeKey: p['x-kubernetes-list-map-keys'][0], ...(fields ? { fields } : {}) };
        else if (t === 'set') out[k] = { strategy: 'merge' };
        else out[k] = { strategy: 'replace' };
      } else {
        const fields = walk(p);
        if (fields) out[k] = { fields };
      }
    }
    return Object.keys(out).length ? out : undefined;
  };
  return { ...patchSchemaFor({ group: '', resource: '' }), ...(walk(schema) ?? {}) };
}

// ---- the strategy and the entry ----

export interface CustomEntryOptions extends CustomStoreOptions {
  /** The CRD is being deleted: creates are refused while its objects go. */
  terminating?: boolean;
}

/** The entry serving one version of a CRD. */
export function customResourceEntry(crd: Crd, version: CrdVersion, o: CustomEntryOptions): ResourceEntry {
  const d = customDescriptor(crd, version);
  const storage = storageVersionOf(crd) ?? version.name;
  const storageApiVersion = `${crd.spec.group}/${storage}`;
  const schema = version.schema?.openAPIV3Schema;
  const validate = compileSchema(schema);
  const hasStatus = !!version.subresources?.status;
  const toStorage = (obj: KubeObject) => { obj.apiVersion = storageApiVersion; };
  const strategy: RestStrategy = {
    resource: d,
    statusSubresource: hasStatus,
    prepareForCreate(obj) {
      if (o.terminating) throw new ApiError('MethodNotAllowed', `create not allowed while custom resource definition is terminating`);
      if (hasStatus) delete obj['status'];
      toStorage(obj);
    },
    prepareForUpdate: (next) => toStorage(next),
    prepareForStatusUpdate(next) {
      prune(next, schema);
      applySchemaDefaults(next, schema);
      toStorage(next);
    },
    validate: (obj) => [...validate(obj), ...celErrors(obj, undefined, schema)],
    validateUpdate: (next, prev) => [...validate(next), ...celErrors(next, prev, schema)],
  };
  // Pruning then defaulting, on every write of the object (upstream: decoding prunes, then defaults).
  const defaulter = (_r: ResourceDescriptor, obj: KubeObject): KubeObject => {
    prune(obj, schema);
    applySchemaDefaults(obj, schema);
    return obj;
  };
  const store = new Store({
    strategy, storage: o.storage, clock: o.clock, admission: o.admission,
    defaulter: (r, obj) => defaulter(r, structuredClone(obj)),
    defaulterInPlace: defaulter,
    validator: (r, obj, old) => validateObject(r, obj, old),
    servesOtherVersion: version.name !== storage,
  });
  const subresources = new Map<string, Subresource>();
  if (hasStatus) subresources.set('status', statusSubresource);
  if (version.subresources?.scale) subresources.set('scale', scaleSubresource(customScale(version.subresources.scale)));
  return {
    descriptor: d, store, subresources,
    table: customTablePrinter(d, version, o.clock),
    unknownFields: (obj) => unknownFieldPaths(obj, schema),
    unsupportedPatchTypes: ['strategic'],
    openapi: publishedSchemas(d, schema),
  };
}

/** The entries of every served version, storage version first... in the CRD's order (the preferred version first). */
export function customResourceEntries(crd: Crd, o: CustomEntryOptions): ResourceEntry[] {
  return sortVersions(crd.spec.versions.filter((v) => v.served)).map((v) => customResourceEntry(crd, v, o));
}

/**
 * Upstream's version priority (kube-aware sort): GA before beta before alpha, higher numbers
 * first, other names last in alphabetical order. The first is the group's preferred version.
 */
export function sortVersions<T extends { name: string }>(versions: readonly T[]): T[] {
  const rank = (n: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(n);
    if (!m) return [3, 0, 0, n];
    const kind = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [kind, -Number(m[1]), -Number(m[3] ?? 0), n];
  };
  return [...versions].sort((a, b) => {
    const x = rank(a.name); const y = rank(b.name);
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
    return x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0;
  });
}
