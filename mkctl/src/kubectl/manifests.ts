/**
 * Reading manifests for -f: files, folders (their .yaml/.yml/.json files, sorted), `-` (stdin),
 * multi-document YAML and `kind: List`. A YAML error names the file, line and column.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { KubeObject } from '@mk8s/api';
import { CliError } from './context.js';

export interface Manifest { source: string; object: KubeObject }

function filesOf(path: string, recursive: boolean): string[] {
  let st;
  try { st = statSync(path); } catch { throw new CliError(`error: the path "${path}" does not exist`); }
  if (!st.isDirectory()) return [path];
  const out: string[] = [];
  for (const e of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(path, e.name);
    if (e.isDirectory()) { if (recursive) out.push(...filesOf(p, true)); } else if (/\.(ya?ml|json)$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Parses manifest text; `source` names the file in errors. */
export function parseManifests(text: string, source: string): Manifest[] {
  let docs: unknown[];
  try { docs = yaml.loadAll(text); } catch (e) {
    if (e instanceof yaml.YAMLException) {
      const m = e.mark;
      throw new CliError(`error: error parsing ${source}: line ${m.line + 1}, column ${m.column + 1}: ${e.reason}`);
    }
    throw e;
  }
  const out: Manifest[] = [];
  for (const d of docs) {
    if (d === null || d === undefined) continue;
    if (typeof d !== 'object' || Array.isArray(d)) throw new CliError(`error: error parsing ${source}: a manifest must be a mapping (apiVersion, kind, metadata, ...)`);
    const o = d as KubeObject & { items?: KubeObject[] };
    if (!o.kind) throw new CliError(`error: error validating "${source}": error validating data: kind not set`);
    if (!o.apiVersion) throw new CliError(`error: error validating "${source}": error validating data: apiVersion not set`);
    if (o.kind.endsWith('List') && Array.isArray(o.items)) for (const it of o.items) out.push({ source, object: it });
    else out.push({ source, object: o });
  }
  return out;
}

/** Reads every -f argument in order. */
export function readManifests(paths: string[], o: { recursive?: boolean; stdin?: () => string } = {}): Manifest[] {
  const out: Manifest[] = [];
  for (const p of paths) {
    if (p === '-') { out.push(...parseManifests(o.stdin ? o.stdin() : readFileSync(0, 'utf8'), 'STDIN')); continue; }
    const files = filesOf(p, !!o.recursive);
    for (const f of files) out.push(...parseManifests(readFileSync(f, 'utf8'), f));
  }
  if (!out.length) throw new CliError('error: no objects passed to apply');
  return out;
}
