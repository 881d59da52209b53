/**
 * Server-side apply, simplified from upstream's structured-merge-diff: every Apply manager's set
 * of fields is recorded in metadata.managedFields (FieldsV1). Applying a field another manager
 * owns with a different value is a conflict (409, upstream's message and causes) unless `force`,
 * which moves the field to the applier; the same value makes the ownership shared. A field the
 * manager applied before, that its new configuration omits and that no other manager owns, is
 * removed; then the configuration is merged over the live object. Maps are tracked field by
 * field; lists with a merge key (containers by name, env by name, ports…: the kind's patch
 * schema) item by item (`k:{"name":"app"}`), set-like lists (finalizers) by value (`v:"x"`),
 * other lists are atomic. Non-apply writes of an applied object record their manager as an
 * Update entry owning what they changed (recordUpdate), so applies conflict with them too; the
 * fields of an object applied for the first time belong to "before-first-apply".
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError, applyStrategicMergePatch, field, invalidError, lookupKind, patchSchemaFor, type FieldError, type KubeObject, type PatchMeta, type PatchSchema, type StatusCause } from '@mk8s/api';

/** A field path as FieldsV1 segments: `f:<field>`, `k:<json key>` (list item by key), `v:<json value>` (set item). */
type Path = string[];
export interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Patch schemas of kinds served at run time (custom resources' x-kubernetes-list-type), by apiVersion/kind. */
const runtimeSchemas = new Map<string, PatchSchema>();

/** Makes server-side apply merge a run-time kind's lists by its keys; returns the undo. */
export function registerApplySchema(apiVersion: string, kind: string, schema: PatchSchema): () => void {
  const k = `${apiVersion}/${kind}`;
  runtimeSchemas.set(k, schema);
  return () => { if (runtimeSchemas.get(k) === schema) runtimeSchemas.delete(k); };
}

/** The patch schema of config's kind (merge keys of its lists); ObjectMeta's only for unknown kinds. */
function schemaOf(config: unknown): PatchSchema {
  const c = isMap(config) ? config : {};
  const own = runtimeSchemas.get(`${String(c['apiVersion'] ?? '')}/${String(c['kind'] ?? '')}`);
  if (own) return own;
  const r = lookupKind(String(c['apiVersion'] ?? ''), String(c['kind'] ?? ''));
  return patchSchemaFor(r ?? { group: '', resource: '' });
}

const keyedList = (meta: PatchMeta | undefined) => !!meta?.mergeKey && !!meta.strategy?.startsWith('merge');
const setList = (meta: PatchMeta | undefined) => !meta?.mergeKey && !!meta?.strategy?.startsWith('merge');
const itemKey = (item: unknown, key: string): string | undefined =>
  isMap(item) && item[key] !== undefined && item[key] !== null ? `k:${JSON.stringify({ [key]: item[key] })}` : undefined;

/**
 * Field paths of an applied configuration (identity and status are not owned): leaves, plus
 * every keyed list item itself (upstream's `.`), so an item outlives its fields.
 */
export function appliedFields(config: unknown, opts: { includeStatus?: boolean } = {}): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, path: Path, meta: PatchMeta | undefined) => {
    if (isMap(v) && Object.keys(v).length > 0) {
      for (const [k, c] of Object.entries(v)) walk(c, [...path, `f:${k}`], meta?.fields?.[k]);
    } else if (Array.isArray(v) && v.length > 0 && keyedList(meta)) {
      for (const item of v) {
        const seg = itemKey(item, meta!.mergeKey!);
        if (!seg) { out.push(path); return; } // an item without its key: the list is owned whole
        out.push([...path, seg]);
        for (const [k, c] of Object.entries(item as Record<string, unknown>)) walk(c, [...path, seg, `f:${k}`], meta?.fields?.[k]);
      }
    } else if (Array.isArray(v) && setList(meta)) {
      for (const item of v) out.push([...path, `v:${JSON.stringify(item)}`]);
    } else if (Array.isArray(v) && v.length === 0 && keyedList(meta)) {
      // An empty keyed list owns no items: nothing.
    } else if (path.length > 0) {
      out.push(path);
    }
  };
  if (!isMap(config)) return out;
  const schema = schemaOf(config);
  for (const [k, v] of Object.entries(config)) {
    if (k === 'apiVersion' || k === 'kind' || (k === 'status' && !opts.includeStatus)) continue;
    if (k === 'metadata') {
      if (!isMap(v)) continue;
      for (const m of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
        if (v[m] !== undefined) walk(v[m], ['f:metadata', `f:${m}`], schema['metadata']?.fields?.[m]);
      }
      continue;
    }
    walk(v, [`f:${k}`], schema[k]);
  }
  return out;
}

