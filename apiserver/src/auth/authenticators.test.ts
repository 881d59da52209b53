import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { FakeClock } from '@mk8s/component-base/testing';
import { isUnauthorized, type KubeObject } from '@mk8s/api';
import { X509Authenticator } from './x509.js';
import { parseTokenFile, TokenFileAuthenticator, bearerToken } from './token-file.js';
import { ServiceAccountAuthenticator, ServiceAccountTokenIssuer } from './service-account.js';
import { isPublicPath, PublicPathsAnonymousAuthenticator } from './anonymous.js';
import { decodeAccessReview } from '../authorization-api/protobuf.js';
import { ruleAllows, uncoveredRules } from './rbac.js';

const req = (o: { headers?: Record<string, string>; url?: string; socket?: unknown }) =>
  ({ headers: o.headers ?? {}, url: o.url ?? '/', socket: o.socket ?? {} }) as unknown as IncomingMessage;

test('x509: CN is the user, O the groups; unverified certificates are refused; no cert: no opinion', async () => {
  const a = new X509Authenticator();
  const sock = (authorized: boolean, subject: unknown) => ({ authorized, getPeerCertificate: () => (subject ? { subject } : {}) });
  assert.deepEqual(await a.authenticate(req({ socket: sock(true, { CN: 'system:node:n1', O: 'system:nodes' }) })),
    { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] });
  assert.deepEqual((await a.authenticate(req({ socket: sock(true, { CN: 'admin', O: ['a', 'b'] }) })))?.groups, ['a', 'b', 'system:authenticated']);
  await assert.rejects(a.authenticate(req({ socket: sock(false, { CN: 'x' }) })), isUnauthorized);
  assert.equal(await a.authenticate(req({ socket: sock(true, undefined) })), undefined);
  assert.equal(await a.authenticate(req({})), undefined);
});

test('x509: the certificate is read once per connection; past its notAfter the connection is refused', async () => {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const a = new X509Authenticator(() => clock.now());
  let reads = 0;
  const socket = { authorized: true, getPeerCertificate: () => { reads++; return { subject: { CN: 'kubelet' }, valid_from: 'Dec 31 00:00:00 2025 GMT', valid_to: 'Jan  2 00:00:00 2026 GMT' }; } };
  for (let i = 0; i < 3; i++) assert.equal((await a.authenticate(req({ socket })))?.username, 'kubelet');
  assert.equal(reads, 1);
  clock.step(2 * 24 * 3600_000);
  await assert.rejects(a.authenticate(req({ socket })), isUnauthorized);
});

test('token file: upstream CSV with quoted groups; unknown tokens get no opinion', async () => {
  const tokens = parseTokenFile('# comment\nt1,alice,u1,"dev,ops"\nt2,bob,u2\n');
  assert.deepEqual(tokens.get('t1'), { username: 'alice', uid: 'u1', groups: ['dev', 'ops', 'system:authenticated'] });
  const a = new TokenFileAuthenticator(tokens);
  assert.equal((await a.authenticate(req({ headers: { authorization: 'Bearer t2' } })))?.username, 'bob');
  assert.equal(await a.authenticate(req({ headers: { authorization: 'Bearer t3' } })), undefined);
  assert.equal(bearerToken({ headers: { authorization: 'Basic abc' } }), undefined);
  assert.throws(() => parseTokenFile('onlytoken\n'));
});

test('ServiceAccount tokens: audience, expiry, signature and live pod/SA checked', async () => {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const k = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'ns', uid: 'sa-uid' } } as KubeObject;
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'pod-uid' }, spec: { nodeName: 'n1' } } as KubeObject;
  const objects = new Map<string, KubeObject>([['sa', sa], ['pod', pod]]);
  const auth = new ServiceAccountAuthenticator({
    publicKeyPems: [k.publicKey.export({ type: 'spki', format: 'pem' }) as string], clock,
    getServiceAccount: async () => objects.get('sa'), getPod: async () => objects.get('pod'),
  });
  const issuer = new ServiceAccountTokenIssuer({ privateKeyPem: k.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, clock });
  const bearer = (t: string) => req({ headers: { authorization: `Bearer ${t}` } });
  const tok = issuer.issue(sa, { pod, expirationSeconds: 600 });
  const u = await auth.authenticate(bearer(tok));
  assert.equal(u?.username, 'system:serviceaccount:ns:default');
  assert.deepEqual(u?.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated']);
  assert.deepEqual(u?.extra?.['authentication.kubernetes.io/pod-name'], ['p']);
  await assert.rejects(auth.authenticate(bearer(issuer.issue(sa, { audiences: ['other'] }))), isUnauthorized);
  const forged = new ServiceAccountTokenIssuer({ privateKeyPem: other.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, clock }).issue(sa);
  await assert.rejects(auth.authenticate(bearer(forged)), isUnauthorized);
  clock.step(601_000);
  await assert.rejects(auth.authenticate(bearer(tok)), isUnauthorized, 'expired');
  const fresh = issuer.issue(sa, { pod });
  objects.set('pod', { ...pod, metadata: { ...pod.metadata, uid: 'recreated' } });
  await assert.rejects(auth.authenticate(bearer(fresh)), isUnauthorized, 'pod replaced');
  objects.delete('pod');
  await assert.rejects(auth.authenticate(bearer(fresh)), isUnauthorized, 'pod deleted');
  const saOnly = issuer.issue(sa);
  objects.delete('sa');
  await assert.rejects(auth.authenticate(bearer(saOnly)), isUnauthorized, 'sa deleted');
  assert.equal(await auth.authenticate(bearer('not.a.jwt')), undefined);
});

