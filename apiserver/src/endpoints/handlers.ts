/**
 * The resource handlers: one dispatcher for /api/** and /apis/** that maps a RequestInfo to the
 * resource's Store (upstream endpoints/handlers: create.go, get.go, rest.go, patch.go,
 * delete.go, watch.go). Nothing here is per-resource except the subresource table.
 */
import {
  ApiError, apiVersionOf, queryBool, selectionPredicate,
  type DeleteOptions, type KubeList, type KubeObject, type ResourceDescriptor, type WatchEvent,
} from '@mk8s/api';
import type { Clock } from '@mk8s/component-base';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Registry, RequestContext, ResourceEntry, Store } from '../registry/index.js';
import { encodeObject, encodeObjectText } from '../registry/generic/store.js';
import type { UpdateTarget } from '../registry/generic/strategy.js';
import { applyPatch } from '../registry/generic/patch.js';
import { appliedFields, managerFromUserAgent, serverSideApply, toFieldsV1, validatePatchOptions } from '../registry/generic/apply.js';
import type { TokenRequestDeps } from '../registry/core/serviceaccounts/token.js';
import type { KubeletClientConfig } from './kubelet-proxy.js';
import { decodeBody, decodeObject, patchTypeOf, PATCH_MEDIA_TYPES } from './body.js';
import type { ResourceRequestInfo } from './request-info.js';
import { JSON_CONTENT_TYPE, methodNotAllowedError, notFoundError, successStatus } from './status.js';
import { serveWatch } from './watch.js';
import type { ApiServerMetrics } from '../metrics.js';

/** Turns objects into a meta.k8s.io/v1 Table when the client asked for one. */
export interface TableConvertor {
  wantsTable(accept: string | undefined): boolean;
  toTable(resource: ResourceDescriptor, objects: KubeObject[], opts: { includeObject?: string; noHeaders?: boolean; resourceVersion?: string; continue?: string }): unknown;
}

/** Checks `fieldValidation=Strict|Warn` against the known fields of a resource. */
export type UnknownFieldsCheck = (resource: ResourceDescriptor, obj: unknown) => string[];

export interface HandlerDeps {
  registry: Registry;
  clock: Clock;
  metrics: ApiServerMetrics;
  table?: TableConvertor | undefined;
  unknownFields?: UnknownFieldsCheck | undefined;
  /** serviceaccounts/token; undefined: not served (no signing key). */
  tokenRequest?: TokenRequestDeps | undefined;
  /** Default watch timeout when the client gives no timeoutSeconds. */
  watchTimeoutSeconds: number;
  serverSignal: AbortSignal;
  /** TLS and identity towards kubelets (pods/log). */
  kubeletClient?: KubeletClientConfig | undefined;
}

export type Query = Record<string, string | string[] | undefined>;
const q1 = (q: Query, k: string): string | undefined => {
  const v = q[k];
  return Array.isArray(v) ? v[0] : v;
};
/** A boolean query parameter, read as upstream's parameter codec reads it (api/query.ts). */
const qBool = (q: Query, k: string): boolean => queryBool(q[k]);


