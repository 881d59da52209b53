/**
 * The RBAC authorizer (plugin/pkg/auth/authorizer/rbac): a request is allowed when some rule of a
 * role bound to the user (ClusterRoleBindings everywhere, RoleBindings in the request's namespace)
 * matches it. ClusterRoles with an aggregationRule get the rules of every ClusterRole their
 * selectors match (upstream's aggregation controller, resolved at read time). Also the rule
 * coverage check behind escalation prevention (pkg/registry/rbac/validation).
 */
import { labelSelectorFromObject, type KubeObject, type LabelSelector } from '@mk8s/api';
import type { UserInfo } from './authentication.js';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorization.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject { kind: string; name: string; namespace?: string; apiGroup?: string }

/** Where the authorizer reads RBAC objects (the registry's watch cache in the server). */
export interface RbacSource {
  listClusterRoleBindings(): Promise<KubeObject[]>;
  listRoleBindings(namespace: string): Promise<KubeObject[]>;
  listClusterRoles(): Promise<KubeObject[]>;
  getClusterRole(name: string): Promise<KubeObject | undefined>;
  getRole(namespace: string, name: string): Promise<KubeObject | undefined>;
}

const has = (xs: readonly string[] | undefined, x: string) => !!xs && (xs.includes('*') || xs.includes(x));

/** Whether a rule allows the request (rbac.RuleAllows). */
export function ruleAllows(a: AuthorizationAttributes, r: PolicyRule): boolean {
  if (!has(r.verbs, a.verb)) return false;
  if (!a.resourceRequest) {
    const path = a.path ?? '';
    return (r.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
  }
  if (!has(r.apiGroups, a.apiGroup ?? '')) return false;
  const combined = a.subresource ? `${a.resource ?? ''}/${a.subresource}` : a.resource ?? '';
  const resources = r.resources ?? [];
  const resOk = resources.some((x) => x === '*' || x === combined || (a.subresource !== undefined && a.subresource !== '' && x === `*/${a.subresource}`));
  if (!resOk) return false;
  const names = r.resourceNames ?? [];
  return names.length === 0 || (!!a.name && names.includes(a.name));
}

/** Whether subject s names user (appliesTo), given the binding's namespace for ServiceAccounts. */
export function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User': return s.name === user.username;
    case 'Group': return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return user.username === `system:serviceaccount:${ns}:${s.name}`;
    }
    default: return false;
  }
}

const rulesOf = (o: KubeObject | undefined): PolicyRule[] => (Array.isArray(o?.['rules']) ? o['rules'] as PolicyRule[] : []);

export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  constructor(private readonly source: RbacSource) {}

  async authorize(a: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }> {
    const rules = await this.rulesFor(a.user, a.namespace ?? '');
    return rules.some((r) => ruleAllows(a, r)) ? { decision: 'Allow', reason: 'RBAC: allowed by a binding' } : { decision: 'NoOpinion' };
  }

  /** Every rule user holds in namespace ('' = cluster-wide only), as upstream's RulesFor. */
  async rulesFor(user: UserInfo, namespace: string): Promise<PolicyRule[]> {
    const out: PolicyRule[] = [];
    for (const b of await this.source.listClusterRoleBindings()) {
      if (!bindingApplies(b, user, '')) continue;
      out.push(...await this.clusterRoleRules(roleRefOf(b).name));
    }
    if (namespace) {
      for (const b of await this.source.listRoleBindings(namespace)) {
        if (!bindingApplies(b, user, namespace)) continue;
        const ref = roleRefOf(b);
        if (ref.kind === 'ClusterRole') out.push(...await this.clusterRoleRules(ref.name));
        else out.push(...rulesOf(await this.source.getRole(namespace, ref.name)));
      }
    }
    return out;
  }

  /** A namespaced Role's rules ([] when it does not exist). */
  async rulesForRole(namespace: string, name: string): Promise<PolicyRule[]> {
    return rulesOf(await this.source.getRole(namespace, name));
  }

  /**
   * A ClusterRole's rules, plus those of the ClusterRoles its aggregationRule selects, recursively
   * (upstream's controller materializes edit into admin the same way).
   */
  async clusterRoleRules(name: string, seen: Set<string> = new Set()): Promise<PolicyRule[]> {
    if (seen.has(name)) return [];
    seen.add(name);
    const role = await this.source.getClusterRole(name);
    if (!role) return [];
    const selectors = ((role['aggregationRule'] as { clusterRoleSelectors?: LabelSelector[] } | undefined)?.clusterRoleSelectors) ?? [];
    if (selectors.length === 0) return rulesOf(role);
    const out = [...rulesOf(role)];
    for (const other of await this.source.listClusterRoles()) {
      const labels = other.metadata.labels ?? {};
      if (selectors.some((s) => safeMatch(s, labels))) out.push(...await this.clusterRoleRules(other.metadata.name, seen));
    }
    return out;
  }
}

