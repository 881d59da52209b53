import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateObject } from './index.js';
import { applyDefaults } from '../defaults/defaults.js';

// Descriptors spelled out here so the tests do not depend on the scheme listing RBAC kinds.
const r = (resource: string, namespaced: boolean) => ({ group: 'rbac.authorization.k8s.io', resource, namespaced });
const Roles = r('roles', true), ClusterRoles = r('clusterroles', false), RoleBindings = r('rolebindings', true), ClusterRoleBindings = r('clusterrolebindings', false);

const crb = (extra: Record<string, unknown> = {}) => applyDefaults(ClusterRoleBindings, {
  metadata: { name: 'system:node' },
  roleRef: { kind: 'ClusterRole', name: 'system:node' },
  subjects: [{ kind: 'Group', name: 'system:nodes' }, { kind: 'ServiceAccount', name: 'kube-proxy', namespace: 'kube-system' }],
  ...extra,
});

const cases = [
  { name: 'system: names are valid RBAC names', r: ClusterRoles, obj: { metadata: { name: 'system:controller:deployment-controller' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }] }, want: [] },
  { name: 'rule without verbs', r: Roles, obj: { metadata: { name: 'r', namespace: 'd' }, rules: [{ apiGroups: [''], resources: ['pods'] }] }, want: ['rules[0].verbs: Required value: verbs must contain at least one value'] },
  { name: 'namespaced non-resource rule', r: Roles, obj: { metadata: { name: 'r', namespace: 'd' }, rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }] }, want: ['rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs'] },
  { name: 'defaulted cluster role binding is valid', r: ClusterRoleBindings, obj: crb(), want: [] },
  { name: 'cluster role binding to a Role', r: ClusterRoleBindings, obj: crb({ roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' } }), want: ['roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"'] },
  { name: 'cluster-wide service account subject needs a namespace', r: ClusterRoleBindings, obj: crb({ subjects: [{ kind: 'ServiceAccount', name: 'sa' }] }), want: ['subjects[0].namespace: Required value'] },
  { name: 'unknown subject kind', r: RoleBindings, obj: applyDefaults(RoleBindings, { metadata: { name: 'b', namespace: 'd' }, roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'Robot', name: 'x' }] }), want: ['subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'] },
  { name: 'roleRef is immutable', r: ClusterRoleBindings, obj: crb({ roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'other' } }), old: crb(), want: ['roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"other"}: cannot change roleRef'] },
];
for (const tc of cases) test(tc.name, () => assert.deepEqual(validateObject(tc.r, tc.obj, tc.old).map((e) => e.message), tc.want));

test('subjects and roleRef get their API group defaulted', () => {
  const got = crb() as Record<string, unknown>;
  assert.deepEqual(got['roleRef'], { kind: 'ClusterRole', name: 'system:node', apiGroup: 'rbac.authorization.k8s.io' });
  assert.deepEqual(got['subjects'], [{ kind: 'Group', name: 'system:nodes', apiGroup: 'rbac.authorization.k8s.io' }, { kind: 'ServiceAccount', name: 'kube-proxy', namespace: 'kube-system', apiGroup: '' }]);
});
