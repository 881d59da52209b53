/**
 * Audit through the real request pipeline (fastify inject, MemoryStorage): one event per stage at
 * the policy's level, user and impersonatedUser, responseStatus, Audit-Id, no Secret value ever.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import type { FastifyInstance } from 'fastify';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import type { Authenticator, UserInfo } from '../auth/authentication.js';
import type { Authorizer } from '../auth/authorization.js';
import { Auditor, type AuditEvent } from './audit.js';
import { parseAuditPolicy } from './policy.js';

const POLICY = parseAuditPolicy(`
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/healthz*"]
  - level: Metadata
    resources: [{group: "", resources: [secrets, configmaps]}]
  - level: RequestResponse
    resources: [{group: "", resources: [namespaces]}]
  - level: Request
    verbs: [create, update, patch, delete]
  - level: Metadata
`);
const USERS: Record<string, UserInfo> = {
  'tok-admin': { username: 'admin', uid: 'u-admin', groups: ['system:masters', 'system:authenticated'] },
  'tok-alice': { username: 'alice', groups: ['system:authenticated'] },
};
const tokenAuth: Authenticator = {
  name: 'Fake',
  authenticate: async (req: IncomingMessage) => {
    const h = req.headers.authorization;
    if (!h) return undefined;
    const u = USERS[h.replace(/^Bearer /, '')];
    if (!u) throw Object.assign(new Error('Unauthorized'), {});
    return u;
  },
};
// admin may do anything (impersonate included); alice nothing.
const authz: Authorizer = { name: 'Fake', authorize: async (a) => (a.user.groups.includes('system:masters') ? { decision: 'Allow' } : { decision: 'NoOpinion', reason: 'no RBAC policy matched' }) };

const lines: string[] = [];
let app: FastifyInstance;
const clock = new FakeClock(Date.parse('2026-02-01T10:00:00Z'));
before(async () => {
  app = await buildApiServer({
    storage: new MemoryStorage(), logger: silentLogger(), clock, authenticators: [tokenAuth], authorizers: [authz],
    audit: new Auditor({ policy: POLICY, backend: { write: (l) => { lines.push(l); }, close: () => undefined }, clock }),
    plugins: [(a) => { a.get('/boom', async () => { throw new Error('a bug'); }); }],
  });
  await app.ready();
});
after(async () => { await app?.close(); });

const events = (since: number) => lines.slice(since).map((l) => JSON.parse(l) as AuditEvent);
async function call(token: string | undefined, method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) {
  const since = lines.length;
  const res = await app.inject({ method: method as 'GET', url, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(payload ? { 'content-type': 'application/json' } : {}), ...headers }, ...(payload ? { payload: payload as object } : {}) });
  return { res, events: events(since) };
}

test('a Secret is audited at Metadata: two stages, objectRef, and no byte of its value', async () => {
  const { res, events: ev } = await call('tok-admin', 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { password: 'sup3r-s3cret' } },
    { 'user-agent': 'kubectl/v1.32.0', 'audit-id': 'client-chosen-id' });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.headers['audit-id'], 'client-chosen-id');
  assert.deepEqual(ev.map((e) => [e.stage, e.level, e.auditID]), [['RequestReceived', 'Metadata', 'client-chosen-id'], ['ResponseComplete', 'Metadata', 'client-chosen-id']]);
  const done = ev[1]!;
  assert.equal(done.kind, 'Event'); assert.equal(done.apiVersion, 'audit.k8s.io/v1');
  assert.equal(done.verb, 'create');
  assert.equal(done.requestURI, '/api/v1/namespaces/default/secrets');
  assert.deepEqual(done.user, { username: 'admin', uid: 'u-admin', groups: ['system:masters', 'system:authenticated'] });
  // The created object's name, as upstream fills objectRef.name for creates at every level.
  assert.deepEqual(done.objectRef, { resource: 'secrets', namespace: 'default', apiVersion: 'v1', name: 'db' });
  assert.deepEqual(done.responseStatus, { metadata: {}, code: 201 });
  assert.equal(done.userAgent, 'kubectl/v1.32.0');
  assert.deepEqual(done.annotations, { 'authorization.k8s.io/decision': 'allow' });
  assert.match(done.stageTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.equal(done.requestObject, undefined); assert.equal(done.responseObject, undefined);
  const get = await call('tok-admin', 'GET', '/api/v1/namespaces/default/secrets/db');
  assert.equal(get.events.length, 2);
  for (const l of lines) assert.ok(!l.includes('sup3r') && !l.includes(Buffer.from('sup3r-s3cret').toString('base64')), l);
});

test('Request carries the request body, RequestResponse the response too', async () => {
  const cm = await call('tok-admin', 'POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
  assert.equal(cm.res.statusCode, 201, cm.res.body);
  const done = cm.events.find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(done.level, 'Request');
  assert.equal((done.requestObject as { metadata: { name: string } }).metadata.name, 'p');
  assert.equal(done.responseObject, undefined);
  const ns = await call('tok-admin', 'GET', '/api/v1/namespaces/default');
  const nsDone = ns.events.find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(nsDone.level, 'RequestResponse');
  assert.equal((nsDone.responseObject as { metadata: { name: string } }).metadata.name, 'default');
  assert.equal(nsDone.responseObject && (nsDone.responseObject as { kind: string }).kind, 'Namespace');
});

test('refusals are audited: 403 with the decision and Status, 401 without a user; /healthz not at all (None)', async () => {
  const f = await call('tok-alice', 'GET', '/api/v1/namespaces/default/pods');
  assert.equal(f.res.statusCode, 403);
  const done = f.events.find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(done.responseStatus?.code, 403);
  assert.equal(done.responseStatus?.reason, 'Forbidden');
  assert.equal(done.responseStatus?.status, 'Failure');
  assert.match(done.responseStatus?.message ?? '', /User "alice" cannot list resource "pods"/);
  assert.equal(done.annotations?.['authorization.k8s.io/decision'], 'forbid');
  assert.equal(done.annotations?.['authorization.k8s.io/reason'], 'no RBAC policy matched');
  const anon = await call(undefined, 'GET', '/api/v1/pods');
  assert.equal(anon.res.statusCode, 401);
  assert.deepEqual(anon.events.map((e) => [e.stage, e.responseStatus?.code ?? null]), [['RequestReceived', null], ['ResponseComplete', 401]]);
  assert.deepEqual(anon.events[1]!.user, {});
  assert.match(String(anon.res.headers['audit-id']), /^[0-9a-f-]{36}$/);
  const h = await call('tok-admin', 'GET', '/healthz');
  assert.equal(h.res.statusCode, 200);
  assert.deepEqual(h.events, []);
});

test('impersonation: user is the caller, impersonatedUser the identity it ran as', async () => {
  const r = await call('tok-admin', 'GET', '/api/v1/namespaces/default/configmaps', undefined, { 'impersonate-user': 'alice', 'impersonate-group': 'devs' });
  assert.equal(r.res.statusCode, 403, 'alice (devs) may not list');
  const done = r.events.find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(done.user.username, 'admin');
  assert.deepEqual(done.impersonatedUser, { username: 'alice', groups: ['devs', 'system:authenticated'] });
  // RequestReceived comes before impersonation, as upstream's.
  assert.equal(r.events[0]!.impersonatedUser, undefined);
  // A refused impersonation is audited with the caller only.
  const refused = await call('tok-alice', 'GET', '/api/v1/namespaces/default/configmaps', undefined, { 'impersonate-user': 'admin' });
  assert.equal(refused.res.statusCode, 403);
  const rd = refused.events.find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(rd.user.username, 'alice');
  assert.equal(rd.impersonatedUser, undefined);
});

test('an unexpected error is the Panic stage', async () => {
  const r = await call('tok-admin', 'GET', '/boom');
  assert.equal(r.res.statusCode, 500);
  assert.deepEqual(r.events.map((e) => e.stage), ['RequestReceived', 'Panic']);
  assert.equal(r.events[1]!.responseStatus?.code, 500);
});

test('a body nested far too deep: 400, audited without its requestObject, the server alive', async () => {
  const depth = 200_000;
  const deep = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  const r = await call('tok-admin', 'POST', '/api/v1/namespaces/default/pods', deep);
  assert.equal(r.res.statusCode, 400, r.res.body);
  const done = r.events.find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(done.level, 'Request');
  assert.equal(done.requestObject, undefined, 'not decodable by the handler: not logged');
  assert.equal((await call('tok-admin', 'GET', '/api/v1/namespaces/default')).res.statusCode, 200);
});

test('an event that cannot be serialized is written without its bodies, never thrown', () => {
  const written: string[] = [];
  const auditor = new Auditor({ policy: POLICY, backend: { write: (l) => { written.push(l); }, close: () => undefined }, clock });
  const cyclic: Record<string, unknown> = {}; cyclic['self'] = cyclic;
  const ctx = { event: { kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Request', auditID: 'a', stage: 'RequestReceived', requestURI: '/x', verb: 'create', user: {}, sourceIPs: [], requestReceivedTimestamp: '', stageTimestamp: '', requestObject: cyclic } as AuditEvent, omit: [], panicked: false, done: false };
  (auditor as unknown as { emit: (c: unknown, s: string) => void }).emit(ctx, 'ResponseComplete');
  const ev = JSON.parse(written[0]!) as AuditEvent;
  assert.equal(ev.requestObject, undefined);
  assert.match(ev.annotations?.['audit.mk8s.io/bodies-omitted'] ?? '', /circular/i);
});
