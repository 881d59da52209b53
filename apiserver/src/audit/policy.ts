/**
 * Audit policy (audit.k8s.io/v1 Policy; upstream apiserver/pkg/audit/policy/checker.go): the first
 * rule that matches a request gives its level (None, Metadata, Request, RequestResponse) and the
 * stages to omit (the rule's plus the policy's). No rule matches: None. The user matched is the
 * authenticated one (upstream evaluates the policy before impersonation).
 */
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type AuditLevel = typeof LEVELS[number];
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type AuditStage = typeof STAGES[number];

export interface GroupResources { group?: string; resources?: string[]; resourceNames?: string[] }
export interface PolicyRule {
  level: AuditLevel;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: AuditStage[];
}
export interface AuditPolicy { rules: PolicyRule[]; omitStages?: AuditStage[] }

/** What the policy looks at (authorizer.Attributes as audit sees them). */
export interface AuditAttributes {
  user?: { username: string; groups: readonly string[] } | undefined;
  verb: string;
  resourceRequest: boolean;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path?: string;
}

export interface LevelAndStages { level: AuditLevel; omitStages: AuditStage[] }

/** Parses a Policy file's text (YAML or JSON); throws on what upstream's validation refuses. */
export function parseAuditPolicy(text: string): AuditPolicy {
  const doc = yaml.load(text) as { kind?: string; apiVersion?: string; rules?: unknown[]; omitStages?: unknown[] } | undefined;
  if (!doc || doc.kind !== 'Policy') throw new Error('audit policy: kind must be Policy');
  if (doc.apiVersion && doc.apiVersion !== 'audit.k8s.io/v1') throw new Error(`audit policy: apiVersion ${doc.apiVersion} is not audit.k8s.io/v1`);
  const stages = (v: unknown, where: string): AuditStage[] => {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw new Error(`audit policy: ${where}.omitStages must be a list`);
    for (const s of v) if (!(STAGES as readonly unknown[]).includes(s)) throw new Error(`audit policy: ${where}.omitStages: unknown stage "${String(s)}"`);
    return v as AuditStage[];
  };
  const rules = (doc.rules ?? []).map((raw, i) => {
    const r = raw as PolicyRule;
    if (!(LEVELS as readonly unknown[]).includes(r.level)) throw new Error(`audit policy: rules[${i}].level: unknown level "${String(r.level)}"`);
    if (r.nonResourceURLs?.length && (r.resources?.length || r.namespaces?.length)) {
      throw new Error(`audit policy: rules[${i}]: rules cannot apply to both regular resources and non-resource URLs`);
    }
    for (const u of r.nonResourceURLs ?? []) {
      if (!u.startsWith('/') && u !== '*') throw new Error(`audit policy: rules[${i}].nonResourceURLs: "${u}" must start with /`);
      if (u.indexOf('*') >= 0 && u.indexOf('*') !== u.length - 1) throw new Error(`audit policy: rules[${i}].nonResourceURLs: "${u}": * only at the end`);
    }
    return { ...r, omitStages: stages(r.omitStages, `rules[${i}]`) };
  });
  return { rules, omitStages: stages(doc.omitStages, 'policy') };
}

export function loadAuditPolicy(path: string): AuditPolicy { return parseAuditPolicy(readFileSync(path, 'utf8')); }

/** The level and omitted stages of one request. */
export function evaluatePolicy(policy: AuditPolicy, a: AuditAttributes): LevelAndStages {
  for (const r of policy.rules) {
    if (ruleMatches(r, a)) return { level: r.level, omitStages: union(policy.omitStages ?? [], r.omitStages ?? []) };
  }
  return { level: 'None', omitStages: policy.omitStages ?? [] };
}

const union = (a: AuditStage[], b: AuditStage[]) => (b.length === 0 ? a : a.length === 0 ? b : [...new Set([...a, ...b])]);

export function ruleMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (r.users?.length && (!a.user || !r.users.includes(a.user.username))) return false;
  if (r.userGroups?.length && (!a.user || !a.user.groups.some((g) => r.userGroups!.includes(g)))) return false;
  if (r.verbs?.length && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces?.length || r.resources?.length) return ruleMatchesResource(r, a);
  if (r.nonResourceURLs?.length) return ruleMatchesNonResource(r, a);
  return true;
}

function ruleMatchesNonResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (a.resourceRequest) return false;
  const path = a.path ?? '';
  return r.nonResourceURLs!.some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

function ruleMatchesResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (!a.resourceRequest) return false;
  // Non-namespaced resources (and all-namespace requests) match the namespace "".
  if (r.namespaces?.length && !r.namespaces.includes(a.namespace ?? '')) return false;
  if (!r.resources?.length) return true;
  const resource = a.resource ?? '';
  const sub = a.subresource ?? '';
  const combined = sub ? `${resource}/${sub}` : resource;
  for (const gr of r.resources) {
    if ((gr.group ?? '') !== (a.apiGroup ?? '')) continue;
    if (!gr.resources?.length) return true;
    if (gr.resourceNames?.length && !gr.resourceNames.includes(a.name ?? '')) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (sub && res.startsWith('*/') && res.slice(2) === sub) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === resource) return true;
    }
  }
  return false;
}
