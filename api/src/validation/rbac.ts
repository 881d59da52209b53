/**
 * rbac.authorization.k8s.io/v1 validation (Role, ClusterRole, RoleBinding, ClusterRoleBinding),
 * as upstream's pkg/apis/rbac/validation. RBAC names only need to be path segments, so
 * `system:node` and `system:controller:...` are valid.
 */
import { child, GoRepr, goQuote, index as idx, invalid, notSupported, required, type FieldError } from './field.js';
import { isDNS1123Subdomain } from './names.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map((x) => (isObj(x) ? x : {})) : []);
const len = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** ValidateRBACName: a path segment (validateObjectMeta already enforces that); nothing more. */
export const rbacName = (): string[] => [];

function validatePolicyRules(obj: unknown, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  arr((obj as Obj)?.rules).forEach((r, i) => {
    const p = idx('rules', i);
    if (len(r.verbs) === 0) errs.push(required(child(p, 'verbs'), 'verbs must contain at least one value'));
    if (len(r.nonResourceURLs) > 0) {
      if (namespaced) errs.push(invalid(child(p, 'nonResourceURLs'), r.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
      if (len(r.apiGroups) > 0 || len(r.resources) > 0 || len(r.resourceNames) > 0) {
        errs.push(invalid(child(p, 'nonResourceURLs'), r.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (len(r.apiGroups) === 0) errs.push(required(child(p, 'apiGroups'), 'resource rules must supply at least one api group'));
    if (len(r.resources) === 0) errs.push(required(child(p, 'resources'), 'resource rules must supply at least one resource'));
  });
  return errs;
}

export const validateRole = (obj: unknown): FieldError[] => validatePolicyRules(obj, true);
export const validateClusterRole = (obj: unknown): FieldError[] =>
  isObj((obj as Obj)?.aggregationRule) ? [] : validatePolicyRules(obj, false);

function validateSubjects(obj: unknown, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  arr((obj as Obj)?.subjects).forEach((s, i) => {
    const p = idx('subjects', i);
    if (!s.name) errs.push(required(child(p, 'name'), ''));
    switch (s.kind) {
      case 'ServiceAccount':
        if (s.name) for (const m of isDNS1123Subdomain(String(s.name))) errs.push(invalid(child(p, 'name'), s.name, m));
        if (s.apiGroup) errs.push(notSupported(child(p, 'apiGroup'), s.apiGroup, ['']));
        if (!namespaced && !s.namespace) errs.push(required(child(p, 'namespace'), ''));
        break;
      case 'User': case 'Group':
        if (s.apiGroup !== RBAC_GROUP) errs.push(notSupported(child(p, 'apiGroup'), s.apiGroup ?? '', [RBAC_GROUP]));
        break;
      default:
        errs.push(notSupported(child(p, 'kind'), s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  });
  return errs;
}

function validateRoleRef(obj: unknown, kinds: string[]): FieldError[] {
  const errs: FieldError[] = [];
  const ref: Obj = isObj((obj as Obj)?.roleRef) ? (obj as Obj).roleRef : {};
  if (ref.apiGroup !== RBAC_GROUP) errs.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  if (!kinds.includes(ref.kind)) errs.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(required('roleRef.name', ''));
  return errs;
}

export const validateRoleBinding = (obj: unknown): FieldError[] => [...validateRoleRef(obj, ['Role', 'ClusterRole']), ...validateSubjects(obj, true)];
export const validateClusterRoleBinding = (obj: unknown): FieldError[] => [...validateRoleRef(obj, ['ClusterRole']), ...validateSubjects(obj, false)];

/** ValidateRoleBindingUpdate / ClusterRoleBinding: roleRef is fixed. */
export function validateRoleRefUpdate(next: unknown, prev: unknown): FieldError[] {
  const n: Obj = isObj((next as Obj)?.roleRef) ? (next as Obj).roleRef : {};
  const o: Obj = isObj((prev as Obj)?.roleRef) ? (prev as Obj).roleRef : {};
  if (n.apiGroup === o.apiGroup && n.kind === o.kind && n.name === o.name) return [];
  const repr = new GoRepr(`rbac.RoleRef{APIGroup:${goQuote(String(n.apiGroup ?? ''))}, Kind:${goQuote(String(n.kind ?? ''))}, Name:${goQuote(String(n.name ?? ''))}}`);
  return [invalid('roleRef', repr, 'cannot change roleRef')];
}
