/**
 * --admission-control-config-file: an apiserver.config.k8s.io/v1 AdmissionConfiguration. Only the
 * PodSecurity plugin's PodSecurityConfiguration (pod-security.admission.config.k8s.io/v1) is read:
 * its defaults (the levels of namespaces without labels) and exemptions (usernames, namespaces,
 * runtimeClasses), inline under `configuration` or in the file named by `path`.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import yaml from 'js-yaml';
import type { PodSecurityDefaults, PodSecurityExemptions } from './pod-security.js';

export interface AdmissionConfiguration {
  podSecurity?: { defaults: PodSecurityDefaults; exemptions: PodSecurityExemptions };
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? v as Obj : {});
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** Parses the file; throws with the file name on anything malformed (the server refuses to start, as upstream). */
export function loadAdmissionConfig(file: string): AdmissionConfiguration {
  const doc = obj(yaml.load(readFileSync(file, 'utf8')));
  if (doc['kind'] !== 'AdmissionConfiguration') throw new Error(`${file}: kind must be AdmissionConfiguration`);
  const out: AdmissionConfiguration = {};
  for (const p of Array.isArray(doc['plugins']) ? doc['plugins'] as unknown[] : []) {
    const plugin = obj(p);
    if (plugin['name'] !== 'PodSecurity') continue;
    let cfg = obj(plugin['configuration']);
    if (typeof plugin['path'] === 'string') {
      const path = isAbsolute(plugin['path']) ? plugin['path'] : join(dirname(file), plugin['path']);
      cfg = obj(yaml.load(readFileSync(path, 'utf8')));
    }
    if (cfg['kind'] !== undefined && cfg['kind'] !== 'PodSecurityConfiguration') throw new Error(`${file}: PodSecurity configuration must be a PodSecurityConfiguration`);
    const d = obj(cfg['defaults']); const e = obj(cfg['exemptions']);
    const defaults: PodSecurityDefaults = {};
    for (const k of ['enforce', 'enforce-version', 'audit', 'audit-version', 'warn', 'warn-version'] as const) {
      if (typeof d[k] === 'string') defaults[k] = d[k];
    }
    out.podSecurity = {
      defaults,
      exemptions: { usernames: strings(e['usernames']), namespaces: strings(e['namespaces']), runtimeClasses: strings(e['runtimeClasses']) },
    };
  }
  return out;
}
