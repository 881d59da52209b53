import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from './testing/memory-storage.js';
import { ApiError } from '@mk8s/api';
import { buildApiServer, isLongRunningRequest } from './server.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const storage = new MemoryStorage();
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const app = await buildApiServer({ storage, logger: silentLogger(), clock });
  await app.ready();
  t.after(() => app.close());
  return { app, storage, clock };
}

const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] }, ...extra,
});
const deployment = (name: string, replicas = 1) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
});

describe('resource CRUD', () => {
  test('POST creates a pod with uid, creationTimestamp, resourceVersion and kind', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('web') });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(res.headers['content-type'] as string, /^application\/json/);
    const body = res.json();
    assert.equal(body.kind, 'Pod');
    assert.equal(body.apiVersion, 'v1');
    assert.match(body.metadata.resourceVersion, /^\d+$/);
    assert.ok(body.metadata.uid);
    assert.equal(body.metadata.creationTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(body.metadata.namespace, 'default');
    assert.equal(body.status.phase, 'Pending');
  });

  test('create of an existing name is 409 AlreadyExists', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('web') });
    const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('web') });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().reason, 'AlreadyExists');
    assert.equal(res.json().message, 'pods "web" already exists');
    assert.equal(res.json().kind, 'Status');
  });

  test('GET of a missing object is 404 NotFound with upstream message', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'GET', url: '/apis/apps/v1/namespaces/default/deployments/nope' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'deployments.apps "nope" not found',
      reason: 'NotFound', details: { name: 'nope', group: 'apps', kind: 'deployments' }, code: 404,
    });
  });

  test('generateName produces a 5-char suffix', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: { metadata: { generateName: 'cm-' } } });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(res.json().metadata.name, /^cm-[a-z0-9]{5}$/);
  });

  test('namespace in body must match URL', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: { ...pod('x'), metadata: { name: 'x', namespace: 'other' } } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().message, 'the namespace of the provided object does not match the namespace sent on the request');
  });

  test('create into a missing namespace is 404', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/nope/configmaps', payload: { metadata: { name: 'a' } } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().message, 'namespaces "nope" not found');
  });

  test('list carries kind, apiVersion and resourceVersion; label and field selectors filter', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('a', { metadata: { name: 'a', labels: { app: 'x' } } }) });
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('b') });
    const all = (await app.inject({ method: 'GET', url: '/api/v1/pods' })).json();
    assert.equal(all.kind, 'PodList');
    assert.equal(all.apiVersion, 'v1');
    assert.match(all.metadata.resourceVersion, /^\d+$/);
    assert.equal(all.items.length, 2);
    assert.equal(all.items[0].kind, 'Pod');
    const sel = (await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods?labelSelector=app%3Dx' })).json();
    assert.deepEqual(sel.items.map((p: { metadata: { name: string } }) => p.metadata.name), ['a']);
    const fs = (await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Db' })).json();
    assert.deepEqual(fs.items.map((p: { metadata: { name: string } }) => p.metadata.name), ['b']);
    const bad = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods?fieldSelector=spec.foo%3Db' });
    assert.equal(bad.statusCode, 400);
  });

  test('update is compare-and-swap on resourceVersion', async (t) => {
    const { app } = await setup(t);
    const created = (await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: { metadata: { name: 'c' }, data: { a: '1' } } })).json();
    const ok = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/default/configmaps/c', payload: { ...created, data: { a: '2' } } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.notEqual(ok.json().metadata.resourceVersion, created.metadata.resourceVersion);
    const stale = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/default/configmaps/c', payload: { ...created, data: { a: '3' } } });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().reason, 'Conflict');
    assert.equal(stale.json().message, 'Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again');
    const uncond = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/default/configmaps/c', payload: { metadata: { name: 'c' }, data: { a: '4' } } });
    assert.equal(uncond.statusCode, 200);
    assert.equal(uncond.json().metadata.uid, created.metadata.uid);
    const wrongName = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/default/configmaps/c', payload: { metadata: { name: 'd' } } });
    assert.equal(wrongName.statusCode, 400);
  });

  test('generation is 1 on create and bumps on spec change only; main resource ignores status', async (t) => {
    const { app } = await setup(t);
    const d = (await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments', payload: deployment('web') })).json();
    assert.equal(d.metadata.generation, 1);
    const labelled = (await app.inject({ method: 'PATCH', url: '/apis/apps/v1/namespaces/default/deployments/web', headers: { 'content-type': 'application/merge-patch+json' }, payload: { metadata: { labels: { a: 'b' } }, status: { replicas: 9 } } })).json();
    assert.equal(labelled.metadata.generation, 1);
    assert.equal(labelled.status.replicas, undefined);
    const scaled = (await app.inject({ method: 'PATCH', url: '/apis/apps/v1/namespaces/default/deployments/web', headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: { replicas: 3 } } })).json();
    assert.equal(scaled.metadata.generation, 2);
    const st = await app.inject({ method: 'PUT', url: '/apis/apps/v1/namespaces/default/deployments/web/status', payload: { ...scaled, spec: { ...scaled.spec, replicas: 7 }, status: { replicas: 3, observedGeneration: 2 } } });
    assert.equal(st.statusCode, 200, st.body);
    assert.equal(st.json().status.replicas, 3);
    assert.equal(st.json().spec.replicas, 3);
    assert.equal(st.json().metadata.generation, 2);
  });

  test('scale subresource: GET, PUT without content-type, PATCH', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments', payload: deployment('web', 2) });
    const s = (await app.inject({ method: 'GET', url: '/apis/apps/v1/namespaces/default/deployments/web/scale' })).json();
    assert.equal(s.kind, 'Scale');
    assert.equal(s.apiVersion, 'autoscaling/v1');
    assert.equal(s.spec.replicas, 2);
    assert.equal(s.status.selector, 'app=web');
    const put = await app.inject({ method: 'PUT', url: '/apis/apps/v1/namespaces/default/deployments/web/scale', payload: JSON.stringify({ ...s, spec: { replicas: 4 } }) });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().spec.replicas, 4);
    const patch = await app.inject({ method: 'PATCH', url: '/apis/apps/v1/namespaces/default/deployments/web/scale', headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: { replicas: 5 } } });
    assert.equal(patch.json().spec.replicas, 5);
    const d = (await app.inject({ method: 'GET', url: '/apis/apps/v1/namespaces/default/deployments/web' })).json();
    assert.equal(d.spec.replicas, 5);
    assert.equal(d.metadata.generation, 3);
    const stale = await app.inject({ method: 'PUT', url: '/apis/apps/v1/namespaces/default/deployments/web/scale', payload: { ...s, spec: { replicas: 1 } } });
    assert.equal(stale.statusCode, 409);
  });

  test('finalizers hold deletion until the last is removed', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: { metadata: { name: 'f', finalizers: ['example.com/x'] } } });
    const del = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/configmaps/f' });
    assert.equal(del.statusCode, 200);
    const marked = del.json();
    assert.ok(marked.metadata.deletionTimestamp, del.body);
    const add = await app.inject({ method: 'PATCH', url: '/api/v1/namespaces/default/configmaps/f', headers: { 'content-type': 'application/merge-patch+json' }, payload: { metadata: { finalizers: ['example.com/x', 'y'] } } });
    assert.equal(add.statusCode, 422);
    const rm = await app.inject({ method: 'PATCH', url: '/api/v1/namespaces/default/configmaps/f', headers: { 'content-type': 'application/merge-patch+json' }, payload: { metadata: { finalizers: null } } });
    assert.equal(rm.statusCode, 200, rm.body);
    const gone = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/configmaps/f' });
    assert.equal(gone.statusCode, 404);
  });

  test('propagationPolicy Foreground and Orphan add the GC finalizers', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments', payload: deployment('a') });
    await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments', payload: deployment('b') });
    const fg = (await app.inject({ method: 'DELETE', url: '/apis/apps/v1/namespaces/default/deployments/a', payload: { propagationPolicy: 'Foreground' } })).json();
    assert.deepEqual(fg.metadata.finalizers, ['foregroundDeletion']);
    const or = (await app.inject({ method: 'DELETE', url: '/apis/apps/v1/namespaces/default/deployments/b?propagationPolicy=Orphan' })).json();
    assert.deepEqual(or.metadata.finalizers, ['orphan']);
  });

  test('graceful pod deletion marks scheduled pods; unscheduled pods go at once', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('u') });
    const du = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/pods/u' });
    assert.equal(du.statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods/u' })).statusCode, 404);

    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('s') });
    const bind = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods/s/binding', payload: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 's' }, target: { kind: 'Node', name: 'n1' } } });
    assert.equal(bind.statusCode, 201, bind.body);
    const again = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods/s/binding', payload: { metadata: { name: 's' }, target: { name: 'n2' } } });
    assert.equal(again.statusCode, 409);
    const ds = (await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/pods/s' })).json();
    assert.equal(ds.metadata.deletionGracePeriodSeconds, 30);
    assert.equal(ds.metadata.deletionTimestamp, '2026-01-01T00:00:30Z');
    const now = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/pods/s', payload: { gracePeriodSeconds: 0 } });
    assert.equal(now.statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods/s' })).statusCode, 404);
  });

  test('delete of a non-pod answers a Success Status', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: { metadata: { name: 'c' } } });
    const res = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/configmaps/c' });
    assert.equal(res.json().kind, 'Status');
    assert.equal(res.json().status, 'Success');
    assert.equal(res.json().details.name, 'c');
  });

  test('namespace deletion marks Terminating; content creation is then forbidden', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces', payload: { metadata: { name: 'x' } } });
    const del = (await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/x' })).json();
    assert.equal(del.status.phase, 'Terminating');
    assert.ok(del.metadata.deletionTimestamp);
    const create = await app.inject({ method: 'POST', url: '/api/v1/namespaces/x/configmaps', payload: { metadata: { name: 'a' } } });
    assert.equal(create.statusCode, 403);
    assert.equal(create.json().message, 'configmaps "a" is forbidden: unable to create new content in namespace x because it is being terminated');
    const fin = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/x/finalize', payload: { ...del, spec: { finalizers: [] } } });
    assert.equal(fin.statusCode, 200, fin.body);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/namespaces/x' })).statusCode, 404);
    const def = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default' });
    assert.equal(def.statusCode, 403);
    assert.equal(def.json().message, 'namespaces "default" is forbidden: this namespace may not be deleted');
  });

  test('dryRun=All validates without writing', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps?dryRun=All', payload: { metadata: { name: 'd' } } });
    assert.equal(res.statusCode, 201);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/configmaps/d' })).statusCode, 404);
  });

  test('strategic merge patch merges containers by name and null deletes', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments', payload: deployment('web') });
    const res = await app.inject({
      method: 'PATCH', url: '/apis/apps/v1/namespaces/default/deployments/web', headers: { 'content-type': 'application/strategic-merge-patch+json' },
      payload: { spec: { template: { spec: { $setElementOrder: undefined, containers: [{ name: 'c', image: 'nginx:2' }, { name: 'side', image: 'x' }] } } } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().spec.template.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`), ['c=nginx:2', 'side=x']);
    const json = await app.inject({
      method: 'PATCH', url: '/apis/apps/v1/namespaces/default/deployments/web', headers: { 'content-type': 'application/json-patch+json' },
      payload: [{ op: 'replace', path: '/spec/replicas', value: 6 }],
    });
    assert.equal(json.json().spec.replicas, 6);
  });

  test('errors are Status objects: bad JSON 400, malformed protobuf 400, unknown route 404, bad patch type 415', async (t) => {
    const { app } = await setup(t);
    const bad = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: '{nope', headers: { 'content-type': 'application/json' } });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().reason, 'BadRequest');
    const pb = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: Buffer.from([1, 2, 3]), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
    assert.equal(pb.statusCode, 400);
    assert.equal(pb.json().kind, 'Status');
    const nf = await app.inject({ method: 'GET', url: '/nothing/here' });
    assert.equal(nf.statusCode, 404);
    assert.equal(nf.json().kind, 'Status');
    const unk = await app.inject({ method: 'GET', url: '/api/v1/foos' });
    assert.equal(unk.statusCode, 404);
    assert.equal(unk.json().kind, 'Status');
    const pt = await app.inject({ method: 'PATCH', url: '/api/v1/namespaces/default/configmaps/x', payload: '{}', headers: { 'content-type': 'text/plain' } });
    assert.equal(pt.statusCode, 415);
    const big = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(4 * 1024 * 1024) } }), headers: { 'content-type': 'application/json' } });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().kind, 'Status');
    const protoAccept = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/configmaps', headers: { accept: 'application/vnd.kubernetes.protobuf,application/json' } });
    assert.equal(protoAccept.statusCode, 200);
    assert.match(protoAccept.headers['content-type'] as string, /^application\/json/);
  });

  test('Table output when Accept asks for it', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('a') });
    const res = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods', headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
    assert.equal(res.json().kind, 'Table');
    assert.match(res.json().metadata.resourceVersion, /^\d+$/);
    assert.equal(res.json().rows[0].object.kind, 'PartialObjectMetadata');
  });

  test('fieldValidation Strict rejects unknown fields; Warn sends a Warning header', async (t) => {
    const { app } = await setup(t);
    const strict = await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict', payload: { ...deployment('s'), spec: { ...deployment('s').spec, foo: 1 } } });
    assert.equal(strict.statusCode, 400, strict.body);
    assert.equal(strict.json().message, 'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"');
    const warn = await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Warn', payload: { ...deployment('w'), spec: { ...deployment('w').spec, foo: 1 } } });
    assert.equal(warn.statusCode, 201, warn.body);
    assert.match(String(warn.headers['warning']), /^299 - "unknown field \\"spec.foo\\""$/);
    const patch = await app.inject({ method: 'PATCH', url: '/apis/apps/v1/namespaces/default/deployments/w?fieldValidation=Strict', headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: { bar: 1 } } });
    assert.equal(patch.statusCode, 400);
    assert.equal(patch.json().message, 'strict decoding error: unknown field "spec.bar"');
  });

  test('fieldValidation Strict on PATCH checks the patched result, for every patch type', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments', payload: deployment('web') });
    const url = '/apis/apps/v1/namespaces/default/deployments/web?fieldValidation=Strict';
    const patch = (type: string, payload: unknown) => app.inject({ method: 'PATCH', url, headers: { 'content-type': `application/${type}` }, payload: payload as object });
    // Directives are consumed by the merge: they are not unknown fields of the result.
    const smp = await patch('strategic-merge-patch+json', { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'c' }], containers: [{ name: 'c', image: 'nginx:2' }] } } } });
    assert.equal(smp.statusCode, 200, smp.body);
    const smpBad = await patch('strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'c', imagee: 'x' }] } } } });
    assert.equal(smpBad.statusCode, 400, smpBad.body);
    assert.equal(smpBad.json().message, 'strict decoding error: unknown field "spec.template.spec.containers[0].imagee"');
    const jsonBad = await patch('json-patch+json', [{ op: 'add', path: '/spec/bogus', value: 1 }]);
    assert.equal(jsonBad.statusCode, 400, jsonBad.body);
    assert.equal(jsonBad.json().message, 'strict decoding error: unknown field "spec.bogus"');
    // Removing an unknown field is fine: the result has none.
    const mergeNull = await patch('merge-patch+json', { spec: { bogus: null } });
    assert.equal(mergeNull.statusCode, 200, mergeNull.body);
    const warn = await app.inject({ method: 'PATCH', url: '/apis/apps/v1/namespaces/default/deployments/web', headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: { extra: 1 } } });
    assert.equal(warn.statusCode, 200, warn.body);
    assert.match(String(warn.headers['warning']), /^299 - "unknown field \\"spec.extra\\""$/);
  });

  test('PATCH with metadata.resourceVersion null is unconditional (kubectl apply after replace)', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments', payload: deployment('web') });
    const url = '/apis/apps/v1/namespaces/default/deployments/web';
    for (const type of ['merge-patch+json', 'strategic-merge-patch+json']) {
      const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': `application/${type}` }, payload: { metadata: { resourceVersion: null, labels: { t: type.split('-')[0]! } } } });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.json().metadata.resourceVersion, /^\d+$/);
    }
    const stale = await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/merge-patch+json' }, payload: { metadata: { resourceVersion: '1' } } });
    assert.equal(stale.statusCode, 409, stale.body);
  });

  test('invalid objects answer 422 with causes', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'POST', url: '/apis/apps/v1/namespaces/default/deployments', payload: deployment('neg', -1) });
    assert.equal(res.statusCode, 422, res.body);
    const body = res.json();
    assert.equal(body.reason, 'Invalid');
    assert.ok(body.details.causes.some((c: { field: string }) => c.field === 'spec.replicas'), res.body);
    assert.match(body.message, /^Deployment.apps "neg" is invalid: /);
  });

  test('apply-patch+yaml creates a missing object, then applies', async (t) => {
    const { app } = await setup(t);
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: "1"\n';
    const first = await app.inject({ method: 'PATCH', url: '/api/v1/namespaces/default/configmaps/ssa?fieldManager=me', payload: yaml, headers: { 'content-type': 'application/apply-patch+yaml' } });
    assert.equal(first.statusCode, 201, first.body);
    const second = await app.inject({ method: 'PATCH', url: '/api/v1/namespaces/default/configmaps/ssa?fieldManager=me', payload: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa' }, data: { b: '2' } }), headers: { 'content-type': 'application/apply-patch+yaml' } });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(second.json().data, { b: '2' });             // the same manager no longer applies a
  });

  test('server-side apply removes fields its manager applied before and no longer applies, keeps others', async (t) => {
    const { app } = await setup(t);
    const url = '/api/v1/namespaces/default/configmaps/ssa2';
    const apply = (manager: string, data: Record<string, string>, labels?: Record<string, string>) => app.inject({
      method: 'PATCH', url: `${url}?fieldManager=${manager}`, headers: { 'content-type': 'application/apply-patch+yaml' },
      payload: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa2', ...(labels ? { labels } : {}) }, data }),
    });
    assert.equal((await apply('a', { x: '1', y: '2' }, { keep: 'me', drop: 'me' })).statusCode, 201);
    assert.equal((await apply('b', { z: '3' })).statusCode, 200);
    // A field another manager set by a plain update is not this manager's to remove.
    await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/merge-patch+json' }, payload: { data: { w: '0' } } });
    const res = await apply('a', { x: '1' }, { keep: 'me' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().data, { x: '1', z: '3', w: '0' });
    assert.deepEqual(res.json().metadata.labels, { keep: 'me' });
    const mf = res.json().metadata.managedFields as { manager: string; operation: string; fieldsV1: unknown }[];
    // The merge patch's manager (no fieldManager: its user agent's name, inject's) now owns w, as an Update.
    assert.deepEqual(mf.map((m) => `${m.manager}/${m.operation}`).sort(), ['a/Apply', 'b/Apply', 'lightMyRequest/Update']);
    assert.deepEqual(mf.find((m) => m.manager === 'a')!.fieldsV1, { 'f:data': { 'f:x': {} }, 'f:metadata': { 'f:labels': { 'f:keep': {} } } });
    // A field both managers apply stays while one still applies it.
    await apply('b', { z: '3', x: '1' });
    const last = await apply('a', {});
    assert.deepEqual(last.json().data, { x: '1', z: '3', w: '0' });
    // A PUT without managedFields keeps them.
    const cur = last.json();
    delete cur.metadata.managedFields;
    const put = await app.inject({ method: 'PUT', url, payload: cur });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().metadata.managedFields.length, 3);
  });

  test('eviction deletes a pod gracefully', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('e', { spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } }) });
    const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods/e/eviction', payload: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'e', namespace: 'default' }, deleteOptions: {} } });
    assert.equal(res.statusCode, 201, res.body);
    const p = (await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods/e' })).json();
    assert.ok(p.metadata.deletionTimestamp);
    const missing = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods/none/eviction', payload: { metadata: { name: 'none' } } });
    assert.equal(missing.statusCode, 404);
  });

  test('legacy discovery and OpenAPI are served', async (t) => {
    const { app } = await setup(t);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1' })).json().kind, 'APIResourceList');
    assert.equal((await app.inject({ method: 'GET', url: '/version' })).json().minor, '32');
    assert.equal((await app.inject({ method: 'GET', url: '/openapi/v3' })).statusCode, 200);
  });

  test('services get a ClusterIP and node ports; explicit ones are exclusive; delete releases them', async (t) => {
    const { app } = await setup(t);
    const svc = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } });
    const a = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/services', payload: svc('a') });
    assert.equal(a.statusCode, 201, a.body);
    const ip = a.json().spec.clusterIP as string;
    assert.match(ip, /^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/);
    assert.deepEqual(a.json().spec.clusterIPs, [ip]);
    const dns = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/services', payload: svc('dns', { clusterIP: '10.96.0.10' }) });
    assert.equal(dns.json().spec.clusterIP, '10.96.0.10', dns.body);
    const dup = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/services', payload: svc('dup', { clusterIP: '10.96.0.10' }) });
    assert.equal(dup.statusCode, 422);
    assert.match(dup.json().message, /provided IP is already allocated/);
    const np = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/services', payload: svc('np', { type: 'NodePort' }) });
    const port = np.json().spec.ports[0].nodePort as number;
    assert.ok(port >= 30000 && port <= 32767, np.body);
    const put = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/default/services/np', payload: svc('np', { type: 'NodePort' }) });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().spec.ports[0].nodePort, port);
    assert.equal(put.json().spec.clusterIP, np.json().spec.clusterIP);
    const headless = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/services', payload: svc('h', { clusterIP: 'None' }) });
    assert.equal(headless.json().spec.clusterIP, 'None');
    await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/services/dns' });
    const again = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/services', payload: svc('dns2', { clusterIP: '10.96.0.10' }) });
    assert.equal(again.statusCode, 201, again.body);
  });

  test('lists page with limit and continue', async (t) => {
    const { app } = await setup(t);
    for (const n of ['a', 'b', 'c']) await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: { metadata: { name: n } } });
    const p1 = (await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/configmaps?limit=2' })).json();
    assert.equal(p1.items.length, 2);
    assert.ok(p1.metadata.continue);
    const p2 = (await app.inject({ method: 'GET', url: `/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(p1.metadata.continue)}` })).json();
    assert.deepEqual(p2.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['c']);
  });

  test('PATCH of a missing object is 404 even for create-on-update resources', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'PATCH', url: '/apis/coordination.k8s.io/v1/namespaces/default/leases/nope', headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: {} } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().message, 'leases.coordination.k8s.io "nope" not found');
    const put = await app.inject({ method: 'PUT', url: '/apis/coordination.k8s.io/v1/namespaces/default/leases/l1', payload: { metadata: { name: 'l1' }, spec: { holderIdentity: 'a' } } });
    assert.equal(put.statusCode, 201, put.body);
  });

  test('pod admission: service account, tolerations, priority from PriorityClass', async (t) => {
    const { app } = await setup(t);
    const plain = (await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('plain') })).json();
    assert.equal(plain.spec.serviceAccountName, 'default');
    assert.equal(plain.spec.priority, 0);
    assert.equal(plain.spec.tolerations.length, 2);
    const crit = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('crit', { spec: { priorityClassName: 'system-node-critical', containers: [{ name: 'c', image: 'x' }] } }) });
    assert.equal(crit.statusCode, 201, crit.body);
    assert.equal(crit.json().spec.priority, 2000001000);
    const unknown = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('u', { spec: { priorityClassName: 'nope', containers: [{ name: 'c', image: 'x' }] } }) });
    assert.equal(unknown.statusCode, 403);
    assert.equal(unknown.json().message, 'pods "u" is forbidden: no PriorityClass with name nope was found');
  });

  test('requests over the in-flight limit answer 429 with Retry-After', async (t) => {
    const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), maxRequestsInflight: { readonly: 0, mutating: 1 } });
    t.after(() => app.close());
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods' });
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.json().reason, 'TooManyRequests');
    for (let i = 0; i < 3; i++) {
      const ok = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: { metadata: { name: `c${i}` } } });
      assert.equal(ok.statusCode, 201, 'sequential writes each release their slot');
    }
  });

  test('a request whose client goes away while it is served gives its in-flight slot back', async (t) => {
    let hung = 0;
    const app = await buildApiServer({
      storage: new MemoryStorage(), logger: silentLogger(), maxRequestsInflight: { readonly: 1, mutating: 1 },
      plugins: [(a) => { a.get('/apis/hang.example.com/v1/namespaces/default/things', async () => { hung++; return new Promise(() => undefined); }); }],
    });
    t.after(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    for (let i = 0; i < 3; i++) {
      const ac = new AbortController();
      const p = fetch(`http://127.0.0.1:${port}/apis/hang.example.com/v1/namespaces/default/things`, { signal: ac.signal }).catch(() => undefined);
      for (let k = 0; k < 200 && hung <= i; k++) await new Promise((r) => setTimeout(r, 5));
      ac.abort();
      await p;
      // The slot is free again: a read is served, not refused with 429.
      let code = 0;
      for (let k = 0; k < 100; k++) { code = (await fetch(`http://127.0.0.1:${port}/api/v1/namespaces/default/configmaps`)).status; if (code !== 429) break; await new Promise((r) => setTimeout(r, 10)); }
      assert.equal(code, 200, `round ${i}`);
    }
  });

  test('isLongRunningRequest: watch, proxy and the streaming subresources, as upstream', () => {
    const cases: [string, string, boolean][] = [['watch', '', true], ['proxy', '', true], ['get', 'log', true], ['create', 'exec', true], ['get', 'attach', true],
      ['create', 'portforward', true], ['get', 'proxy', true], ['get', '', false], ['list', '', false], ['update', 'status', false], ['get', 'scale', false]];
    for (const [verb, subresource, want] of cases) assert.equal(isLongRunningRequest({ verb, subresource }), want, `${verb} ${subresource}`);
  });

  test('field selectors the scheduler and kubelet use: spec.nodeName empty or set, status.phase!=', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('free') });
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', payload: pod('bound', { spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] } }) });
    const names = async (q: string) => (await app.inject({ method: 'GET', url: `/api/v1/pods?fieldSelector=${encodeURIComponent(q)}` })).json().items.map((p: { metadata: { name: string } }) => p.metadata.name);
    assert.deepEqual(await names('spec.nodeName='), ['free']);
    assert.deepEqual(await names('spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed'), ['bound']);
  });

  test('a watch that expires mid-stream ends with an ERROR event carrying a 410 Status', async (t) => {
    const storage = new MemoryStorage();
    const expiring = Object.assign(Object.create(storage) as MemoryStorage, {
      async *watch() {
        yield { type: 'ADDED' as const, resourceVersion: '5', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default', resourceVersion: '5' } } };
        throw new ApiError('Expired', 'too old resource version: 5 (9)');
      },
    });
    const app = await buildApiServer({ storage: expiring, logger: silentLogger(), bootstrapNamespaces: false });
    t.after(() => app.close());
    const res = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=4' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const lines = res.body.trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { code?: number; reason?: string } });
    assert.deepEqual(lines.map((l) => l.type), ['ADDED', 'ERROR']);
    assert.equal(lines[1]!.object.code, 410);
    assert.equal(lines[1]!.object.reason, 'Expired');
  });
});
