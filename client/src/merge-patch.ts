/** Patch application used by the fake clientset (the apiserver has its own). */

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** RFC 7386 JSON merge patch: null deletes, objects merge recursively, everything else replaces. */
export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}

/**
 * A small strategic merge patch: like merge patch, but lists of objects that all carry `name`
 * merge by name (as containers, ports, env and conditions-by-type do upstream), and
 * `$patch: delete` removes a named entry. No $setElementOrder/$retainKeys directives.
 */
export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    const cur = out[k];
    if (v === null) delete out[k];
    else if (Array.isArray(v) && Array.isArray(cur) && mergeKeyOf(v) && mergeKeyOf(cur)) out[k] = mergeList(cur, v, mergeKeyOf(v)!);
    else if (isObj(v)) out[k] = strategicMergePatch(cur, v);
    else out[k] = structuredClone(v);
  }
  return out;
}

function mergeKeyOf(list: unknown[]): string | undefined {
  if (list.length === 0) return undefined;
  for (const key of ['name', 'type', 'containerPort', 'ip']) if (list.every((x) => isObj(x) && x[key] !== undefined)) return key;
  return undefined;
}

function mergeList(cur: unknown[], patch: unknown[], key: string): unknown[] {
  const out = [...cur] as Record<string, unknown>[];
  for (const p of patch as Record<string, unknown>[]) {
    const i = out.findIndex((x) => x[key] === p[key]);
    if (p['$patch'] === 'delete') { if (i >= 0) out.splice(i, 1); continue; }
    if (i >= 0) out[i] = strategicMergePatch(out[i], p) as Record<string, unknown>;
    else out.push(strategicMergePatch({}, p) as Record<string, unknown>);
  }
  return out;
}
