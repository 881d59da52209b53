/**
 * Generates schemas.generated.ts: OpenAPI v3 component schemas for the served kinds, derived
 * from the `kubernetes-types` declarations (names, types, required fields and descriptions come
 * from upstream's own OpenAPI, which that package is generated from). Patch metadata, which the
 * declarations do not carry, comes from PATCH_META below (upstream's patchStrategy/patchMergeKey tags).
 *
 * Run after changing the roots or upgrading kubernetes-types:
 *   node --conditions=@mk8s/source --import tsx apiserver/src/openapi/generate-schemas.ts
 * The typescript package is only needed here, at generation time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

type Schema = Record<string, unknown>;

/** kubernetes-types module → upstream OpenAPI definition prefix. */
const MODULES: Record<string, string> = {
  'core/v1': 'io.k8s.api.core.v1',
  'apps/v1': 'io.k8s.api.apps.v1',
  'coordination/v1': 'io.k8s.api.coordination.v1',
  'discovery/v1': 'io.k8s.api.discovery.v1',
  'scheduling/v1': 'io.k8s.api.scheduling.v1',
  'autoscaling/v1': 'io.k8s.api.autoscaling.v1',
  'autoscaling/v2': 'io.k8s.api.autoscaling.v2',
  'policy/v1': 'io.k8s.api.policy.v1',
  'batch/v1': 'io.k8s.api.batch.v1',
  'rbac/v1': 'io.k8s.api.rbac.v1',
  'authentication/v1': 'io.k8s.api.authentication.v1',
  'authorization/v1': 'io.k8s.api.authorization.v1',
  'storage/v1': 'io.k8s.api.storage.v1',
  'certificates/v1': 'io.k8s.api.certificates.v1',
  'events/v1': 'io.k8s.api.events.v1',
  'meta/v1': 'io.k8s.apimachinery.pkg.apis.meta.v1',
  'api/resource': 'io.k8s.apimachinery.pkg.api.resource',
  'runtime': 'io.k8s.apimachinery.pkg.runtime',
};
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

/** Top-level kinds to emit (with their closure), as `module:Type`. */
const ROOTS = [
  'core/v1:Pod', 'core/v1:PodList', 'core/v1:Service', 'core/v1:ServiceList', 'core/v1:Endpoints', 'core/v1:EndpointsList',
  'core/v1:ConfigMap', 'core/v1:ConfigMapList', 'core/v1:Secret', 'core/v1:SecretList', 'core/v1:Namespace', 'core/v1:NamespaceList',
  'core/v1:Node', 'core/v1:NodeList', 'core/v1:Event', 'core/v1:EventList', 'core/v1:ServiceAccount', 'core/v1:ServiceAccountList',
  'core/v1:Binding', 'core/v1:PodTemplate', 'core/v1:PodTemplateList',
  'authentication/v1:TokenReview', 'authentication/v1:SelfSubjectReview', 'authorization/v1:SubjectAccessReview',
  'authorization/v1:SelfSubjectAccessReview', 'authorization/v1:LocalSubjectAccessReview',
  'core/v1:ResourceQuota', 'core/v1:ResourceQuotaList', 'core/v1:LimitRange', 'core/v1:LimitRangeList',
  'apps/v1:Deployment', 'apps/v1:DeploymentList', 'apps/v1:ReplicaSet', 'apps/v1:ReplicaSetList',
  'coordination/v1:Lease', 'coordination/v1:LeaseList', 'discovery/v1:EndpointSlice', 'discovery/v1:EndpointSliceList',
  'scheduling/v1:PriorityClass', 'scheduling/v1:PriorityClassList', 'autoscaling/v1:Scale', 'policy/v1:Eviction',
  'meta/v1:Status', 'meta/v1:DeleteOptions',
  'rbac/v1:Role', 'rbac/v1:RoleList', 'rbac/v1:ClusterRole', 'rbac/v1:ClusterRoleList',
  'rbac/v1:RoleBinding', 'rbac/v1:RoleBindingList', 'rbac/v1:ClusterRoleBinding', 'rbac/v1:ClusterRoleBindingList',
  'core/v1:PersistentVolume', 'core/v1:PersistentVolumeList', 'core/v1:PersistentVolumeClaim', 'core/v1:PersistentVolumeClaimList',
  'storage/v1:StorageClass', 'storage/v1:StorageClassList',
  'certificates/v1:CertificateSigningRequest', 'certificates/v1:CertificateSigningRequestList',
  'events/v1:Event', 'events/v1:EventList',
  'autoscaling/v2:HorizontalPodAutoscaler', 'autoscaling/v2:HorizontalPodAutoscalerList',
  'autoscaling/v1:HorizontalPodAutoscaler', 'autoscaling/v1:HorizontalPodAutoscalerList',
  // Not served yet; ready for when the scheme adds them.
  'apps/v1:DaemonSet', 'apps/v1:DaemonSetList', 'apps/v1:StatefulSet', 'apps/v1:StatefulSetList',
  'batch/v1:Job', 'batch/v1:JobList', 'batch/v1:CronJob', 'batch/v1:CronJobList',
  'core/v1:ReplicationController', 'core/v1:ReplicationControllerList',
  'policy/v1:PodDisruptionBudget', 'policy/v1:PodDisruptionBudgetList',
  'apps/v1:ControllerRevision', 'apps/v1:ControllerRevisionList',
];