test('anonymous only on the public paths', async () => {
  for (const p of ['/healthz', '/livez?verbose', '/readyz/etcd', '/version']) assert.ok(isPublicPath(p), p);
  for (const p of ['/api', '/healthzz', '/metrics', '/api/v1/pods']) assert.ok(!isPublicPath(p), p);
  assert.equal(await new PublicPathsAnonymousAuthenticator().authenticate(req({ url: '/api' })), undefined);
});

test('RBAC rule matching: subresources, resourceNames, non-resource URLs; coverage', () => {
  const user = { username: 'u', groups: [] };
  const a = (o: Record<string, unknown>) => ({ user, resourceRequest: true, apiGroup: '', namespace: 'd', name: '', subresource: '', ...o }) as unknown as Parameters<typeof ruleAllows>[0];
  assert.ok(ruleAllows(a({ verb: 'get', resource: 'pods', subresource: 'log' }), { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }));
  assert.ok(!ruleAllows(a({ verb: 'get', resource: 'pods', subresource: 'log' }), { verbs: ['get'], apiGroups: [''], resources: ['pods'] }));
  assert.ok(ruleAllows(a({ verb: 'get', resource: 'pods', subresource: 'status' }), { verbs: ['get'], apiGroups: [''], resources: ['*/status'] }));
  assert.ok(!ruleAllows(a({ verb: 'list', resource: 'secrets' }), { verbs: ['list'], apiGroups: [''], resources: ['secrets'], resourceNames: ['x'] }));
  assert.ok(ruleAllows(a({ verb: 'get', resource: 'secrets', name: 'x' }), { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['x'] }));
  assert.ok(ruleAllows({ user, verb: 'get', resourceRequest: false, path: '/healthz/etcd' }, { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }));
  assert.ok(!ruleAllows({ user, verb: 'post', resourceRequest: false, path: '/healthz' }, { verbs: ['get'], nonResourceURLs: ['*'] }));
  assert.deepEqual(uncoveredRules([{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]), []);
  assert.equal(uncoveredRules([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get'], apiGroups: ['*'], resources: ['pods'] }]).length, 1);
  assert.equal(uncoveredRules([{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]).length, 1);
});

// A SelfSubjectAccessReview as client-go's protobuf serializer writes it (hand-assembled).
function pbString(field: number, s: string): Buffer { const b = Buffer.from(s); return Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]); }
function pbMsg(field: number, m: Buffer): Buffer { return Buffer.concat([Buffer.from([(field << 3) | 2, m.length]), m]); }

test('protobuf SelfSubjectAccessReview (kubectl auth can-i) decodes', () => {
  const ra = Buffer.concat([pbString(1, 'default'), pbString(2, 'list'), pbString(3, ''), pbString(5, 'pods')]);
  const review = Buffer.concat([pbMsg(1, Buffer.alloc(0)), pbMsg(2, pbMsg(1, ra)), pbMsg(3, Buffer.alloc(0))]);
  const typeMeta = Buffer.concat([pbString(1, 'authorization.k8s.io/v1'), pbString(2, 'SelfSubjectAccessReview')]);
  const body = Buffer.concat([Buffer.from('k8s\0', 'binary'), pbMsg(1, typeMeta), pbMsg(2, review), pbString(3, ''), pbString(4, '')]);
  const out = decodeAccessReview(body);
  assert.equal(out['kind'], 'SelfSubjectAccessReview');
  // Empty strings are omitted, as Go's JSON omitempty does (the core group is '').
  assert.deepEqual(out['spec'], { resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' } });
  assert.throws(() => decodeAccessReview(Buffer.from('{"x":1}')));
  assert.throws(() => decodeAccessReview(Buffer.concat([Buffer.from('k8s\0', 'binary'), Buffer.from([0x0a, 0x7f])])));
});