/** Serves one resource request; errors are thrown as ApiErrors and become Status by the error handler. */
export async function handleResourceRequest(deps: HandlerDeps, info: ResourceRequestInfo, rc: RequestContext,
  req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const r = info.descriptor;
  if (!r) throw notFoundError();
  const entry = deps.registry.entryOf(r);
  const store = entry?.store;
  if (!entry || !store) throw notFoundError();
  // Whether apiVersion/kind is a kind this server serves (decode errors name unregistered ones as upstream).
  const isRegisteredKind = (apiVersion: string, kind: string): boolean => deps.registry.lookupKind(apiVersion, kind) !== undefined;
  if (!r.namespaced && info.namespace) throw notFoundError();
  if (r.namespaced && info.name && !info.namespace) throw notFoundError();
  const q = (req.query ?? {}) as Query;
  parseCommonWriteParams(q, rc, req.method, req.headers['user-agent']);
  const ns = info.namespace;
  const ct = req.headers['content-type'];

  if (info.subresource) return handleSubresource(deps, entry, store, info, rc, req, reply, q);

  switch (info.verb) {
    case 'get': {
      // resourceVersion=0: any recent state will do, served from the watch cache (upstream).
      const obj = await store.get(ns, info.name, q1(q, 'resourceVersion') === '0' ? { resourceVersion: '0' } : {});
      return sendObject(deps, reply, req, r, obj, 200, q);
    }
    case 'list': {
      const list = await store.list(ns, listParams(r, q));
      return sendList(deps, reply, req, r, list, q);
    }
    case 'watch': {
      let predicate = selectorPredicate(r, q);
      if (info.name) {
        // Legacy per-object watch (/watch/namespaces/ns/pods/name, GET …/name?watch=1).
        const name = info.name; const prev = predicate;
        predicate = (o) => o.metadata.name === name && (!prev || prev(o));
      }
      return watch(deps, store, req, reply, ns, predicate, q);
    }
    case 'create': {
      if (info.name) throw methodNotAllowedError();
      if (r.namespaced && !ns) throw methodNotAllowedError();
      const body = decodeObject(req.body, ct, r, isRegisteredKind) as KubeObject;
      checkFields(deps, r, body, q, rc);
      const obj = await store.create(rc, ns, body, { bodyOwned: true });   // decoded for this request alone
      return sendObject(deps, reply, req, r, obj, 201, q);
    }
    case 'update': {
      if (!info.name) throw methodNotAllowedError();
      const body = decodeObject(req.body, ct, r, isRegisteredKind) as KubeObject;
      checkFields(deps, r, body, q, rc);
      const { object, created } = await store.update(rc, ns, info.name, body, 'main');
      return sendObject(deps, reply, req, r, object, created ? 201 : 200, q);
    }
    case 'patch': {
      if (!info.name) throw methodNotAllowedError();
      const { object, created } = await patchObject(deps, store, rc, req, ns, info.name, 'main', q);
      return sendObject(deps, reply, req, r, object, created ? 201 : 200, q);
    }
    case 'delete': {
      const options = deleteOptions(req, q);
      if (options.dryRun?.includes('All')) rc.dryRun = true;
      const res = await store.delete(rc, ns, info.name, options);
      if (res.deleted && !store.strategy.returnDeletedObject) {
        const m = res.object.metadata;
        const details: Record<string, unknown> = { name: m.name, kind: r.resource };
        if (r.group) details['group'] = r.group;
        if (m.uid) details['uid'] = m.uid;
        return reply.code(200).type(JSON_CONTENT_TYPE).send(successStatus(details));
      }
      return sendObject(deps, reply, req, r, res.object, 200, q);
    }
    case 'deletecollection': {
      if (!r.verbs.includes('deletecollection')) throw methodNotAllowedError();
      const options = deleteOptions(req, q);
      if (options.dryRun?.includes('All')) rc.dryRun = true;
      const predicate = selectorPredicate(r, q);
      const list = await store.deleteCollection(rc, ns, predicate ? { predicate } : {}, options);
      return sendList(deps, reply, req, r, list, q);
    }
  }
  throw methodNotAllowedError();
}

// ---- subresources ----

/** Dispatches to the subresource the resource registered; the verbs it lists are the ones served. */
async function handleSubresource(deps: HandlerDeps, entry: ResourceEntry, store: Store, info: ResourceRequestInfo, rc: RequestContext,
  req: FastifyRequest, reply: FastifyReply, q: Query): Promise<unknown> {
  const sub = entry.subresources.get(info.subresource);
  if (!info.name || !sub?.serve) throw notFoundError();
  if (!sub.verbs.includes(info.verb)) throw methodNotAllowedError();
  return sub.serve({ deps, store, info, rc, req, reply, q });
}

// ---- patch ----