function safeMatch(s: LabelSelector, labels: Record<string, string>): boolean {
  // An empty selector in an aggregationRule selects nothing (upstream skips it).
  try { const p = labelSelectorFromObject(s); return !p.empty && p.matches(labels); } catch { return false; }
}

export function roleRefOf(b: KubeObject): { kind: string; name: string } {
  const r = (b['roleRef'] ?? {}) as { kind?: string; name?: string };
  return { kind: r.kind ?? '', name: r.name ?? '' };
}

function bindingApplies(b: KubeObject, user: UserInfo, namespace: string): boolean {
  const subjects = Array.isArray(b['subjects']) ? b['subjects'] as Subject[] : [];
  return subjects.some((s) => subjectMatches(s, user, namespace));
}

/**
 * Whether owner rules cover every permission in servant rules (validation.Covers): each
 * servant rule is broken down into one (verb, group, resource, name) or (verb, URL) at a time.
 * Returns the uncovered servant rules (empty: covered).
 */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const s of servant) {
    for (const atom of breakdown(s)) {
      if (!owner.some((o) => ruleCovers(o, atom))) missing.push(atom);
    }
  }
  return missing;
}

function breakdown(r: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const verb of r.verbs ?? []) {
    for (const url of r.nonResourceURLs ?? []) out.push({ verbs: [verb], nonResourceURLs: [url] });
    for (const group of r.apiGroups ?? []) {
      for (const resource of r.resources ?? []) {
        const names = r.resourceNames ?? [];
        if (names.length === 0) out.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
        else for (const n of names) out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [n] });
      }
    }
  }
  return out;
}

/** Whether owner covers a single-permission servant rule. '*' in servant is only covered by '*'. */
function ruleCovers(o: PolicyRule, s: PolicyRule): boolean {
  const verb = s.verbs[0]!;
  if (!(o.verbs.includes('*') || o.verbs.includes(verb))) return false;
  if (s.nonResourceURLs?.length) {
    const u = s.nonResourceURLs[0]!;
    return (o.nonResourceURLs ?? []).some((x) => x === '*' || x === u || (x.endsWith('*') && u.startsWith(x.slice(0, -1))));
  }
  const group = s.apiGroups![0]!; const resource = s.resources![0]!;
  if (!has(o.apiGroups, group)) return false;
  const slash = resource.indexOf('/');
  const sub = slash < 0 ? '' : resource.slice(slash + 1);
  const resOk = (o.resources ?? []).some((x) => x === '*' || x === resource || (sub !== '' && x === `*/${sub}`)
    || (x.endsWith('/*') && slash >= 0 && resource.startsWith(x.slice(0, -1))));
  if (!resOk) return false;
  const ownerNames = o.resourceNames ?? [];
  if (ownerNames.length === 0) return true;
  const n = s.resourceNames?.[0];
  return n !== undefined && ownerNames.includes(n);
}
