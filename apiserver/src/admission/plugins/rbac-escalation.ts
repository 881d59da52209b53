/**
 * RBAC escalation prevention (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased):
 * no one creates or updates a role granting permissions they do not hold, unless allowed the
 * `escalate` verb on it; no one binds a role whose permissions they do not hold, unless allowed
 * the `bind` verb on it. system:masters may always (upstream's EscalationAllowed).
 */
import { ApiError } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import type { UserInfo } from '../../auth/authentication.js';
import { authorize, type Authorizer } from '../../auth/authorization.js';
import { roleRefOf, uncoveredRules, type PolicyRule, type RbacAuthorizer } from '../../auth/rbac.js';

export const NAME = 'RBACEscalation';
const GROUP = 'rbac.authorization.k8s.io';

export class RbacEscalation implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly o: { rbac: RbacAuthorizer; authorizers: readonly Authorizer[] }) {}
  handles(op: AdmissionOperation): boolean { return op === 'CREATE' || op === 'UPDATE'; }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.resource.group !== GROUP || !a.object) return;
    const user = a.user;
    if (user.groups.includes('system:masters')) return;
    const res = a.resource.resource;
    const ns = a.namespace;
    const obj = a.object;
    if (res === 'roles' || res === 'clusterroles') {
      if (await this.allowed(user, 'escalate', res, ns, obj.metadata.name)) return;
      const servant = Array.isArray(obj['rules']) ? obj['rules'] as PolicyRule[] : [];
      const owner = await this.o.rbac.rulesFor(user, ns);
      const missing = uncoveredRules(owner, servant);
      if (missing.length > 0) throw escalation(`${res}.${GROUP}`, obj.metadata.name, user, missing);
      return;
    }
    if (res === 'rolebindings' || res === 'clusterrolebindings') {
      const ref = roleRefOf(obj);
      const refResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
      if (await this.allowed(user, 'bind', refResource, ref.kind === 'Role' ? ns : ns, ref.name)) return;
      const rules = ref.kind === 'Role' ? await this.roleRules(ns, ref.name) : await this.o.rbac.clusterRoleRules(ref.name);
      const owner = await this.o.rbac.rulesFor(user, ns);
      const missing = uncoveredRules(owner, rules);
      if (missing.length > 0) throw escalation(`${res}.${GROUP}`, obj.metadata.name, user, missing);
    }
  }

  private async roleRules(ns: string, name: string): Promise<PolicyRule[]> {
    return (await this.o.rbac.rulesForRole(ns, name));
  }

  private async allowed(user: UserInfo, verb: string, resource: string, namespace: string, name: string): Promise<boolean> {
    const d = await authorize(this.o.authorizers, { user, verb, resourceRequest: true, apiGroup: GROUP, apiVersion: 'v1', resource, namespace, name });
    return d.allowed;
  }
}

/** Upstream's message: `user "bob" (groups=["g"]) is attempting to grant RBAC permissions not currently held:\n{...}`. */
function escalation(resource: string, name: string, user: UserInfo, missing: PolicyRule[]): ApiError {
  const fmt = (xs: readonly string[] | undefined) => `[${(xs ?? []).map((x) => JSON.stringify(x)).join(' ')}]`;
  const lines = missing.map((r) => r.nonResourceURLs?.length
    ? `{NonResourceURLs:${fmt(r.nonResourceURLs)}, Verbs:${fmt(r.verbs)}}`
    : `{APIGroups:${fmt(r.apiGroups)}, Resources:${fmt(r.resources)}${r.resourceNames?.length ? `, ResourceNames:${fmt(r.resourceNames)}` : ''}, Verbs:${fmt(r.verbs)}}`);
  const groups = `[${user.groups.map((g) => JSON.stringify(g)).join(' ')}]`;
  const why = `user "${user.username}" (groups=${groups}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  return new ApiError('Forbidden', `${resource} "${name}" is forbidden: ${why}`, { details: { name, group: GROUP, kind: resource.split('.')[0]! } });
}

