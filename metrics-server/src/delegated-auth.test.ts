import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCa, issueCertificate } from '@mk8s/component-base/pki';
import { DelegatedAuth } from './delegated-auth.js';

let dir = '';
const der = (pem: string) => new X509Certificate(pem).raw;
let proxyCaPem = '', clientCaPem = '', frontProxy = '', otherName = '', alice = '', rogue = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk8s-ms-auth-'));
  const proxyCa = await ensureCa({ cert: join(dir, 'p.crt'), key: join(dir, 'p.key') }, new Date(), 'front-proxy-ca');
  const clientCa = await ensureCa({ cert: join(dir, 'c.crt'), key: join(dir, 'c.key') }, new Date(), 'mk8s-ca');
  const rogueCa = await ensureCa({ cert: join(dir, 'r.crt'), key: join(dir, 'r.key') }, new Date(), 'front-proxy-ca'); // same name, other key
  proxyCaPem = proxyCa.certPem; clientCaPem = clientCa.certPem;
  frontProxy = (await issueCertificate(proxyCa, { commonName: 'front-proxy-client', usage: 'client' })).certPem;
  otherName = (await issueCertificate(proxyCa, { commonName: 'someone-else', usage: 'client' })).certPem;
  alice = (await issueCertificate(clientCa, { commonName: 'alice', organizations: ['devs'], usage: 'client' })).certPem;
  rogue = (await issueCertificate(rogueCa, { commonName: 'front-proxy-client', usage: 'client' })).certPem;
});
after(() => rm(dir, { recursive: true, force: true }));

function auth(reviews: unknown[] = []) {
  return new DelegatedAuth({
    requestHeader: { clientCA: proxyCaPem, allowedNames: ['front-proxy-client'] }, clientCA: clientCaPem, now: () => Date.now(),
    tokenReview: async (b) => { reviews.push(b); return { status: { authenticated: true, user: { username: 'system:serviceaccount:ns:sa', uid: 'u1', groups: ['system:serviceaccounts'] } } }; },
    subjectAccessReview: async () => ({ status: { allowed: true } }),
  });
}
const hdrs = { 'x-remote-user': 'bob', 'x-remote-group': 'g1, system:authenticated', 'x-remote-extra-scopes': 'a', 'x-remote-extra-reason%2fwhy': 'b' };

test('the front proxy certificate carries the user in X-Remote-* headers', async () => {
  assert.deepEqual(await auth().authenticate(hdrs, [der(frontProxy)]), { username: 'bob', groups: ['g1', 'system:authenticated'], extra: { scopes: ['a'], 'reason/why': ['b'] } });
});

test('headers are ignored without a trusted proxy certificate (CN not allowed, other CA with the same name, none)', async () => {
  for (const peer of [[der(otherName)], [der(rogue)], []]) {
    assert.deepEqual(await auth().authenticate({ ...hdrs }, peer), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  }
});

test('a client certificate of the client CA is its CN and O', async () => {
  assert.deepEqual(await auth().authenticate({}, [der(alice)]), { username: 'alice', groups: ['devs', 'system:authenticated'] });
});

test('a bearer token is reviewed once and cached', async () => {
  const reviews: unknown[] = [];
  const a = auth(reviews);
  const h = { authorization: 'Bearer abc' };
  assert.equal((await a.authenticate(h, []))?.username, 'system:serviceaccount:ns:sa');
  await a.authenticate(h, []);
  assert.equal(reviews.length, 1);
  assert.deepEqual(reviews[0], { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'abc' } });
});

test('authorize sends a SubjectAccessReview with the resource attributes; health paths need none', async () => {
  const sars: unknown[] = [];
  const a = new DelegatedAuth({ now: () => 0, tokenReview: async () => ({}), subjectAccessReview: async (b) => { sars.push(b); return { status: { allowed: false, reason: 'no RBAC' } }; } });
  const bob = { username: 'bob', groups: ['system:authenticated'] };
  assert.deepEqual(await a.authorize(bob, { kind: 'nonResource', verb: 'get', path: '/readyz' }), { allowed: true });
  assert.deepEqual(await a.authorize(bob, { kind: 'resource', verb: 'list', group: 'metrics.k8s.io', version: 'v1beta1', resource: 'pods', namespace: 'ns', name: '' }), { allowed: false, reason: 'no RBAC' });
  assert.deepEqual(sars, [{ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'bob', groups: ['system:authenticated'], resourceAttributes: { verb: 'list', group: 'metrics.k8s.io', version: 'v1beta1', resource: 'pods', namespace: 'ns', name: '' } } }]);
});
