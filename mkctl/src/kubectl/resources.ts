/**
 * Resolving what a user types (`po`, `pods`, `deploy/web`, `deployment.apps`, `po,svc`, `all`)
 * to served resources, as kubectl's RESTMapper does with discovery (our scheme is the same list
 * the apiserver's discovery serves).
 */
import { RESOURCES, apiVersionOf, type ResourceDescriptor } from '@mk8s/api';
import { CliError } from './context.js';

/** `get all`: the "all" category, in kubectl's order. */
export const ALL_CATEGORY = ['pods', 'services', 'daemonsets', 'deployments', 'replicasets', 'statefulsets'];

/** Resolves one resource word; throws kubectl's "doesn't have a resource type" error. */
export function resolveResource(word: string): ResourceDescriptor {
  const w = word.toLowerCase();
  const [name, ...groupParts] = w.split('.');
  const group = groupParts.join('.');
  const matches = RESOURCES.filter((r) =>
    (r.resource === name || r.singular === name || r.kind.toLowerCase() === name || r.shortNames.includes(name!)) &&
    (!group || r.group === group || r.group.startsWith(`${group}.`) || `${r.version}.${r.group}` === group));
  // Prefer the core group for ambiguous short words, as the RESTMapper's priority does.
  const r = matches.find((m) => m.group === '') ?? matches[0];
  if (!r) throw new CliError(`error: the server doesn't have a resource type "${word}"`);
  return r;
}

/** kubectl's `kind.group/name` as used by -o name and multi-kind tables. */
export function kindPrefix(r: ResourceDescriptor): string {
  return r.group ? `${r.kind.toLowerCase()}.${r.group}` : r.kind.toLowerCase();
}

export interface ResourceRef { resource: ResourceDescriptor; names: string[] }

/**
 * Parses the positional args of get/describe/delete/...: `TYPE[,TYPE...] [NAME...]` or
 * `TYPE/NAME...`. Returns the groups in the order typed (names empty = all of that type).
 */
export function parseResourceArgs(args: string[]): ResourceRef[] {
  if (args.length === 0) return [];
  if (args.some((a) => a.includes('/'))) {
    const out: ResourceRef[] = [];
    for (const a of args) {
      const i = a.indexOf('/');
      if (i < 0) throw new CliError(`error: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'mkctl get resource/<resource_name>' instead of 'mkctl get resource resource/<resource_name>'`);
      const r = resolveResource(a.slice(0, i));
      const name = a.slice(i + 1);
      if (!name) throw new CliError(`error: arguments in resource/name form must have a single resource and name`);
      const prev = out.find((x) => x.resource === r);
      if (prev) prev.names.push(name); else out.push({ resource: r, names: [name] });
    }
    return out;
  }
  const [types, ...names] = args;
  const words = types!.split(',').filter(Boolean).flatMap((t) => (t.toLowerCase() === 'all' ? ALL_CATEGORY : [t]));
  const seen = new Set<ResourceDescriptor>();
  const out: ResourceRef[] = [];
  for (const w of words) {
    const r = resolveResource(w);
    if (seen.has(r)) continue;
    seen.add(r);
    out.push({ resource: r, names: [...names] });
  }
  if (names.length && out.length > 1) throw new CliError('error: you must specify only one resource type when getting objects by name');
  return out;
}

export function descriptorForObject(apiVersion: string | undefined, kind: string | undefined): ResourceDescriptor | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}