/** Upstream's patchStrategy / patchMergeKey struct tags, which client-side apply needs. */
const PATCH_META: Record<string, { strategy: string; key?: string }> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.finalizers': { strategy: 'merge' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.ownerReferences': { strategy: 'merge', key: 'uid' },
  'io.k8s.api.core.v1.PodSpec.volumes': { strategy: 'merge,retainKeys', key: 'name' },
  'io.k8s.api.core.v1.PodSpec.initContainers': { strategy: 'merge', key: 'name' },
  'io.k8s.api.core.v1.PodSpec.containers': { strategy: 'merge', key: 'name' },
  'io.k8s.api.core.v1.PodSpec.ephemeralContainers': { strategy: 'merge', key: 'name' },
  'io.k8s.api.core.v1.PodSpec.imagePullSecrets': { strategy: 'merge', key: 'name' },
  'io.k8s.api.core.v1.PodSpec.hostAliases': { strategy: 'merge', key: 'ip' },
  'io.k8s.api.core.v1.PodSpec.topologySpreadConstraints': { strategy: 'merge', key: 'topologyKey' },
  'io.k8s.api.core.v1.PodSpec.resourceClaims': { strategy: 'merge,retainKeys', key: 'name' },
  'io.k8s.api.core.v1.PodSpec.schedulingGates': { strategy: 'merge', key: 'name' },
  'io.k8s.api.core.v1.Container.ports': { strategy: 'merge', key: 'containerPort' },
  'io.k8s.api.core.v1.Container.env': { strategy: 'merge', key: 'name' },
  'io.k8s.api.core.v1.Container.volumeMounts': { strategy: 'merge', key: 'mountPath' },
  'io.k8s.api.core.v1.Container.volumeDevices': { strategy: 'merge', key: 'devicePath' },
  'io.k8s.api.core.v1.EphemeralContainer.env': { strategy: 'merge', key: 'name' },
  'io.k8s.api.core.v1.EphemeralContainer.volumeMounts': { strategy: 'merge', key: 'mountPath' },
  'io.k8s.api.core.v1.EphemeralContainer.volumeDevices': { strategy: 'merge', key: 'devicePath' },
  'io.k8s.api.core.v1.PodStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.core.v1.PodStatus.podIPs': { strategy: 'merge', key: 'ip' },
  'io.k8s.api.core.v1.PodStatus.hostIPs': { strategy: 'merge', key: 'ip' },
  'io.k8s.api.core.v1.PodStatus.resourceClaimStatuses': { strategy: 'merge,retainKeys', key: 'name' },
  'io.k8s.api.core.v1.NodeSpec.podCIDRs': { strategy: 'merge' },
  'io.k8s.api.core.v1.NodeStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.core.v1.NodeStatus.addresses': { strategy: 'merge', key: 'type' },
  'io.k8s.api.core.v1.ServiceSpec.ports': { strategy: 'merge', key: 'port' },
  'io.k8s.api.core.v1.ServiceStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.core.v1.NamespaceStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.core.v1.ServiceAccount.secrets': { strategy: 'merge', key: 'name' },
  'io.k8s.api.apps.v1.DeploymentSpec.strategy': { strategy: 'retainKeys' },
  'io.k8s.api.apps.v1.DeploymentStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.apps.v1.ReplicaSetStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.apps.v1.DaemonSetStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.apps.v1.StatefulSetStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.batch.v1.JobStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.core.v1.ReplicationControllerStatus.conditions': { strategy: 'merge', key: 'type' },
  'io.k8s.api.policy.v1.PodDisruptionBudgetStatus.conditions': { strategy: 'merge', key: 'type' },
};

