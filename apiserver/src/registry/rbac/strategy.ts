/**
 * RBAC resources (rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding, ClusterRoleBinding):
 * upstream's pkg/registry/rbac strategies and pkg/apis/rbac/validation. Escalation prevention is
 * an admission plugin (admission/plugins/rbac-escalation.ts) because it needs the authorizer.
 */
import { ClusterRoleBindings, ClusterRoles, RoleBindings, Roles, field, type FieldError, type KubeObject } from '@mk8s/api';
import type { RestStrategy } from '../generic/strategy.js';

type Obj = Record<string, unknown>;
const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'];
const ROLE_REF_KINDS = { namespaced: ['Role', 'ClusterRole'], cluster: ['ClusterRole'] };

/** Validation of PolicyRules (pkg/apis/rbac/validation ValidatePolicyRule). */
export function validateRules(rules: unknown, isNamespaced: boolean, path = 'rules'): FieldError[] {
  const errs: FieldError[] = [];
  if (rules === undefined || rules === null) return errs;
  if (!Array.isArray(rules)) return [field.invalid(path, rules, 'must be a list')];
  rules.forEach((r: unknown, i) => {
    const p = field.index(path, i);
    const rule = (r ?? {}) as Obj;
    const arr = (k: string) => (Array.isArray(rule[k]) ? rule[k] as unknown[] : []);
    if (arr('verbs').length === 0) errs.push(field.required(field.child(p, 'verbs'), 'verbs must contain at least one value'));
    if (arr('nonResourceURLs').length > 0) {
      if (isNamespaced) errs.push(field.invalid(field.child(p, 'nonResourceURLs'), rule['nonResourceURLs'], 'namespaced rules cannot apply to non-resource URLs'));
      if (arr('apiGroups').length > 0 || arr('resources').length > 0 || arr('resourceNames').length > 0) {
        errs.push(field.invalid(field.child(p, 'nonResourceURLs'), rule['nonResourceURLs'], 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (arr('apiGroups').length === 0) errs.push(field.required(field.child(p, 'apiGroups'), 'resource rules must supply at least one api group'));
    if (arr('resources').length === 0) errs.push(field.required(field.child(p, 'resources'), 'resource rules must supply at least one resource'));
  });
  return errs;
}

function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = obj['roleRef'] as Obj | undefined;
  if (!ref || typeof ref !== 'object') errs.push(field.required('roleRef', ''));
  else {
    if (ref['apiGroup'] !== 'rbac.authorization.k8s.io') errs.push(field.notSupported('roleRef.apiGroup', ref['apiGroup'] ?? '', ['rbac.authorization.k8s.io']));
    const kinds = namespaced ? ROLE_REF_KINDS.namespaced : ROLE_REF_KINDS.cluster;
    if (!kinds.includes(ref['kind'] as string)) errs.push(field.notSupported('roleRef.kind', ref['kind'] ?? '', kinds));
    if (typeof ref['name'] !== 'string' || ref['name'] === '') errs.push(field.required('roleRef.name', ''));
  }
  const subjects = obj['subjects'];
  if (subjects !== undefined && subjects !== null) {
    if (!Array.isArray(subjects)) errs.push(field.invalid('subjects', subjects, 'must be a list'));
    else subjects.forEach((s: unknown, i) => {
      const p = field.index('subjects', i);
      const sub = (s ?? {}) as Obj;
      if (typeof sub['name'] !== 'string' || sub['name'] === '') errs.push(field.required(field.child(p, 'name'), ''));
      if (!SUBJECT_KINDS.includes(sub['kind'] as string)) errs.push(field.notSupported(field.child(p, 'kind'), sub['kind'] ?? '', SUBJECT_KINDS));
      else if (sub['kind'] === 'ServiceAccount') {
        if (!namespaced && !sub['namespace']) errs.push(field.required(field.child(p, 'namespace'), ''));
        if (sub['apiGroup']) errs.push(field.notSupported(field.child(p, 'apiGroup'), sub['apiGroup'], ['']));
      } else if (sub['apiGroup'] !== 'rbac.authorization.k8s.io') {
        errs.push(field.notSupported(field.child(p, 'apiGroup'), sub['apiGroup'] ?? '', ['rbac.authorization.k8s.io']));
      }
    });
  }
  return errs;
}

function roleRefImmutable(next: KubeObject, prev: KubeObject): FieldError[] {
  return JSON.stringify(next['roleRef']) === JSON.stringify(prev['roleRef'])
    ? [] : [field.invalid('roleRef', next['roleRef'], 'cannot change roleRef')];
}

export const roleStrategy: RestStrategy = {
  resource: Roles, tracksGeneration: false,
  validate: (o) => validateRules(o['rules'], true),
  validateUpdate: (o) => validateRules(o['rules'], true),
};

export const clusterRoleStrategy: RestStrategy = {
  resource: ClusterRoles, tracksGeneration: false,
  validate: (o) => validateRules(o['rules'], false),
  validateUpdate: (o) => validateRules(o['rules'], false),
};

export const roleBindingStrategy: RestStrategy = {
  resource: RoleBindings, tracksGeneration: false,
  validate: (o) => validateBinding(o, true),
  validateUpdate: (n, p) => [...validateBinding(n, true), ...roleRefImmutable(n, p)],
};

export const clusterRoleBindingStrategy: RestStrategy = {
  resource: ClusterRoleBindings, tracksGeneration: false,
  validate: (o) => validateBinding(o, false),
  validateUpdate: (n, p) => [...validateBinding(n, false), ...roleRefImmutable(n, p)],
};

export const RBAC_STRATEGIES: readonly RestStrategy[] = [roleStrategy, clusterRoleStrategy, roleBindingStrategy, clusterRoleBindingStrategy];
