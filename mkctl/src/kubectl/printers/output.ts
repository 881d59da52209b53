/**
 * kubectl's -o printers for whole objects: yaml and json (keys sorted, as sigs.k8s.io/yaml and
 * Go's map marshalling produce), name (`kind.group/name`) and jsonpath.
 */
import yaml from 'js-yaml';
import type { KubeObject } from '@mk8s/api';
import { CliError } from '../context.js';
import { descriptorForObject, kindPrefix } from '../resources.js';
import { jsonpath } from './jsonpath.js';
import { tabwrite } from './tabwriter.js';

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) o[k] = sortKeys((v as Record<string, unknown>)[k]);
    return o;
  }
  return v;
}

export function toYaml(obj: unknown): string {
  return yaml.dump(sortKeys(obj), { noArrayIndent: true, lineWidth: -1, noRefs: true, quotingType: '"' });
}

export function toJson(obj: unknown): string {
  return `${JSON.stringify(sortKeys(obj), null, 4)}\n`;
}

/** A List wrapping several objects, as kubectl prints them for -o yaml|json. */
export function asList(items: unknown[]): unknown {
  return { apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } };
}

export function nameOf(obj: KubeObject): string {
  const r = descriptorForObject(obj.apiVersion, obj.kind);
  const prefix = r ? kindPrefix(r) : (obj.kind ?? '').toLowerCase();
  return `${prefix}/${obj.metadata?.name ?? ''}`;
}

export type OutputFormat = { kind: 'table'; wide: boolean } | { kind: 'yaml' } | { kind: 'json' } | { kind: 'name' } | { kind: 'jsonpath'; template: string } | { kind: 'custom-columns'; spec: string };

/** Parses -o. */
export function parseOutput(o: string | undefined): OutputFormat {
  if (!o) return { kind: 'table', wide: false };
  if (o === 'wide') return { kind: 'table', wide: true };
  if (o === 'yaml' || o === 'json' || o === 'name') return { kind: o };
  const m = /^(jsonpath|custom-columns)=(.*)$/s.exec(o);
  if (m) return m[1] === 'jsonpath' ? { kind: 'jsonpath', template: m[2]! } : { kind: 'custom-columns', spec: m[2]! };
  throw new CliError(`error: unable to match a printer suitable for the output format "${o}", allowed formats are: custom-columns,json,jsonpath,name,wide,yaml`);
}

/**
 * Prints full objects in a non-table format. `single` = the user named exactly one object
 * (then yaml/json print the object, not a List).
 */
export function printObjects(objs: KubeObject[], fmt: OutputFormat, single: boolean): string {
  switch (fmt.kind) {
    case 'yaml': return toYaml(single && objs.length === 1 ? objs[0] : asList(objs));
    case 'json': return toJson(single && objs.length === 1 ? objs[0] : asList(objs));
    case 'name': return objs.map((o) => `${nameOf(o)}\n`).join('');
    case 'jsonpath': return jsonpath(fmt.template, single && objs.length === 1 ? objs[0] : asList(objs));
    case 'custom-columns': return customColumns(fmt.spec, objs);
    default: throw new Error('table output is printed by the table printer');
  }
}

function customColumns(spec: string, objs: KubeObject[]): string {
  const cols = spec.split(',').map((c) => {
    const i = c.indexOf(':');
    if (i < 0) throw new CliError(`error: expected <header>:<json-path-expr>, got ${c}`);
    return { header: c.slice(0, i), path: c.slice(i + 1) };
  });
  const lines = [cols.map((c) => c.header).join('\t')];
  for (const o of objs) {
    lines.push(cols.map((c) => {
      const p = c.path.startsWith('{') ? c.path : `{${c.path.startsWith('.') ? '' : '.'}${c.path}}`;
      const v = jsonpath(p, o, { allowMissing: true });
      return v === '' ? '<none>' : v;
    }).join('\t'));
  }
  return tabwrite(`${lines.join('\n')}\n`);
}
