/**
 * The default ClusterRoles and ClusterRoleBindings (plugin/pkg/auth/authorizer/rbac/bootstrappolicy),
 * created at startup when RBAC is on. Trimmed to the resources this apiserver serves, same names,
 * labels and aggregation as upstream so `kubectl get clusterrole` reads the same.
 */
import { ClusterRoleBindings, ClusterRoles, type KubeObject } from '@mk8s/api';
import type { Registry, RequestContext } from '../registry/index.js';
import { toApiError } from '../endpoints/status.js';
import type { PolicyRule } from './rbac.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const AUTOUPDATE = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

const r = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule =>
  ({ verbs, apiGroups, resources, ...(resourceNames ? { resourceNames } : {}) });
const url = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

function clusterRole(name: string, rules: PolicyRule[], extra: { labels?: Record<string, string>; aggregateTo?: string[] } = {}): KubeObject {
  const labels: Record<string, string> = { ...BOOTSTRAP_LABELS, ...(extra.labels ?? {}) };
  const role: KubeObject = {
    apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRole',
    metadata: { name, labels, annotations: { ...AUTOUPDATE } }, rules,
  } as KubeObject;
  if (extra.aggregateTo) {
    role['aggregationRule'] = { clusterRoleSelectors: extra.aggregateTo.map((l) => ({ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${l}`]: 'true' } })) };
  }
  return role;
}

function binding(name: string, role: string, subjects: { kind: string; name: string; namespace?: string }[]): KubeObject {
  return {
    apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRoleBinding',
    metadata: { name, labels: { ...BOOTSTRAP_LABELS }, annotations: { ...AUTOUPDATE } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
    subjects: subjects.map((s) => (s.kind === 'ServiceAccount' ? s : { apiGroup: RBAC_GROUP, ...s })),
  } as KubeObject;
}

const CORE_WORKLOAD = ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'pods/log', 'pods/status',
  'services', 'services/status', 'endpoints', 'configmaps', 'serviceaccounts', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'events'];
const APPS = ['deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status',
  'daemonsets', 'statefulsets', 'statefulsets/scale'];
/** What view adds over edit's apps list (upstream: controllerrevisions and the status subresources are read-only). */
const APPS_VIEW_ONLY = ['controllerrevisions', 'daemonsets/status', 'statefulsets/status'];
const BATCH = ['jobs', 'jobs/status', 'cronjobs', 'cronjobs/status'];

/** The default ClusterRoles. */
export function bootstrapClusterRoles(): KubeObject[] {
  return [
    clusterRole('cluster-admin', [r(['*'], ['*'], ['*']), url(['*'], ['*'])]),
    clusterRole('admin', [], { aggregateTo: ['admin'] }),
    clusterRole('edit', [], { aggregateTo: ['edit'], labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }),
    clusterRole('view', [], { aggregateTo: ['view'], labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }),
    clusterRole('system:aggregate-to-admin', [
      r([...READ, ...WRITE], [RBAC_GROUP], ['roles', 'rolebindings']),
      r(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
    ], { labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }),
    clusterRole('system:aggregate-to-edit', [
      r([...READ, ...WRITE], [''], [...CORE_WORKLOAD, 'secrets']),
      r(['create'], [''], ['pods/eviction', 'serviceaccounts/token']),
      // As upstream: edit may act as the namespace's service accounts (it can run pods as them anyway).
      r(['impersonate'], [''], ['serviceaccounts']),
      r([...READ, ...WRITE], ['apps'], APPS),
      r([...READ, ...WRITE], ['policy'], ['poddisruptionbudgets']),
      r([...READ, ...WRITE], ['discovery.k8s.io'], ['endpointslices']),
      r([...READ, ...WRITE], ['coordination.k8s.io'], ['leases']),
      r([...READ, ...WRITE], ['batch'], BATCH),
      r([...READ, ...WRITE], ['autoscaling'], ['horizontalpodautoscalers']),
    ], { labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }),
    clusterRole('system:aggregate-to-view', [
      r(READ, [''], ['pods', 'pods/log', 'pods/status', 'services', 'services/status', 'endpoints', 'configmaps', 'serviceaccounts',
        'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'replicationcontrollers/status', 'events', 'namespaces', 'namespaces/status', 'resourcequotas', 'limitranges']),
      r(READ, ['apps'], APPS),
      r(READ, ['apps'], APPS_VIEW_ONLY),
      r(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      r(READ, ['discovery.k8s.io'], ['endpointslices']),
      r(READ, ['batch'], BATCH),
      r(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
    ], { labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }),
    clusterRole('system:discovery', [url(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/readyz', '/version', '/version/', '/openapi', '/openapi/*'])]),
    clusterRole('system:public-info-viewer', [url(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
    clusterRole('system:basic-user', [r(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      r(['create'], ['authentication.k8s.io'], ['selfsubjectreviews'])]),
    clusterRole('system:auth-delegator', [
      r(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      r(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ]),
    clusterRole('system:kube-scheduler', [
      r(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']),
      r(['create'], ['coordination.k8s.io'], ['leases']),
      r(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-scheduler']),
      r(READ, [''], ['nodes', 'namespaces', 'services', 'persistentvolumeclaims', 'persistentvolumes', 'replicationcontrollers', 'configmaps']),
      r([...READ, 'delete'], [''], ['pods']),
      r(['create'], [''], ['pods/binding', 'bindings']),
      r(['patch', 'update'], [''], ['pods/status']),
      r(READ, ['apps'], ['replicasets', 'statefulsets']),
      r(READ, ['policy'], ['poddisruptionbudgets']),
      r(READ, ['scheduling.k8s.io'], ['priorityclasses']),
      r(READ, ['storage.k8s.io'], ['storageclasses', 'csinodes', 'csidrivers', 'csistoragecapacities']),
      // system:volume-scheduler: VolumeBinding writes volume.kubernetes.io/selected-node on claims.
      r(['patch', 'update'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
      r(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      r(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ]),
    // Upstream splits this into one role per controller with their own ServiceAccounts; one identity here.
    clusterRole('system:kube-controller-manager', [r(['*'], ['*'], ['*']), url(['get'], ['/healthz', '/readyz', '/livez', '/version'])]),
    clusterRole('system:node', [
      r(['create', 'get', 'list', 'watch', 'update', 'patch', 'delete'], [''], ['nodes']),
      r(['patch', 'update'], [''], ['nodes/status', 'pods/status']),
      r([...READ, 'create', 'delete'], [''], ['pods']),
      r(['create'], [''], ['pods/eviction', 'serviceaccounts/token']),
      r(READ, [''], ['services', 'endpoints']),
      r(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']),
      r(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
      r(['create', 'delete', 'get', 'patch', 'update'], ['coordination.k8s.io'], ['leases']),
      r(READ, ['discovery.k8s.io'], ['endpointslices']),
      r(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      r(['create'], ['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews']),
      // Kubelet client certificate rotation and serving certificates (upstream NodeRules).
      r(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    ]),
    // Who may have a kubelet client CSR auto-approved (csrapproving's SubjectAccessReviews) and who
    // may approve requests of each well-known signer (upstream ClusterRoles of the same names).
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [r(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/nodeclient'])]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [r(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/selfnodeclient'])]),
    ...['kube-apiserver-client', 'kube-apiserver-client-kubelet', 'kubelet-serving', 'legacy-unknown'].map((s) =>
      clusterRole(`system:certificates.k8s.io:${s}-approver`, [r(['approve'], ['certificates.k8s.io'], ['signers'], [`kubernetes.io/${s}`])])),
    clusterRole('system:node-proxier', [
      r(READ, [''], ['services', 'endpoints', 'nodes']),
      r(READ, ['discovery.k8s.io'], ['endpointslices']),
      r(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']),
    ]),
  ];
}

/** The default ClusterRoleBindings. */
export function bootstrapClusterRoleBindings(): KubeObject[] {
  return [
    binding('cluster-admin', 'cluster-admin', [{ kind: 'Group', name: 'system:masters' }]),
    binding('system:discovery', 'system:discovery', [{ kind: 'Group', name: 'system:authenticated' }]),
    binding('system:basic-user', 'system:basic-user', [{ kind: 'Group', name: 'system:authenticated' }]),
    binding('system:public-info-viewer', 'system:public-info-viewer', [{ kind: 'Group', name: 'system:authenticated' }, { kind: 'Group', name: 'system:unauthenticated' }]),
    binding('system:kube-scheduler', 'system:kube-scheduler', [{ kind: 'User', name: 'system:kube-scheduler' }]),
    binding('system:kube-controller-manager', 'system:kube-controller-manager', [{ kind: 'User', name: 'system:kube-controller-manager' }]),
    // Upstream leaves system:node unbound (the Node authorizer decides); bound here to system:nodes
    // so nodes keep working with RBAC alone, NodeRestriction limiting what each one may change.
    binding('system:node', 'system:node', [{ kind: 'Group', name: 'system:nodes' }]),
    // kubeadm's kubeadm:node-autoapprove-certificate-rotation: a node's renewal of its own client certificate is auto-approved.
    binding('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [{ kind: 'Group', name: 'system:nodes' }]),
    binding('system:node-proxier', 'system:node-proxier', [{ kind: 'User', name: 'system:kube-proxy' }]),
  ];
}

/** Creates the default roles and bindings that are missing (existing ones are left as users edited them). */
export async function ensureBootstrapPolicy(registry: Registry): Promise<void> {
  const rc: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, warnings: [] };
  for (const [res, objs] of [[ClusterRoles, bootstrapClusterRoles()], [ClusterRoleBindings, bootstrapClusterRoleBindings()]] as const) {
    const store = registry.get(res)!;
    for (const o of objs) {
      try { await store.create(rc, '', o); } catch (err) { if (toApiError(err).reason !== 'AlreadyExists') throw err; }
    }
  }
}
