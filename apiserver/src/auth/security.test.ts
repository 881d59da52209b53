/**
 * The security matrix on the in-memory server: identities × verbs × resources through the real
 * authentication, authorization (Node,RBAC) and admission stages. Counts unexpected allows.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import type { FastifyInstance } from 'fastify';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { buildSecurity } from './security.js';
import { ServiceAccountTokenIssuer } from './service-account.js';
import type { KubeObject } from '@mk8s/api';

const dir = mkdtempSync(join(tmpdir(), 'mk8s-sec-'));
const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const saKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
let app: FastifyInstance;

const TOKENS: Record<string, string> = {
  admin: 'tok-admin', alice: 'tok-alice', viewer: 'tok-viewer', editor: 'tok-editor', n1: 'tok-n1', n2: 'tok-n2', bob: 'tok-bob', imp: 'tok-imp',
};

type Who = keyof typeof TOKENS | 'anonymous' | 'badtoken' | { bearer: string };
async function call(who: Who, method: string, url: string, payload?: unknown, contentType?: string, as?: Record<string, string>) {
  const headers: Record<string, string> = { ...as };
  if (typeof who === 'object') headers['authorization'] = `Bearer ${who.bearer}`;
  else if (who === 'badtoken') headers['authorization'] = 'Bearer nope';
  else if (who !== 'anonymous') headers['authorization'] = `Bearer ${TOKENS[who]}`;
  if (contentType) headers['content-type'] = contentType;
  return app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
}

const pod = (name: string, nodeName: string, secret: string) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { nodeName, serviceAccountName: 'runner', containers: [{ name: 'c', image: 'busybox', env: [{ name: 'S', valueFrom: { secretKeyRef: { name: secret, key: 'k' } } }] }] },
});
const rb = (name: string, role: string, user: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
});

let podToken = ''; let deletedPodToken = '';

before(async () => {
  writeFileSync(join(dir, 'tokens.csv'), [
    'tok-admin,kubernetes-admin,uid-admin,"system:masters"',
    'tok-alice,alice,uid-alice', 'tok-viewer,viewer,uid-v', 'tok-editor,editor,uid-e', 'tok-bob,bob,uid-b',
    'tok-n1,system:node:n1,uid-n1,"system:nodes"', 'tok-n2,system:node:n2,uid-n2,"system:nodes"', 'tok-imp,impersonator,uid-imp',
  ].join('\n'));
  writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }) as string);
  const sec = buildSecurity({ tokenAuthFile: join(dir, 'tokens.csv'), serviceAccountKeyFiles: [join(dir, 'sa.pub')], authorizationModes: ['Node', 'RBAC'] },
    { clock, logger: silentLogger() });
  app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock,
    authenticators: sec.authenticators!, authorizers: sec.authorizers!, admission: sec.admission, plugins: sec.plugins });
  await app.ready();
  const ok = async (r: Promise<{ statusCode: number; body: string }>) => { const x = await r; assert.ok(x.statusCode < 300, x.body); return JSON.parse(x.body) as KubeObject; };
  await ok(call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', rb('viewer', 'view', 'viewer')));
  await ok(call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', rb('editor', 'edit', 'editor')));
  for (const n of ['n1', 'n2']) await ok(call('admin', 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } }));
  // impersonator may act as the users viewer and alice, the group devs, uid u-1, extra scopes=read
  // (cluster-wide) and the ServiceAccount default/runner (a RoleBinding in default); nothing else.
  await ok(call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'impersonate-some' }, rules: [
    { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['viewer', 'alice'] },
    { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['devs'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['uids'], verbs: ['impersonate'], resourceNames: ['u-1'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['userextras/scopes'], verbs: ['impersonate'], resourceNames: ['read'] },
  ] }));
  await ok(call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'impersonate-some' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonate-some' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'impersonator' }] }));
  await ok(call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'impersonate-runner' }, rules: [
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['runner'] }] }));
  await ok(call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', { ...rb('impersonate-runner', 'impersonate-runner', 'impersonator') }));
  // devs may list configmaps in default: a group only an impersonator can bring.
  await ok(call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'devs-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'devs' }] }));
  for (const s of ['s1', 's2']) await ok(call('admin', 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: s }, data: { k: 'dg==' } }));
  const sa = await ok(call('admin', 'POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'runner' } }));
  const p1 = await ok(call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('p1', 'n1', 's1')));
  await ok(call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('p2', 'n2', 's2')));
  const p3 = await ok(call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('p3', 'n2', 's2')));
  const issuer = new ServiceAccountTokenIssuer({ privateKeyPem: saKeyPem, clock });
  podToken = issuer.issue(sa, { pod: p1 });
  deletedPodToken = issuer.issue(sa, { pod: p3 });
  await ok(call('admin', 'DELETE', '/api/v1/namespaces/default/pods/p3?gracePeriodSeconds=0'));
});
after(async () => { await app?.close(); rmSync(dir, { recursive: true, force: true }); });

interface Case { who: Who; method: string; url: string; body?: unknown; ct?: string; want: number; name: string; as?: Record<string, string> }
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
const role = (name: string, rules: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules });
const NS = '/api/v1/namespaces/default';
const RBAC_NS = '/apis/rbac.authorization.k8s.io/v1/namespaces/default';

const CASES: Case[] = [
  { name: 'anonymous list pods', who: 'anonymous', method: 'GET', url: `${NS}/pods`, want: 401 },
  { name: 'anonymous create pod', who: 'anonymous', method: 'POST', url: `${NS}/configmaps`, body: cm('a'), want: 401 },
  { name: 'anonymous /api', who: 'anonymous', method: 'GET', url: '/api', want: 401 },
  { name: 'anonymous /healthz', who: 'anonymous', method: 'GET', url: '/healthz', want: 200 },
  { name: 'anonymous /readyz', who: 'anonymous', method: 'GET', url: '/readyz', want: 200 },
  { name: 'anonymous /livez', who: 'anonymous', method: 'GET', url: '/livez', want: 200 },
  { name: 'bad token /healthz', who: 'badtoken', method: 'GET', url: '/api/v1/pods', want: 401 },
  { name: 'no binding list pods', who: 'alice', method: 'GET', url: `${NS}/pods`, want: 403 },
  { name: 'no binding get secret', who: 'alice', method: 'GET', url: `${NS}/secrets/s1`, want: 403 },
  { name: 'no binding create configmap', who: 'alice', method: 'POST', url: `${NS}/configmaps`, body: cm('x'), want: 403 },
  { name: 'no binding list nodes', who: 'alice', method: 'GET', url: '/api/v1/nodes', want: 403 },
  { name: 'no binding discovery', who: 'alice', method: 'GET', url: '/api', want: 200 },
  { name: 'view lists pods', who: 'viewer', method: 'GET', url: `${NS}/pods`, want: 200 },
  { name: 'view gets pod', who: 'viewer', method: 'GET', url: `${NS}/pods/p1`, want: 200 },
  { name: 'view reads configmaps', who: 'viewer', method: 'GET', url: `${NS}/configmaps`, want: 200 },
  { name: 'view cannot read secrets', who: 'viewer', method: 'GET', url: `${NS}/secrets/s1`, want: 403 },
  { name: 'view cannot create', who: 'viewer', method: 'POST', url: `${NS}/configmaps`, body: cm('v'), want: 403 },
  { name: 'view cannot delete', who: 'viewer', method: 'DELETE', url: `${NS}/pods/p1`, want: 403 },
  { name: 'view cannot patch', who: 'viewer', method: 'PATCH', url: `${NS}/pods/p1`, body: { metadata: { labels: { a: 'b' } } }, ct: 'application/merge-patch+json', want: 403 },
  { name: 'view other namespace', who: 'viewer', method: 'GET', url: '/api/v1/namespaces/kube-system/pods', want: 403 },
  { name: 'view cannot exec', who: 'viewer', method: 'POST', url: `${NS}/pods/p1/exec`, want: 403 },
  { name: 'edit creates configmap', who: 'editor', method: 'POST', url: `${NS}/configmaps`, body: cm('e'), want: 201 },
  { name: 'edit reads secrets', who: 'editor', method: 'GET', url: `${NS}/secrets/s1`, want: 200 },
  { name: 'edit cannot read roles', who: 'editor', method: 'GET', url: `${RBAC_NS}/roles`, want: 403 },
  { name: 'edit cannot read rolebindings', who: 'editor', method: 'GET', url: `${RBAC_NS}/rolebindings`, want: 403 },
  { name: 'edit cannot create rolebindings', who: 'editor', method: 'POST', url: `${RBAC_NS}/rolebindings`, body: rb('x', 'admin', 'editor'), want: 403 },
  { name: 'edit cannot list clusterroles', who: 'editor', method: 'GET', url: '/apis/rbac.authorization.k8s.io/v1/clusterroles', want: 403 },
  { name: 'kubelet n1 updates own node', who: 'n1', method: 'PATCH', url: '/api/v1/nodes/n1', body: { metadata: { labels: { x: 'y' } } }, ct: 'application/merge-patch+json', want: 200 },
  { name: 'kubelet n1 cannot modify node n2', who: 'n1', method: 'PATCH', url: '/api/v1/nodes/n2', body: { metadata: { labels: { x: 'y' } } }, ct: 'application/merge-patch+json', want: 403 },
  { name: 'kubelet n1 cannot delete node n2', who: 'n1', method: 'DELETE', url: '/api/v1/nodes/n2', want: 403 },
  { name: 'kubelet n1 patches own pod status', who: 'n1', method: 'PATCH', url: `${NS}/pods/p1/status`, body: { status: { message: 'hi' } }, ct: 'application/merge-patch+json', want: 200 },
  { name: 'kubelet n1 cannot patch pod bound to n2', who: 'n1', method: 'PATCH', url: `${NS}/pods/p2/status`, body: { status: { message: 'hi' } }, ct: 'application/merge-patch+json', want: 403 },
  { name: 'kubelet n1 cannot delete pod bound to n2', who: 'n1', method: 'DELETE', url: `${NS}/pods/p2`, want: 403 },
  { name: 'kubelet n1 cannot create a non-mirror pod', who: 'n1', method: 'POST', url: `${NS}/pods`, body: pod('evil', 'n1', 's2'), want: 403 },
  { name: 'kubelet n1 reads secret of its pod', who: 'n1', method: 'GET', url: `${NS}/secrets/s1`, want: 200 },
  { name: 'kubelet n1 cannot read secret of n2 pod', who: 'n1', method: 'GET', url: `${NS}/secrets/s2`, want: 403 },
  { name: 'kubelet n1 cannot list secrets', who: 'n1', method: 'GET', url: `${NS}/secrets`, want: 403 },
  { name: 'kubelet n2 cannot read secret of n1 pod', who: 'n2', method: 'GET', url: `${NS}/secrets/s1`, want: 403 },
  { name: 'SA token of a live pod authenticates (no binding → 403)', who: { bearer: 'POD' }, method: 'GET', url: `${NS}/pods`, want: 403 },
  { name: "deleted pod's token is rejected", who: { bearer: 'DELETED' }, method: 'GET', url: `${NS}/pods`, want: 401 },
  { name: 'tampered SA token rejected', who: { bearer: 'TAMPERED' }, method: 'GET', url: `${NS}/pods`, want: 401 },
  { name: 'alice cannot create a role granting secrets', who: 'alice', method: 'POST', url: `${RBAC_NS}/roles`, body: role('r1', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]), want: 403 },
  // Impersonation: each part checked with verb impersonate for the caller, then the request runs as the impersonated identity.
  { name: 'no binding impersonates admin', who: 'alice', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'kubernetes-admin' }, want: 403 },
  { name: 'no binding impersonates system:masters', who: 'alice', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'alice', 'impersonate-group': 'system:masters' }, want: 403 },
  { name: 'group without a user', who: 'alice', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-group': 'system:masters' }, want: 500 },
  { name: 'viewer impersonates a SA (view has no impersonate)', who: 'viewer', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'system:serviceaccount:default:runner' }, want: 403 },
  { name: 'view impersonating nobody still reads', who: 'viewer', method: 'GET', url: `${NS}/pods`, as: {}, want: 200 },
  { name: 'impersonator alone lists nothing', who: 'imp', method: 'GET', url: `${NS}/pods`, want: 403 },
  { name: 'impersonator as viewer lists pods', who: 'imp', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'viewer' }, want: 200 },
  { name: 'impersonator as viewer cannot read secrets', who: 'imp', method: 'GET', url: `${NS}/secrets/s1`, as: { 'impersonate-user': 'viewer' }, want: 403 },
  { name: 'impersonator as viewer cannot create', who: 'imp', method: 'POST', url: `${NS}/configmaps`, body: cm('iv'), as: { 'impersonate-user': 'viewer' }, want: 403 },
  { name: 'impersonator as alice lists nothing', who: 'imp', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'alice' }, want: 403 },
  { name: 'impersonator as alice + devs reads configmaps', who: 'imp', method: 'GET', url: `${NS}/configmaps`, as: { 'impersonate-user': 'alice', 'impersonate-group': 'devs' }, want: 200 },
  { name: 'impersonator cannot bring system:masters', who: 'imp', method: 'GET', url: `${NS}/secrets/s1`, as: { 'impersonate-user': 'alice', 'impersonate-group': 'system:masters' }, want: 403 },
  { name: 'impersonator cannot be the admin', who: 'imp', method: 'GET', url: `${NS}/secrets/s1`, as: { 'impersonate-user': 'kubernetes-admin' }, want: 403 },
  { name: 'impersonator cannot be editor', who: 'imp', method: 'GET', url: `${NS}/secrets/s1`, as: { 'impersonate-user': 'editor' }, want: 403 },
  { name: 'impersonator cannot be a kubelet', who: 'imp', method: 'GET', url: `${NS}/secrets/s1`, as: { 'impersonate-user': 'system:node:n1' }, want: 403 },
  { name: 'impersonator as SA runner (no binding) is refused by RBAC', who: 'imp', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'system:serviceaccount:default:runner' }, want: 403 },
  { name: 'impersonator as SA runner in another namespace', who: 'imp', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'system:serviceaccount:kube-system:runner' }, want: 403 },
  { name: 'impersonator as SA default/default', who: 'imp', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'system:serviceaccount:default:default' }, want: 403 },
  { name: 'impersonator with allowed uid and extra', who: 'imp', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'viewer', 'impersonate-uid': 'u-1', 'impersonate-extra-scopes': 'read' }, want: 200 },
  { name: 'impersonator with another uid', who: 'imp', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'viewer', 'impersonate-uid': 'u-2' }, want: 403 },
  { name: 'impersonator with another extra', who: 'imp', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'viewer', 'impersonate-extra-scopes': 'write' }, want: 403 },
  { name: 'editor impersonates a SA of its namespace (upstream edit)', who: 'editor', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'system:serviceaccount:default:runner' }, want: 403 },
  { name: 'editor cannot impersonate a SA elsewhere', who: 'editor', method: 'GET', url: '/api/v1/namespaces/kube-system/pods', as: { 'impersonate-user': 'system:serviceaccount:kube-system:default' }, want: 403 },
  { name: 'editor cannot impersonate users', who: 'editor', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'viewer' }, want: 403 },
  { name: 'kubelet cannot impersonate', who: 'n1', method: 'GET', url: `${NS}/secrets/s2`, as: { 'impersonate-user': 'system:node:n2', 'impersonate-group': 'system:nodes' }, want: 403 },
  { name: 'admin --as alice loses admin rights', who: 'admin', method: 'GET', url: `${NS}/secrets/s1`, as: { 'impersonate-user': 'alice' }, want: 403 },
  { name: 'admin --as viewer reads pods', who: 'admin', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'viewer' }, want: 200 },
  { name: 'admin --as kubelet n1 is held to the Node authorizer', who: 'admin', method: 'GET', url: `${NS}/secrets/s2`, as: { 'impersonate-user': 'system:node:n1', 'impersonate-group': 'system:nodes' }, want: 403 },
  { name: 'admin --as kubelet n1 reads its pod secret', who: 'admin', method: 'GET', url: `${NS}/secrets/s1`, as: { 'impersonate-user': 'system:node:n1', 'impersonate-group': 'system:nodes' }, want: 200 },
  { name: 'admin --as kubelet n1 is held to NodeRestriction', who: 'admin', method: 'PATCH', url: '/api/v1/nodes/n2', body: { metadata: { labels: { x: 'y' } } }, ct: 'application/merge-patch+json', as: { 'impersonate-user': 'system:node:n1', 'impersonate-group': 'system:nodes' }, want: 403 },
  { name: 'admin --as-group system:masters', who: 'admin', method: 'GET', url: `${NS}/secrets/s1`, as: { 'impersonate-user': 'alice', 'impersonate-group': 'system:masters' }, want: 200 },
  { name: 'anonymous cannot impersonate', who: 'anonymous', method: 'GET', url: `${NS}/pods`, as: { 'impersonate-user': 'kubernetes-admin' }, want: 401 },
  { name: 'admin can create a role', who: 'admin', method: 'POST', url: `${RBAC_NS}/roles`, body: role('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]), want: 201 },
];

test('security matrix: 0 unexpected allows, every expectation met', async () => {
  let unexpectedAllows = 0; const failures: string[] = [];
  for (const c of CASES) {
    let who = c.who;
    if (typeof who === 'object') {
      const tok = who.bearer === 'POD' ? podToken : who.bearer === 'DELETED' ? deletedPodToken : `${podToken.slice(0, -4)}AAAA`;
      who = { bearer: tok };
    }
    const res = await call(who, c.method, c.url, c.body, c.ct ?? (c.body ? 'application/json' : undefined), c.as);
    if (res.statusCode < 300 && c.want >= 400) unexpectedAllows++;
    if (res.statusCode !== c.want) failures.push(`${c.name}: got ${res.statusCode} want ${c.want}: ${res.body.slice(0, 200)}`);
  }
  assert.equal(unexpectedAllows, 0, failures.join('\n'));
  assert.deepEqual(failures, []);
});

test('403 message in Kubernetes form; 401 is a Status with reason Unauthorized', async () => {
  const r = await call('alice', 'GET', `${NS}/pods`);
  assert.equal(r.statusCode, 403);
  assert.equal(r.json().message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"');
  assert.equal(r.json().reason, 'Forbidden');
  const u = await call('anonymous', 'GET', `${NS}/pods`);
  assert.equal(u.statusCode, 401);
  assert.equal(u.json().kind, 'Status');
  assert.equal(u.json().reason, 'Unauthorized');
  const n = await call('n1', 'GET', `${NS}/secrets/s2`);
  assert.match(n.json().message, /^secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object$/);
});

test('no one grants a role they do not hold; bind/escalate verbs lift the check', async () => {
  // bob holds edit in default only via a binding admin makes.
  const mk = await call('admin', 'POST', `${RBAC_NS}/rolebindings`, rb('bob-edit', 'edit', 'bob'), 'application/json');
  assert.equal(mk.statusCode, 201, mk.body);
  const toAdmin = await call('bob', 'POST', `${RBAC_NS}/rolebindings`, rb('bob-admin', 'admin', 'bob'), 'application/json');
  assert.equal(toAdmin.statusCode, 403, toAdmin.body);
  // bob is given rights to manage rolebindings but still may not bind admin (he lacks its rules).
  const rbMgr = await call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'rb-manager' },
    rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings', 'roles'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
  }, 'application/json');
  assert.equal(rbMgr.statusCode, 201, rbMgr.body);
  assert.equal((await call('admin', 'POST', `${RBAC_NS}/rolebindings`, { ...rb('bob-rbm', 'rb-manager', 'bob') }, 'application/json')).statusCode, 201);
  const again = await call('bob', 'POST', `${RBAC_NS}/rolebindings`, rb('bob-admin', 'cluster-admin', 'bob'), 'application/json');
  assert.equal(again.statusCode, 403, again.body);
  assert.match(again.json().message, /is attempting to grant RBAC permissions not currently held/);
  // Binding view (a subset of what bob holds) is fine.
  const view = await call('bob', 'POST', `${RBAC_NS}/rolebindings`, rb('alice-view', 'view', 'alice'), 'application/json');
  assert.equal(view.statusCode, 201, view.body);
  // A role bob holds every rule of is fine; one with more is not.
  assert.equal((await call('bob', 'POST', `${RBAC_NS}/roles`, role('cm-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]), 'application/json')).statusCode, 201);
  assert.equal((await call('bob', 'POST', `${RBAC_NS}/roles`, role('node-reader', [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]), 'application/json')).statusCode, 403);
  // Updating a role to escalate is refused too.
  const upd = await call('bob', 'PATCH', `${RBAC_NS}/roles/cm-reader`, { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }, 'application/merge-patch+json');
  assert.equal(upd.statusCode, 403, upd.body);
});

test('SelfSubjectAccessReview answers for the caller (JSON)', async () => {
  const ask = async (who: Who, verb: string, resource: string, namespace = 'default') => {
    const r = await call(who, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb, resource, namespace } },
    }, 'application/json');
    assert.equal(r.statusCode, 201, r.body);
    return r.json().status.allowed as boolean;
  };
  assert.equal(await ask('viewer', 'list', 'pods'), true);
  assert.equal(await ask('viewer', 'create', 'pods'), false);
  assert.equal(await ask('admin', 'delete', 'nodes', ''), true);
});

test('impersonation: upstream 403 message; whoami and can-i answer for the impersonated identity', async () => {
  const r = await call('alice', 'GET', `${NS}/pods`, undefined, undefined, { 'impersonate-user': 'x' });
  assert.equal(r.statusCode, 403);
  assert.equal(r.json().message, 'users "x" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
  assert.equal(r.json().reason, 'Forbidden');
  assert.deepEqual(r.json().details, { name: 'x', kind: 'users' });
  const sa = await call('viewer', 'GET', `${NS}/pods`, undefined, undefined, { 'impersonate-user': 'system:serviceaccount:default:default' });
  assert.equal(sa.json().message, 'serviceaccounts "default" is forbidden: User "viewer" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"');
  // The request's own 403 names the impersonated user.
  const asAlice = await call('admin', 'GET', `${NS}/secrets`, undefined, undefined, { 'impersonate-user': 'alice' });
  assert.equal(asAlice.json().message, 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default"');
  // edit may impersonate its namespace's service accounts (upstream): refused by RBAC as the SA, not as the editor.
  const asRunner = await call('editor', 'GET', `${NS}/pods`, undefined, undefined, { 'impersonate-user': 'system:serviceaccount:default:runner' });
  assert.equal(asRunner.json().message, 'pods is forbidden: User "system:serviceaccount:default:runner" cannot list resource "pods" in API group "" in the namespace "default"');
  // kubectl auth whoami --as / --as-group (SelfSubjectReview).
  const who = await call('admin', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, 'application/json',
    { 'impersonate-user': 'someone', 'impersonate-group': 'devs' });
  assert.equal(who.statusCode, 201, who.body);
  assert.deepEqual(who.json().status.userInfo, { username: 'someone', groups: ['devs', 'system:authenticated'] });
  const saWho = await call('admin', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, 'application/json',
    { 'impersonate-user': 'system:serviceaccount:default:default' });
  assert.deepEqual(saWho.json().status.userInfo.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
  // kubectl auth can-i list secrets --as=system:serviceaccount:default:default → no.
  const canI = await call('admin', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'list', resource: 'secrets', namespace: 'default' } },
  }, 'application/json', { 'impersonate-user': 'system:serviceaccount:default:default' });
  assert.equal(canI.statusCode, 201, canI.body);
  assert.equal(canI.json().status.allowed, false);
  // Objects created while impersonating are made by the impersonated user (admission sees it).
  const made = await call('imp', 'POST', `${NS}/configmaps`, cm('by-devs'), 'application/json', { 'impersonate-user': 'alice', 'impersonate-group': 'devs' });
  assert.equal(made.statusCode, 403, 'devs only view');
});