export async function patchObject(deps: HandlerDeps, store: Store, rc: RequestContext, req: FastifyRequest, ns: string, name: string,
  target: UpdateTarget, q: Query): Promise<{ object: KubeObject; created: boolean }> {
  const type = patchTypeOf(req.headers['content-type']);
  const refused = deps.registry.entryOf(store.resource)?.unsupportedPatchTypes;
  if (refused?.includes(type)) {
    const accepted = Object.entries(PATCH_MEDIA_TYPES).filter(([, t]) => !refused.includes(t)).map(([m]) => m);
    throw new ApiError('UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
  }
  // Apply needs an explicit ?fieldManager: the user agent's name does not count (upstream).
  validatePatchOptions({ apply: type === 'apply', fieldManager: q1(q, 'fieldManager'), force: q1(q, 'force') });
  const patch = decodeBody(req.body, req.headers['content-type']);
  if (patch === undefined) throw new ApiError('BadRequest', 'the body of the request was empty');
  const r = store.resource;
  // Server-side apply: the applied configuration is the object (upstream rejects its unknown fields
  // before merging). The other types are checked on the patched result below, as upstream does:
  // unknown fields in a patch become unknown fields in the result, SMP directives do not.
  if (type === 'apply') checkFields(deps, r, patch, q, rc, true);
  // A null resourceVersion (merge/SMP deleting it) is unconditional, like an absent one.
  const rawRv = typeof patch === 'object' && patch !== null && !Array.isArray(patch)
    ? ((patch as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion) : undefined;
  const patchRv = rawRv === null || rawRv === '' ? undefined : rawRv;
  if (type === 'apply') {
    // Server-side apply creates a missing object.
    try {
      await store.get(ns, name);
    } catch (err) {
      if (err instanceof ApiError && err.reason === 'NotFound' && target === 'main') {
        const body = structuredClone(patch) as KubeObject;
        body.metadata = { ...(body.metadata ?? {}), name };
        (body.metadata as unknown as { managedFields: unknown[] }).managedFields = [{ manager: rc.fieldManager ?? 'unknown', operation: 'Apply',
          apiVersion: apiVersionOf(r), time: formatNow(deps.clock), fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(appliedFields(patch)) }];
        if (body.metadata.name !== name) throw new ApiError('BadRequest', `the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
        return { object: await store.create(rc, ns, body), created: true };
      }
      throw err;
    }
  }
  const compute = (current: KubeObject | undefined): KubeObject => {
    if (!current) throw store.rewrite(new ApiError('NotFound', ''), name);
    const base = structuredClone(current);
    const patched = (type === 'apply'
      ? serverSideApply(base, patch as KubeObject, rc.fieldManager ?? 'unknown', apiVersionOf(r), formatNow(deps.clock), { force: qBool(q, 'force') })
      : applyPatch(type, base, patch, r)) as KubeObject;
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) throw new ApiError('BadRequest', 'patch did not produce an object');
    if (type !== 'apply') checkPatchedFields(deps, r, current, patched, q, rc);
    patched.metadata = (patched.metadata ?? {}) as KubeObject['metadata'];
    if (patched.metadata.name !== undefined && patched.metadata.name !== name) {
      throw new ApiError('Invalid', `metadata.name: Invalid value: "${String(patched.metadata.name)}": field is immutable`, { code: 422 });
    }
    patched.metadata.name = name;
    if (r.namespaced) {
      if (patched.metadata.namespace && patched.metadata.namespace !== ns) {
        throw new ApiError('BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
      }
      patched.metadata.namespace = ns;
    }
    // Only a resourceVersion the patch itself carries is a precondition.
    if (patchRv === undefined) patched.metadata.resourceVersion = current.metadata.resourceVersion!;
    store.checkIdentity(patched, ns);
    return patched;
  };
  return store.updateWith(rc, ns, name, compute, target, patchRv !== undefined || type === 'json');
}

/** metav1.Time of now (seconds precision, UTC). */
function formatNow(clock: Clock): string {
  return new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// ---- lists, selectors, options ----

function selectorPredicate(r: ResourceDescriptor, q: Query): ((o: KubeObject) => boolean) | undefined {
  const p = selectionPredicate(r, { labelSelector: q1(q, 'labelSelector'), fieldSelector: q1(q, 'fieldSelector') });
  return p.empty ? undefined : (o) => p.matches(o);
}

function listParams(r: ResourceDescriptor, q: Query) {
  const p: { predicate?: (o: KubeObject) => boolean; limit?: number; continue?: string; resourceVersion?: string } = {};
  const rv = q1(q, 'resourceVersion');
  if (rv !== undefined && rv !== '') p.resourceVersion = rv;
  const pred = selectorPredicate(r, q);
  if (pred) p.predicate = pred;
  const limit = q1(q, 'limit');
  if (limit !== undefined && limit !== '') {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 0) throw new ApiError('BadRequest', `invalid limit: ${limit}`);
    if (n > 0) p.limit = n;
  }
  const cont = q1(q, 'continue');
  if (cont) p.continue = cont;
  return p;
}

function deleteOptions(req: FastifyRequest, q: Query): DeleteOptions {
  let opts: DeleteOptions = {};
  const body = decodeBody(req.body, req.headers['content-type']);
  if (body !== undefined) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('BadRequest', 'the body of the request was not a DeleteOptions object');
    opts = body as DeleteOptions;
  }
  const grace = q1(q, 'gracePeriodSeconds');
  if (grace !== undefined) {
    const n = Number(grace);
    if (!Number.isInteger(n)) throw new ApiError('BadRequest', `invalid gracePeriodSeconds: ${grace}`);
    opts.gracePeriodSeconds = n;
  }
  const policy = q1(q, 'propagationPolicy');
  if (policy !== undefined) opts.propagationPolicy = policy;
  const orphan = q1(q, 'orphanDependents');
  if (orphan !== undefined) opts.orphanDependents = queryBool(orphan);
  if (opts.propagationPolicy !== undefined && !['Foreground', 'Background', 'Orphan'].includes(opts.propagationPolicy)) {
    throw new ApiError('Invalid', `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${opts.propagationPolicy}": supported values: "Foreground", "Background", "Orphan", "nil"`,
      { code: 422, details: { kind: 'DeleteOptions', group: 'meta.k8s.io', causes: [{ reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: `propagationPolicy: Unsupported value: "${opts.propagationPolicy}"` }] } });
  }
  if (opts.propagationPolicy !== undefined && opts.orphanDependents !== undefined) {
    throw new ApiError('Invalid', 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "' + opts.propagationPolicy + '": orphanDependents and deletionPropagation cannot be both set', { code: 422 });
  }
  return opts;
}

/** dryRun, fieldManager and fieldValidation, shared by every write. */
function parseCommonWriteParams(q: Query, rc: RequestContext, method: string, userAgent: string | undefined): void {
  const dry = q['dryRun'];
  const dryValues = dry === undefined ? [] : Array.isArray(dry) ? dry : [dry];
  for (const v of dryValues) {
    if (v !== 'All') throw new ApiError('BadRequest', `Invalid dryRun value: "${v}": supported values: "All"`);
  }
  rc.dryRun = dryValues.length > 0;
  const fm = q1(q, 'fieldManager');
  if (fm !== undefined) {
    if (fm.length > 128) throw new ApiError('Invalid', `fieldManager: Too long: may not be more than 128 bytes`, { code: 422 });
    rc.fieldManager = fm;
  } else {
    // Writes without ?fieldManager are recorded under their user agent's name (upstream managerOrUserAgent).
    const derived = managerFromUserAgent(userAgent);
    if (derived) rc.fieldManager = derived;
  }
  const fv = q1(q, 'fieldValidation');
  if (fv !== undefined && fv !== '' && !['Strict', 'Warn', 'Ignore'].includes(fv) && method !== 'GET') {
    throw new ApiError('BadRequest', `fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Strict", "Warn"`);
  }
}

/** fieldValidation: Strict → 400 on unknown fields; Warn (the default) → Warning headers; Ignore. */
function checkFields(deps: HandlerDeps, r: ResourceDescriptor, obj: unknown, q: Query, rc: RequestContext, asPatch = false): void {
  if (!deps.unknownFields) return;
  const mode = q1(q, 'fieldValidation') || 'Warn';
  if (mode === 'Ignore') return;
  const unknown = deps.unknownFields(r, obj);
  if (unknown.length === 0) return;
  if (mode === 'Strict') {
    const detail = `strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`;
    // Upstream's decoder prefixes body decoding errors (create/update); patch errors are bare.
    throw new ApiError('BadRequest', asPatch ? detail : `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${detail}`);
  }
  for (const f of unknown) rc.warnings.push(`unknown field "${f}"`);
}

/**
 * fieldValidation for a patch result. Only fields the patch introduced count: objects stored
 * before (e.g. under Warn) may already carry unknown fields, which upstream would have pruned.
 * Runs once per CAS attempt, so warnings are de-duplicated.
 */
function checkPatchedFields(deps: HandlerDeps, r: ResourceDescriptor, current: KubeObject, patched: KubeObject, q: Query, rc: RequestContext): void {
  if (!deps.unknownFields) return;
  const mode = q1(q, 'fieldValidation') || 'Warn';
  if (mode === 'Ignore') return;
  const before = new Set(deps.unknownFields(r, current));
  const unknown = deps.unknownFields(r, patched).filter((f) => !before.has(f));
  if (unknown.length === 0) return;
  if (mode === 'Strict') throw new ApiError('BadRequest', `strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`);
  for (const f of unknown) {
    const w = `unknown field "${f}"`;
    if (!rc.warnings.includes(w)) rc.warnings.push(w);
  }
}

// ---- responses ----

export function sendObject(deps: HandlerDeps, reply: FastifyReply, req: FastifyRequest, r: ResourceDescriptor, obj: KubeObject,
  code: number, q: Query): FastifyReply {
  reply.code(code).type(JSON_CONTENT_TYPE);
  if (deps.table?.wantsTable(req.headers.accept)) {
    return reply.send(deps.table.toTable(r, [obj], tableOpts(q, obj.metadata.resourceVersion)));
  }
  // Bytes the storage already produced for this object (a create) are sent as they are.
  return reply.send(encodeObjectText(obj));
}

function sendList(deps: HandlerDeps, reply: FastifyReply, req: FastifyRequest, r: ResourceDescriptor, list: KubeList, q: Query): FastifyReply {
  reply.code(200).type(JSON_CONTENT_TYPE);
  if (deps.table?.wantsTable(req.headers.accept)) {
    const opts = tableOpts(q, list.metadata.resourceVersion);
    if (list.metadata.continue) opts.continue = list.metadata.continue;
    return reply.send(deps.table.toTable(r, list.items, opts));
  }
  // Items from the watch cache carry their JSON bytes already: one copy into the response instead
  // of serializing the list (and then encoding a 10 MB string to UTF-8 once more).
  const head = JSON.stringify({ kind: list.kind, apiVersion: list.apiVersion, metadata: list.metadata });
  const parts: Buffer[] = [Buffer.from(`${head.slice(0, -1)},"items":[`)];
  list.items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(encodeObject(item));
  });
  parts.push(LIST_END);
  return reply.send(Buffer.concat(parts));
}

const COMMA = Buffer.from(',');
const LIST_END = Buffer.from(']}');

function tableOpts(q: Query, resourceVersion: string | undefined) {
  const o: { includeObject?: string; noHeaders?: boolean; resourceVersion?: string; continue?: string } = {};
  const inc = q1(q, 'includeObject');
  if (inc) o.includeObject = inc;
  if (resourceVersion) o.resourceVersion = resourceVersion;
  return o;
}

async function watch(deps: HandlerDeps, store: Store, req: FastifyRequest, reply: FastifyReply, ns: string,
  predicate: ((o: KubeObject) => boolean) | undefined, q: Query): Promise<void> {
  const r = store.resource;
  const timeout = q1(q, 'timeoutSeconds');
  const timeoutSeconds = timeout !== undefined && timeout !== '' ? Number(timeout) : deps.watchTimeoutSeconds;
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0) throw new ApiError('BadRequest', `invalid timeoutSeconds: ${timeout ?? ''}`);
  const rv = q1(q, 'resourceVersion');
  const bookmarks = qBool(q, 'allowWatchBookmarks');
  const wantsTable = deps.table?.wantsTable(req.headers.accept) ?? false;
  const table = deps.table;
  const eventLabels = { group: r.group, version: r.version, kind: r.kind };
  await serveWatch(req, reply, {
    open: (signal, onProgress) => store.watch(ns, { signal, onProgress, ...(rv !== undefined ? { resourceVersion: rv } : {}), ...(predicate ? { predicate } : {}) }),
    ...(wantsTable && table ? { encode: (ev: WatchEvent, first: boolean): WatchEvent => ({ type: ev.type, object: table.toTable(r, [ev.object], { ...tableOpts(q, undefined), noHeaders: !first }) as never }) } : {}),
    bookmark: (brv) => (bookmarks ? { type: 'BOOKMARK', object: { kind: r.kind, apiVersion: apiVersionOf(r), metadata: { resourceVersion: brv } } as never } : undefined),
    timeoutMs: (timeoutSeconds || deps.watchTimeoutSeconds) * 1000,
    clock: deps.clock,
    serverSignal: deps.serverSignal,
    onStart: () => deps.metrics.registeredWatchers.inc({ resource: r.resource }),
    onEnd: () => deps.metrics.registeredWatchers.dec({ resource: r.resource }),
    onEvent: () => deps.metrics.watchEvents.inc(eventLabels),
  });
}

