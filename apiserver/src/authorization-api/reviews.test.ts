import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { AlwaysAllowAuthorizer } from '../auth/authorization.js';
import { registerAuthorizationApi } from './index.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(),
    plugins: [(a) => registerAuthorizationApi(a, { authorizers: [new AlwaysAllowAuthorizer()] })] });
  await app.ready();
  t.after(() => app.close());
  return app;
}
const LSAR = '/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews';
const lsar = (ns: string | undefined, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: ns ? { namespace: ns } : {},
  spec: { user: 'alice', resourceAttributes: { namespace: 'team', verb: 'get', resource: 'pods' }, ...extra },
});

test('LocalSubjectAccessReview: answered in the URL namespace', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: LSAR, payload: lsar(undefined) });
  assert.equal(res.statusCode, 201, res.body);
  const o = res.json();
  assert.equal(o.kind, 'LocalSubjectAccessReview');
  assert.equal(o.metadata.namespace, 'team');
  assert.equal(o.status.allowed, true);
});

test('LocalSubjectAccessReview: another namespace in resourceAttributes is 422, nonResourceAttributes too', async (t) => {
  const app = await setup(t);
  const other = await app.inject({ method: 'POST', url: LSAR, payload: lsar('team', { resourceAttributes: { namespace: 'other', verb: 'get', resource: 'pods' } }) });
  assert.equal(other.statusCode, 422);
  assert.equal(other.json().details.causes[0].field, 'spec.resourceAttributes.namespace');
  const nonRes = await app.inject({ method: 'POST', url: LSAR, payload: { ...lsar('team'), spec: { user: 'alice', nonResourceAttributes: { path: '/x', verb: 'get' } } } });
  assert.equal(nonRes.statusCode, 422);
  const mismatch = await app.inject({ method: 'POST', url: LSAR, payload: lsar('elsewhere') });
  assert.equal(mismatch.statusCode, 400);
});

test('discovery and OpenAPI list the review kinds as create-only', async (t) => {
  const app = await setup(t);
  const authz = (await app.inject({ method: 'GET', url: '/apis/authorization.k8s.io/v1' })).json();
  const byName = Object.fromEntries(authz.resources.map((r: { name: string; verbs: string[]; namespaced: boolean }) => [r.name, r]));
  assert.deepEqual(byName['subjectaccessreviews'].verbs, ['create']);
  assert.equal(byName['localsubjectaccessreviews'].namespaced, true);
  const authn = (await app.inject({ method: 'GET', url: '/apis/authentication.k8s.io/v1' })).json();
  assert.ok(authn.resources.some((r: { name: string }) => r.name === 'tokenreviews'));
  const index = (await app.inject({ method: 'GET', url: '/openapi/v3' })).json();
  assert.ok(index.paths['apis/authorization.k8s.io/v1']);
  // The review kinds are not stored: GET on the collection is not served.
  assert.equal((await app.inject({ method: 'GET', url: '/apis/authorization.k8s.io/v1/subjectaccessreviews' })).statusCode >= 400, true);
});
