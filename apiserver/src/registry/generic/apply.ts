/**
 * Server-side apply, simplified from upstream's structured-merge-diff: every Apply manager's set
 * of fields is recorded in metadata.managedFields (FieldsV1). Applying a field another manager
 * owns with a different value is a conflict (409, upstream's message and causes) unless `force`,
 * which moves the field to the applier; the same value makes the ownership shared. A field the
 * manager applied before, that its new configuration omits and that no other manager owns, is
 * removed; then the configuration is merged over the live object. Maps are tracked field by
 * field; lists are atomic (owned and replaced whole, as a merge patch replaces them). Update
 * managers count when their entries exist, but updates do not record them yet.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError, applyMergePatch, type KubeObject, type StatusCause } from '@mk8s/api';

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

/** Leaf field paths of an applied configuration (identity and status are not owned). */
export function appliedFields(config: unknown): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, path: Path) => {
    if (isMap(v) && Object.keys(v).length > 0) {
      for (const [k, c] of Object.entries(v)) walk(c, [...path, k]);
    } else if (path.length > 0) {
      out.push(path);
    }
  };
  if (!isMap(config)) return out;
  for (const [k, v] of Object.entries(config)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'status') continue;
    if (k === 'metadata') {
      if (!isMap(v)) continue;
      for (const m of ['labels', 'annotations'] as const) if (v[m] !== undefined) walk(v[m], ['metadata', m]);
      continue;
    }
    walk(v, [k]);
  }
  return out;
}

/** Paths → upstream's FieldsV1 (`{"f:data":{"f:a":{}}}`). */
export function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of paths) {
    let node = root;
    for (const seg of p) {
      const k = `f:${seg}`;
      node = (node[k] ??= {}) as Record<string, unknown>;
    }
  }
  return root;
}

/** FieldsV1 → leaf paths (only `f:` members; `.`, `k:`, `v:`, `i:` entries are taken as owning their parent). */
export function fromFieldsV1(f: unknown): Path[] {
  const out: Path[] = [];
  const walk = (node: unknown, path: Path) => {
    const keys = isMap(node) ? Object.keys(node).filter((k) => k.startsWith('f:')) : [];
    if (keys.length === 0) { if (path.length > 0) out.push(path); return; }
    for (const k of keys) walk((node as Record<string, unknown>)[k], [...path, k.slice(2)]);
  };
  walk(f, []);
  return out;
}

/** Removes the field at path and the maps it leaves empty, unless keep(prefix) says the map is still wanted. */
function removePath(obj: Record<string, unknown>, path: Path, keep: (prefix: string) => boolean): void {
  const parents: Record<string, unknown>[] = [];
  let node: unknown = obj;
  for (const seg of path.slice(0, -1)) {
    if (!isMap(node)) return;
    parents.push(node);
    node = node[seg];
  }
  if (!isMap(node)) return;
  delete node[path[path.length - 1]!];
  for (let i = path.length - 2; i >= 0; i--) {
    const child = i === path.length - 2 ? node : parents[i + 1];
    if (!isMap(child) || Object.keys(child).length > 0 || keep(JSON.stringify(path.slice(0, i + 1)))) break;
    delete parents[i]![path[i]!];
  }
}

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
  const managed = ((live.metadata as unknown as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? []);
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
  const out = structuredClone(live) as Record<string, unknown>;
  for (const p of previous ? fromFieldsV1(previous.fieldsV1) : []) {
    const k = JSON.stringify(p);
    // Still applied (or applied deeper/shallower by someone): kept.
    if (owned.has(k) || prefixes.has(k) || [...owned].some((o) => k.startsWith(o.slice(0, -1) + ','))) continue;
    removePath(out, p, (prefix) => owned.has(prefix) || prefixes.has(prefix));
  }
  const merged = applyMergePatch(out, config) as KubeObject;
  const entry: ManagedFieldsEntry = { manager, operation: 'Apply', apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(newPaths) };
  (merged.metadata as unknown as { managedFields?: ManagedFieldsEntry[] }).managedFields = [...others, entry];
  return merged;
}

const startsWith = (p: Path, prefix: Path) => prefix.length <= p.length && prefix.every((s, i) => p[i] === s);

function valueAt(obj: unknown, path: Path): unknown {
  let v = obj;
  for (const seg of path) {
    if (!isMap(v)) return undefined;
    v = v[seg];
  }
  return v;
}

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
        if (p.length === q.length) return startsWith(p, q) && !isDeepStrictEqual(valueAt(live, p), valueAt(config, p));
        // The applier sets a field inside one the other owns whole (a scalar or list it would replace).
        if (startsWith(p, q)) return !isMap(valueAt(live, q)) && !isDeepStrictEqual(valueAt(live, p), valueAt(config, p));
        // The applier sets a whole value where the other owns a field inside (an empty map replaces nothing).
        if (startsWith(q, p)) {
          const mine = valueAt(config, p);
          return !(isMap(mine) && Object.keys(mine).length === 0) && !isDeepStrictEqual(valueAt(live, q), valueAt(config, q));
        }
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

const pathString = (p: Path) => p.map((s) => `.${s}`).join('');

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
  return new ApiError('Conflict', message, { details: { causes } });
}