/** Alias types that are schemas of their own upstream. */
const ALIASES: Record<string, Schema> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { type: 'string', format: 'date-time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { type: 'string', format: 'date-time' },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { oneOf: [{ type: 'string' }, { type: 'number' }] },
};

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const typesRoot = dirname(require.resolve('kubernetes-types/package.json'));

interface ModuleInfo { decls: Map<string, ts.InterfaceDeclaration | ts.TypeAliasDeclaration>; imports: Map<string, string> }
const modules = new Map<string, ModuleInfo>();

function loadModule(mod: string): ModuleInfo {
  let m = modules.get(mod);
  if (m) return m;
  const file = join(typesRoot, `${mod}.d.ts`);
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  m = { decls: new Map(), imports: new Map() };
  for (const st of sf.statements) {
    if (ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) m.decls.set(st.name.text, st);
    if (ts.isImportDeclaration(st) && st.importClause?.namedBindings && ts.isNamedImports(st.importClause.namedBindings)) {
      const spec = (st.moduleSpecifier as ts.StringLiteral).text;
      const target = join(dirname(mod), spec).replace(/^\.\//, '');
      for (const el of st.importClause.namedBindings.elements) m.imports.set(el.name.text, target);
    }
  }
  modules.set(mod, m);
  return m;
}

function docOf(node: ts.Node): string | undefined {
  const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc;
  if (!docs?.length) return undefined;
  const c = docs[docs.length - 1]!.comment;
  if (c === undefined) return undefined;
  return typeof c === 'string' ? c : c.map((p) => p.text).join('');
}

const schemas: Record<string, Schema> = {};
const queue: [string, string][] = [];
const defName = (mod: string, name: string): string => `${MODULES[mod] ?? fail(`unmapped module ${mod}`)}.${name}`;
function fail(msg: string): never { throw new Error(msg); }

/** Resolves a type name used in mod to its definition name, queueing it. */
function refTo(mod: string, name: string): string {
  const m = loadModule(mod);
  const target = m.decls.has(name) ? mod : m.imports.get(name) ?? fail(`unresolved ${name} in ${mod}`);
  const def = defName(target, name);
  if (!(def in schemas) && !queue.some(([q, n]) => q === target && n === name)) queue.push([target, name]);
  return def;
}

const ref = (def: string): Schema => ({ $ref: `#/components/schemas/${def}` });

function typeSchema(mod: string, t: ts.TypeNode): Schema {
  switch (t.kind) {
    case ts.SyntaxKind.StringKeyword: return { type: 'string' };
    case ts.SyntaxKind.NumberKeyword: return { type: 'integer', format: 'int32' };
    case ts.SyntaxKind.BooleanKeyword: return { type: 'boolean' };
  }
  if (ts.isLiteralTypeNode(t)) return { type: 'string' };
  if (ts.isUnionTypeNode(t)) {
    const kinds = new Set(t.types.map((x) => x.kind));
    if (kinds.has(ts.SyntaxKind.NumberKeyword) && kinds.has(ts.SyntaxKind.StringKeyword)) {
      // oneOf without a top-level type, as upstream's v3 has it: `explain` then names the type IntOrString.
      if (!(INT_OR_STRING in schemas)) schemas[INT_OR_STRING] = { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }],
        description: 'IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.' };
      return { allOf: [ref(INT_OR_STRING)] };
    }
    if (t.types.every((x) => ts.isLiteralTypeNode(x))) return { type: 'string' };
    fail(`unsupported union in ${mod}: ${t.getText()}`);
  }
  if (ts.isArrayTypeNode(t)) return { type: 'array', items: typeSchema(mod, t.elementType) };
  if (ts.isTypeReferenceNode(t)) {
    const name = t.typeName.getText();
    if (name === 'Array') return { type: 'array', items: typeSchema(mod, t.typeArguments![0]!) };
    const def = refTo(mod, name);
    return { allOf: [ref(def)] };
  }
  if (ts.isTypeLiteralNode(t)) {
    const idx = t.members.find(ts.isIndexSignatureDeclaration);
    if (idx) return { type: 'object', additionalProperties: typeSchema(mod, idx.type) };
    return { type: 'object' };
  }
  if (t.kind === ts.SyntaxKind.AnyKeyword || t.kind === ts.SyntaxKind.UnknownKeyword) return { 'x-kubernetes-preserve-unknown-fields': true };
  return fail(`unsupported type in ${mod}: ${t.getText()}`);
}