/** Paths → upstream's FieldsV1 (`{"f:data":{"f:a":{}}}`; a path that also has deeper ones gets `.`). */
export function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const leaves: Record<string, unknown>[] = [];
  for (const p of paths) {
    let node = root;
    for (const seg of p) node = (node[seg] ??= {}) as Record<string, unknown>;
    leaves.push(node);
  }
  for (const n of leaves) if (Object.keys(n).some((k) => k !== '.')) n['.'] = {};
  return sortedKeys(root);
}

/** Members in upstream's order (`.` first, then sorted), so equal sets serialize equally. */
function sortedKeys(node: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(node).sort()) out[k] = sortedKeys(node[k] as Record<string, unknown>);
  return out;
}

/** FieldsV1 → paths (a member without children, or one marked `.`, is a path). */
export function fromFieldsV1(f: unknown): Path[] {
  const out: Path[] = [];
  const walk = (node: unknown, path: Path) => {
    const keys = isMap(node) ? Object.keys(node).filter((k) => k !== '.') : [];
    if (path.length > 0 && (keys.length === 0 || (isMap(node) && node['.'] !== undefined))) out.push(path);
    for (const k of keys) walk((node as Record<string, unknown>)[k], [...path, k]);
  };
  walk(f, []);
  return out;
}

/** Where seg points inside container: the map key or the list index; undefined when absent. */
function locate(container: unknown, seg: string): string | number | undefined {
  if (seg.startsWith('f:')) return isMap(container) && Object.hasOwn(container, seg.slice(2)) ? seg.slice(2) : undefined;
  if (!Array.isArray(container)) return undefined;
  const want = JSON.parse(seg.slice(2)) as unknown;
  const i = seg.startsWith('k:')
    ? container.findIndex((item) => isMap(item) && Object.entries(want as Record<string, unknown>).every(([k, v]) => isDeepStrictEqual(item[k], v)))
    : container.findIndex((item) => isDeepStrictEqual(item, want));
  return i < 0 ? undefined : i;
}

function valueAt(obj: unknown, path: Path): unknown {
  let v = obj;
  for (const seg of path) {
    const at = locate(v, seg);
    if (at === undefined) return undefined;
    v = (v as Record<string | number, unknown>)[at];
  }
  return v;
}

/** Removes the field (or list item) at path and the maps/lists it leaves empty, unless keep(prefix) says they are still wanted. */
function removePath(obj: Record<string, unknown>, path: Path, keep: (prefix: string) => boolean): void {
  const chain: unknown[] = [obj];
  for (const seg of path.slice(0, -1)) {
    const parent = chain[chain.length - 1];
    const at = locate(parent, seg);
    if (at === undefined) return;
    chain.push((parent as Record<string | number, unknown>)[at]);
  }
  for (let i = path.length - 1; i >= 0; i--) {
    const parent = chain[i];
    const at = locate(parent, path[i]!);
    if (at === undefined) return;
    if (i < path.length - 1) {
      const child = (parent as Record<string | number, unknown>)[at];
      const empty = Array.isArray(child) ? child.length === 0 : isMap(child) && Object.keys(child).length === 0;
      if (!empty || keep(JSON.stringify(path.slice(0, i + 1)))) return;
    }
    if (Array.isArray(parent)) parent.splice(at as number, 1); else delete (parent as Record<string, unknown>)[at as string];
  }
}

