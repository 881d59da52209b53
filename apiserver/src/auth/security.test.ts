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
  admin: 'tok-admin', alice: 'tok-alice', viewer: 'tok-viewer', editor: 'tok-editor', n1: 'tok-n1', n2: 'tok-n2', bob: 'tok-bob',
};

type Who = keyof typeof TOKENS | 'anonymous' | 'badtoken' | { bearer: string };
async function call(who: Who, method: string, url: string, payload?: unknown, contentType?: string) {
  const headers: Record<string, string> = {};
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
    'tok-n1,system:node:n1,uid-n1,"system:nodes"', 'tok-n2,system:node:n2,uid-n2,"system:nodes"',
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

interface Case { who: Who; method: string; url: string; body?: unknown; ct?: string; want: number; name: string }
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
    const res = await call(who, c.method, c.url, c.body, c.ct ?? (c.body ? 'application/json' : undefined));
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
