/**
 * TokenRequest → TokenReview / SelfSubjectReview on the in-memory secure server (token file,
 * ServiceAccount signing key, Node,RBAC): a pod-bound token names its ServiceAccount until the pod goes.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { buildSecurity } from '../auth/security.js';

const dir = mkdtempSync(join(tmpdir(), 'mk8s-authn-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a TokenRequest token authenticates as its ServiceAccount (TokenReview, SelfSubjectReview) until its pod is deleted', async (t) => {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  writeFileSync(join(dir, 'tokens.csv'), 'tok-admin,kubernetes-admin,uid-admin,"system:masters"\ntok-n1,system:node:n1,uid-n1,"system:nodes"\ntok-n2,system:node:n2,uid-n2,"system:nodes"\n');
  const sec = buildSecurity({ tokenAuthFile: join(dir, 'tokens.csv'), serviceAccountSigningKeyFile: join(dir, 'sa.key'), authorizationModes: ['Node', 'RBAC'] },
    { clock, logger: silentLogger() });
  const app = await buildApiServer({
    storage: new MemoryStorage(), logger: silentLogger(), clock, authenticators: sec.authenticators!, authorizers: sec.authorizers!,
    admission: sec.admission, plugins: sec.plugins, serviceAccountTokenIssuer: sec.tokenIssuer!,
  });
  await app.ready();
  t.after(() => app.close());
  const call = (bearer: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${bearer}` }, ...(payload ? { payload } : {}) });

  assert.equal((await call('tok-admin', 'POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } })).statusCode, 201);
  const pod = (await call('tok-admin', 'POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  })).json();
  const bound = { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: pod.metadata.uid } } };
  // The kubelet of the pod's node may ask for it; another node may not.
  const issued = await call('tok-n1', 'POST', '/api/v1/namespaces/default/serviceaccounts/default/token', bound);
  assert.equal(issued.statusCode, 201, issued.body);
  const other = await call('tok-n2', 'POST', '/api/v1/namespaces/default/serviceaccounts/default/token', bound);
  assert.equal(other.statusCode, 403);
  assert.equal(other.json().message, 'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node');

  const token = issued.json().status.token as string;
  const review = await call('tok-admin', 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
  assert.equal(review.statusCode, 201, review.body);
  assert.equal(review.json().status.authenticated, true);
  assert.equal(review.json().status.user.username, 'system:serviceaccount:default:default');
  assert.deepEqual(review.json().status.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
  assert.deepEqual(review.json().status.user.extra['authentication.kubernetes.io/pod-name'], ['p']);
  const whoami = await call(token, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  assert.equal(whoami.statusCode, 201, whoami.body);
  assert.equal(whoami.json().status.userInfo.username, 'system:serviceaccount:default:default');

  assert.equal((await call('tok-admin', 'DELETE', '/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0')).statusCode, 200);
  assert.equal((await call(token, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {})).statusCode, 401);
  const after = await call('tok-admin', 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token } });
  assert.equal(after.json().status.authenticated, undefined);
});

test('reviewToken answers with a requestheader authenticator first in the chain (it is no token authenticator)', async () => {
  const { reviewToken } = await import('./index.js');
  const { RequestHeaderAuthenticator } = await import('../auth/request-header.js');
  const { TokenFileAuthenticator, parseTokenFile } = await import('../auth/token-file.js');
  const rh = new RequestHeaderAuthenticator({ clientCA: '', allowedNames: [], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeadersPrefixes: ['X-Remote-Extra-'] });
  const tf = new TokenFileAuthenticator(parseTokenFile('tok-sa,system:serviceaccount:kube-system:metrics-server,uid-1,"system:serviceaccounts"\n'));
  assert.equal((await reviewToken([rh, tf], 'tok-sa'))?.username, 'system:serviceaccount:kube-system:metrics-server');
  assert.equal(await reviewToken([rh, tf], 'nope'), undefined);
});