/**
 * upstream ValidatePatchOptions: apply needs a fieldManager (kubectl defaults it to "kubectl",
 * controllers must set it), force is for apply only. Throws 422 Invalid PatchOptions.
 */
export function validatePatchOptions(o: { apply: boolean; fieldManager: string | undefined; force: string | undefined }): void {
  const errs: FieldError[] = [];
  if (!o.apply && o.force !== undefined) errs.push(field.forbidden('force', 'may not be specified for non-apply patch'));
  if (o.apply && !o.fieldManager) errs.push(field.required('fieldManager', 'is required for apply patch'));
  if (errs.length > 0) throw invalidError({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', errs);
}

/** upstream's owner of the fields an object had when it was first applied. */
export const BEFORE_FIRST_APPLY = 'before-first-apply';

/** Options of one apply request. */
export interface ApplyOptions {
  /** `?force=true`: take over conflicting fields from their managers instead of failing. @default false */
  force?: boolean;
}

/** One field another manager owns with a different value than the applied one. */
export interface ApplyConflict {
  manager: ManagedFieldsEntry;
  path: Path;
}

/**
 * Applies config for manager over live (a copy is returned). `apiVersion` and `now` are recorded
 * in the manager's managedFields entry. Throws a 409 Conflict ApiError listing every conflict
 * unless opts.force. Pure; safe to re-run on a newer live object.
 */
export function serverSideApply(live: KubeObject, config: KubeObject, manager: string, apiVersion: string, now: string, opts: ApplyOptions = {}): KubeObject {
  let applied: KubeObject;
  try {
    applied = applyOnce(live, config, manager, apiVersion, now, opts);
  } catch (err) {
    // kubectl's own server-side apply over an object last written by client-side apply (upstream
    // lastAppliedManager): conflicts on fields whose live value is still the last-applied one
    // are the migration from client-side to server-side apply, not conflicts: forced.
    const conflicts = err instanceof ApplyConflictError ? err.conflicts : undefined;
    if (!conflicts || manager !== KUBECTL_MANAGER) throw err;
    const allowed = fieldsMatchingLastApplied(live);
    const left = conflicts.filter((c) => !allowed.has(JSON.stringify(c.path)));
    if (left.length > 0) throw applyConflictError(left);
    applied = applyOnce(live, config, manager, apiVersion, now, { ...opts, force: true });
  }
  // upstream lastAppliedUpdater: kubectl's server-side apply keeps an existing client-side
  // last-applied annotation in step with what it applied, so a later client-side apply agrees.
  const annotations = (applied.metadata.annotations ?? {}) as Record<string, string>;
  if (manager === KUBECTL_MANAGER && annotations[LAST_APPLIED_ANNOTATION]) {
    applied.metadata.annotations = { ...annotations, [LAST_APPLIED_ANNOTATION]: buildLastApplied(config) };
  }
  return applied;
}

/** The field manager `kubectl apply --server-side` uses by default (the only one migrated, as upstream). */
export const KUBECTL_MANAGER = 'kubectl';
/** kubectl's client-side apply record. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The applied configuration as the annotation holds it: without the annotation, sorted keys, Go's trailing newline. */
function buildLastApplied(config: KubeObject): string {
  const c = structuredClone(config) as Record<string, unknown>;
  const meta = c['metadata'];
  if (isMap(meta) && isMap(meta['annotations'])) delete meta['annotations'][LAST_APPLIED_ANNOTATION];
  const sorted = (v: unknown): unknown => Array.isArray(v) ? v.map(sorted)
    : isMap(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
  return `${JSON.stringify(sorted(c))}\n`;
}

/** Paths of the last-applied configuration whose live value is still the applied one. */
function fieldsMatchingLastApplied(live: KubeObject): Set<string> {
  const text = live.metadata.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!text) return new Set();
  let last: unknown;
  try { last = JSON.parse(text); } catch { return new Set(); }
  return new Set(appliedFields(last).filter((p) => isItemMarker(p) || isDeepStrictEqual(valueAt(live, p), valueAt(last, p))).map((p) => JSON.stringify(p)));
}

function applyOnce(live: KubeObject, config: KubeObject, manager: string, apiVersion: string, now: string, opts: ApplyOptions): KubeObject {
  let managed = ((live.metadata as unknown as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? []);
  // An object nobody applied yet: what it holds belongs to upstream's "before-first-apply"
  // manager, so the first apply conflicts where it would change an existing value.
  if (managed.length === 0) {
    const existing = appliedFields(live);
    if (existing.length > 0) managed = [{ manager: BEFORE_FIRST_APPLY, operation: 'Update', apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(existing) }];
  }
  const isMine = (m: ManagedFieldsEntry) => m.manager === manager && m.operation === 'Apply' && !m.subresource;
  const previous = managed.find(isMine);
  let others = managed.filter((m) => !isMine(m));
  const newPaths = appliedFields(config);
  const conflicts = findConflicts(live, config, newPaths, others);
  if (conflicts.length > 0) {
    if (!opts.force) throw applyConflictError(conflicts);
    // Forced: the applier takes the fields over; managers left with nothing are dropped.
    others = others.flatMap((m) => {
      const lost = new Set(conflicts.filter((c) => c.manager === m).map((c) => JSON.stringify(c.path)));
      if (lost.size === 0) return [m];
      const kept = fromFieldsV1(m.fieldsV1).filter((p) => !lost.has(JSON.stringify(p)));
      return kept.length === 0 ? [] : [{ ...m, fieldsV1: toFieldsV1(kept) }];
    });
  }
  const owned = new Set<string>();
  const prefixes = new Set<string>();
  const addOwned = (p: Path) => {
    owned.add(JSON.stringify(p));
    for (let i = 1; i < p.length; i++) prefixes.add(JSON.stringify(p.slice(0, i)));
  };
  newPaths.forEach(addOwned);
  for (const m of others) fromFieldsV1(m.fieldsV1).forEach(addOwned);
  // Fields owned whole (not list items' markers, nor the `.` of a map an update created) keep everything inside them.
  const wholes = [...owned].filter((o) => {
    const p = JSON.parse(o) as Path;
    const v = valueAt(live, p);
    return !isItemMarker(p) && !(isMap(v) && Object.keys(v).length > 0);
  });
  const out = structuredClone(live) as Record<string, unknown>;
  for (const p of previous ? fromFieldsV1(previous.fieldsV1) : []) {
    const k = JSON.stringify(p);
    // Still applied (or applied deeper/shallower by someone): kept.
    if (owned.has(k) || prefixes.has(k) || wholes.some((o) => k.startsWith(o.slice(0, -1) + ','))) continue;
    removePath(out, p, (prefix) => owned.has(prefix) || prefixes.has(prefix));
  }
  // Keyed lists merge item by item (the kind's patch schema), as structured-merge-diff merges them.
  const merged = applyStrategicMergePatch(out, config, schemaOf(config)) as KubeObject;
  const entry: ManagedFieldsEntry = { manager, operation: 'Apply', apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(newPaths) };
  (merged.metadata as unknown as { managedFields?: ManagedFieldsEntry[] }).managedFields = [...others, entry];
  return merged;
}

/**
 * The managedFields after a non-apply write (PUT, merge/JSON/strategic patch) of an object that is
 * under server-side apply (has managedFields): manager (an Update entry, per subresource) takes
 * the fields the write set or changed, from whoever owned them, as upstream's updates do without
 * conflicts; fields it removed leave every set; managers left with nothing are dropped. Returns
 * undefined when prev has no managedFields (objects never applied are not tracked) or nothing changed.
 */
export function recordUpdate(prev: KubeObject, next: KubeObject, manager: string, apiVersion: string, now: string, subresource = ''): ManagedFieldsEntry[] | undefined {
  const managed = (prev.metadata as unknown as { managedFields?: ManagedFieldsEntry[] }).managedFields;
  if (!managed?.length) return undefined;
  // A status write owns the status fields it changed (upstream: managers per subresource).
  const scope = { includeStatus: subresource === 'status' };
  const nextPaths = appliedFields(next, scope);
  const changed = nextPaths.filter((p) => isItemMarker(p)
    ? valueAt(prev, p) === undefined
    : !isDeepStrictEqual(valueAt(prev, p), valueAt(next, p)));
  const removed = appliedFields(prev, scope).filter((p) => valueAt(next, p) === undefined);
  if (changed.length === 0 && removed.length === 0) return undefined;
  withMapMarkers(changed, next, prev);
  const taken = [...changed, ...removed];
  const lost = (p: Path) => taken.some((t) => startsWith(p, t));
  const isMine = (m: ManagedFieldsEntry) => m.manager === manager && m.operation === 'Update' && (m.subresource ?? '') === subresource;
  const out = managed.flatMap((m) => {
    if (isMine(m)) return [];
    const all = fromFieldsV1(m.fieldsV1);
    const kept = all.filter((p) => !lost(p));
    return kept.length === 0 ? [] : kept.length === all.length ? [m] : [{ ...m, fieldsV1: toFieldsV1(kept) }];
  });
  const mine = managed.find(isMine);
  const paths = [...(mine ? fromFieldsV1(mine.fieldsV1).filter((p) => !removed.some((t) => startsWith(p, t))) : []), ...changed];
  const unique = [...new Map(paths.map((p) => [JSON.stringify(p), p])).values()];
  if (unique.length > 0) {
    out.push({ manager, operation: 'Update', apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(unique), ...(subresource ? { subresource } : {}) });
  }
  return out;
}

/**
 * Update entries own the maps they created (`.` in FieldsV1: `f:labels: {.: {}, f:app: {}}`), as
 * upstream's Update operations do for Go maps and pointers; approximated here as maps of
 * scalars (labels, annotations, data, matchLabels, limits, rollingUpdate). Adds those map paths
 * to paths (in place) where prev did not have the map.
 */
function withMapMarkers(paths: Path[], obj: unknown, prev: unknown): Path[] {
  const seen = new Set(paths.map((p) => JSON.stringify(p)));
  for (const p of [...paths]) {
    for (let i = 1; i < p.length; i++) {
      const prefix = p.slice(0, i);
      if (!prefix[i - 1]!.startsWith('f:') || seen.has(JSON.stringify(prefix))) continue;
      const v = valueAt(obj, prefix);
      if (!isMap(v) || Object.keys(v).length === 0 || Object.values(v).some((x) => typeof x === 'object' && x !== null)) continue;
      if (prev !== undefined && valueAt(prev, prefix) !== undefined) continue;
      seen.add(JSON.stringify(prefix));
      paths.push(prefix);
    }
  }
  return paths;
}

const startsWith = (p: Path, prefix: Path) => prefix.length <= p.length && prefix.every((s, i) => p[i] === s);

const changesNothing = (v: unknown) => (isMap(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0);

/** A keyed list item's own path (upstream's `.`): shared, never compared by value. */
const isItemMarker = (p: Path) => p[p.length - 1]!.startsWith('k:');

/**
 * The fields of others that applying config would change. An owned field conflicts when the
 * applier sets it (or a field inside it, or a whole value above it) to something else than what
 * is live; setting the live value shares the ownership instead (structured-merge-diff).
 */
export function findConflicts(live: KubeObject, config: KubeObject, applied: Path[], others: ManagedFieldsEntry[]): ApplyConflict[] {
  const out: ApplyConflict[] = [];
  for (const m of others) {
    for (const q of fromFieldsV1(m.fieldsV1)) {
      const hit = applied.some((p) => {
        // A list item's marker, or an empty map/list applied as a leaf, changes no value.
        if (isItemMarker(p) || changesNothing(valueAt(config, p))) return false;
        if (p.length === q.length) return startsWith(p, q) && !isDeepStrictEqual(valueAt(live, p), valueAt(config, p));
        // The applier sets a field inside one the other owns whole (a scalar or list it would replace).
        if (startsWith(p, q)) return !isMap(valueAt(live, q)) && !isDeepStrictEqual(valueAt(live, p), valueAt(config, p));
        // The applier sets a whole value where the other owns a field inside.
        if (startsWith(q, p)) return !isDeepStrictEqual(valueAt(live, q), valueAt(config, q));
        return false;
      });
      if (hit) out.push({ manager: m, path: q });
    }
  }
  return out;
}

/** upstream printManager: Apply managers by name, Update managers with their version and time. */
function printManager(m: ManagedFieldsEntry): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') s += m.time ? ` using ${m.apiVersion ?? ''} at ${m.time}` : ` using ${m.apiVersion ?? ''}`;
  return s;
}

/** upstream fieldpath.Path.String(): `.spec.containers[name="app"].image`, `.metadata.finalizers[="x"]`. */
function pathString(p: Path): string {
  return p.map((seg) => {
    if (seg.startsWith('f:')) return `.${seg.slice(2)}`;
    if (seg.startsWith('v:')) return `[=${seg.slice(2)}]`;
    const key = JSON.parse(seg.slice(2)) as Record<string, unknown>;
    return `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
  }).join('');
}

/** The 409 upstream's field manager answers (fieldmanager/internal/conflict.go): message and one cause per field. */
export function applyConflictError(conflicts: ApplyConflict[]): ApiError {
  const causes: StatusCause[] = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const k = printManager(c.manager);
      byManager.set(k, [...(byManager.get(k) ?? []), pathString(c.path)]);
    }
    const lines: string[] = [];
    for (const k of [...byManager.keys()].sort()) lines.push(`conflicts with ${k}:`, ...byManager.get(k)!.map((p) => `- ${p}`));
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApplyConflictError(message, causes, conflicts);
}

/** The 409 of an apply, carrying its conflicts (for kubectl's client-side migration). */
class ApplyConflictError extends ApiError {
  constructor(message: string, causes: StatusCause[], readonly conflicts: ApplyConflict[]) { super('Conflict', message, { details: { causes } }); }
}

/**
 * The managedFields of an object being created by a non-apply write (POST, or PUT creating):
 * one Update entry for manager owning every field the object sets (upstream's field manager
 * tracks creates: DefaultTrackOnCreateProbability = 1). Identity and status are not owned.
 */
export function managedFieldsForCreate(obj: KubeObject, manager: string, apiVersion: string, now: string, subresource = ''): ManagedFieldsEntry[] {
  const paths = withMapMarkers(appliedFields(obj), obj, undefined);
  if (paths.length === 0) return [];
  return [{ manager, operation: 'Update', apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(paths), ...(subresource ? { subresource } : {}) }];
}

/** Longest field manager name (apimachinery FieldManagerMaxLength). */
const FIELD_MANAGER_MAX_LENGTH = 128;

/**
 * upstream managerOrUserAgent's fallback: the user agent before its first '/', printable
 * characters only, at most 128 bytes ("kubectl/v1.32.0 (linux/amd64) …" → "kubectl",
 * "OpenAPI-Generator/31.0.0/python" → "OpenAPI-Generator").
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const head = (userAgent ?? '').split('/')[0]!;
  let out = '';
  for (const ch of head) {
    // Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
    if (ch !== ' ' && !/^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) continue;
    if (Buffer.byteLength(out + ch) > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
  }
  return out;
}