function emit(mod: string, name: string): void {
  const def = defName(mod, name);
  if (def in schemas) return;
  const decl = loadModule(mod).decls.get(name) ?? fail(`no ${name} in ${mod}`);
  const description = docOf(decl);
  if (ts.isTypeAliasDeclaration(decl)) {
    const base = ALIASES[def] ?? typeSchema(mod, decl.type);
    schemas[def] = { ...(description ? { description } : {}), ...base };
    return;
  }
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  schemas[def] = {}; // placeholder against cycles (JSONSchemaProps refers to itself)
  for (const m of decl.members) {
    if (!ts.isPropertySignature(m) || !m.type) continue;
    const prop = m.name.getText().replace(/^"|"$/g, '');
    const s: Schema = typeSchema(mod, m.type);
    const d = docOf(m);
    if (d) s['description'] = d;
    const pm = PATCH_META[`${def}.${prop}`];
    if (pm) { s['x-kubernetes-patch-strategy'] = pm.strategy; if (pm.key) s['x-kubernetes-patch-merge-key'] = pm.key; }
    properties[prop] = s;
    if (!m.questionToken) required.push(prop);
  }
  const out: Schema = {};
  if (description) out['description'] = description;
  out['type'] = 'object';
  // An empty declaration (FieldsV1, RawExtension) is free-form JSON upstream.
  if (Object.keys(properties).length) out['properties'] = properties;
  else out['x-kubernetes-preserve-unknown-fields'] = true;
  if (required.length) out['required'] = required;
  schemas[def] = out;
}

/** The source text of schemas.generated.ts (deterministic; the freshness test compares it). */
export function renderSchemasModule(): string {
  if (Object.keys(schemas).length === 0) {
    for (const root of ROOTS) { const [mod, name] = root.split(':') as [string, string]; queue.push([mod, name]); }
    while (queue.length) { const [mod, name] = queue.shift()!; emit(mod, name); }
  }
  const sorted = Object.fromEntries(Object.keys(schemas).sort().map((k) => [k, schemas[k]]));
  const version = (JSON.parse(readFileSync(join(typesRoot, 'package.json'), 'utf8')) as { version: string }).version;
  // A string literal parsed at load: a JSON import would need the workspace tsconfig to list .json
  // files, and a 300 kB object literal is slow to type-check.
  const json = JSON.stringify({ source: `kubernetes-types@${version}`, schemas: sorted });
  return `// Generated by generate-schemas.ts from kubernetes-types@${version}. Do not edit.\n` +
    `export const SCHEMAS_JSON = ${JSON.stringify(json)};\n`;
}

export const GENERATED_PATH = join(here, 'schemas.generated.ts');

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(GENERATED_PATH, renderSchemasModule());
  console.log(`wrote ${Object.keys(schemas).length} schemas to ${GENERATED_PATH}`);
}
