/**
 * Server-side apply, simplified from upstream's structured-merge-diff: every Apply manager's set
 * of fields is recorded in metadata.managedFields (FieldsV1); a field the manager applied before,
 * that its new configuration omits and that no other Apply manager owns, is removed; then the
 * configuration is merged over the live object. Maps are tracked field by field; lists are atomic
 * (owned and replaced whole, as a merge patch replaces them). Update managers are not tracked.
 */
import { applyMergePatch, type KubeObject } from '@mk8s/api';

type Path = string[];
interface ManagedFieldsEntry {
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

/**
 * Applies config for manager over live (a copy is returned). `apiVersion` and `now` are recorded
 * in the manager's managedFields entry.
 */
export function serverSideApply(live: KubeObject, config: KubeObject, manager: string, apiVersion: string, now: string): KubeObject {
  const managed = ((live.metadata as unknown as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? []);
  const isMine = (m: ManagedFieldsEntry) => m.manager === manager && m.operation === 'Apply' && !m.subresource;
  const previous = managed.find(isMine);
  const others = managed.filter((m) => !isMine(m));
  const newPaths = appliedFields(config);
  const owned = new Set<string>();
  const prefixes = new Set<string>();
  const addOwned = (p: Path) => {
    owned.add(JSON.stringify(p));
    for (let i = 1; i < p.length; i++) prefixes.add(JSON.stringify(p.slice(0, i)));
  };
  newPaths.forEach(addOwned);
  for (const m of others) if (m.operation === 'Apply') fromFieldsV1(m.fieldsV1).forEach(addOwned);
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
