/**
 * What unmodified clients send and expect on the wire (issue 14): booleans as the Python client
 * writes them, decode errors worded as upstream's, managedFields on every write.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { parseRequestInfo, type ResourceRequestInfo } from './request-info.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock });
  await app.ready();
  t.after(() => app.close());
  return { app, clock };
}

const cm = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

describe('boolean query parameters', () => {
  for (const [value, verb] of [['True', 'watch'], ['true', 'watch'], ['1', 'watch'], ['', 'watch'], ['False', 'list'], ['0', 'list'], ['FALSE', 'list']] as const) {
    test(`?watch=${value} is a ${verb}`, () => {
      const info = parseRequestInfo('GET', `/api/v1/namespaces/default/pods?watch=${value}`) as ResourceRequestInfo;
      assert.equal(info.verb, verb);
    });
  }

  test('force=True (the Python client) forces a conflicting apply', async (t) => {
    const { app } = await setup(t);
    const url = '/api/v1/namespaces/default/configmaps/f';
    assert.equal((await app.inject({ method: 'PATCH', url: `${url}?fieldManager=a`, headers: APPLY, payload: cm('f', { k: 'a' }) })).statusCode, 201);
    const conflict = await app.inject({ method: 'PATCH', url: `${url}?fieldManager=b&force=False`, headers: APPLY, payload: cm('f', { k: 'b' }) });
    assert.equal(conflict.statusCode, 409, conflict.body);
    const forced = await app.inject({ method: 'PATCH', url: `${url}?fieldManager=b&force=True`, headers: APPLY, payload: cm('f', { k: 'b' }) });
    assert.equal(forced.statusCode, 200, forced.body);
    assert.equal(forced.json().data.k, 'b');
  });

  test('orphanDependents=True is read as true', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: cm('o', {}) });
    // orphanDependents together with propagationPolicy is refused: proves the value was read.
    const res = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/configmaps/o?orphanDependents=True&propagationPolicy=Background' });
    assert.equal(res.statusCode, 422, res.body);
    const ok = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/configmaps/o?orphanDependents=True' });
    assert.equal(ok.statusCode, 200, ok.body);
  });
});

describe('decode errors worded as upstream', () => {
  const post = (app: Awaited<ReturnType<typeof setup>>['app'], url: string, payload: string, ct = 'application/json') =>
    app.inject({ method: 'POST', url, payload, headers: { 'content-type': ct } });
  const cases: { name: string; url: string; body: string; message: string }[] = [
    {
      name: 'malformed JSON', url: '/api/v1/namespaces', body: '{"metadata": {name: "x"}}',
      message: `the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string ({"metadata": {name: "x"}})`,
    },
    {
      name: 'not JSON at all', url: '/api/v1/namespaces', body: 'hello',
      message: `the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: invalid character 'h' looking for beginning of value (68656c6c6f)`,
    },
    {
      name: 'an empty body', url: '/api/v1/namespaces/default/configmaps', body: '',
      message: `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)`,
    },
    {
      name: 'a JSON array', url: '/api/v1/namespaces', body: '[1]',
      message: `the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b315d)`,
    },
    {
      name: 'a body of another kind', url: '/api/v1/namespaces', body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } }),
      message: 'Pod in version "v1" cannot be handled as a Namespace: converting (v1.Pod) to (core.Namespace): unknown conversion',
    },
    {
      name: 'a kind of another group', url: '/api/v1/namespaces/default/configmaps', body: JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } }),
      message: 'Deployment in version "v1" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion',
    },
    {
      name: 'an unregistered version', url: '/apis/apps/v1/namespaces/default/deployments', body: JSON.stringify({ apiVersion: 'apps/v9', kind: 'Deployment', metadata: { name: 'x' } }),
      message: 'Deployment in version "v9" cannot be handled as a Deployment: no kind "Deployment" is registered for version "apps/v9" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    },
    {
      name: 'a misspelt kind', url: '/api/v1/namespaces/default/pods', body: JSON.stringify({ apiVersion: 'v1', kind: 'pod', metadata: { name: 'x' } }),
      message: 'pod in version "v1" cannot be handled as a Pod: no kind "pod" is registered for version "v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    },
  ];
  for (const tc of cases) {
    test(`${tc.name} is a 400 BadRequest in upstream's words`, async (t) => {
      const { app } = await setup(t);
      const res = await post(app, tc.url, tc.body);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().reason, 'BadRequest');
      assert.equal(res.json().message, tc.message);
    });
  }

  test('a PUT of malformed JSON is worded the same', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: cm('p', {}) });
    const res = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/default/configmaps/p', payload: '{', headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().message, `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({)`);
  });

  test('a body without apiVersion and kind takes the URL\'s', async (t) => {
    const { app } = await setup(t);
    const res = await post(app, '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: 'bare' } }));
    assert.equal(res.statusCode, 201, res.body);
  });
});

describe('managedFields on every write', () => {
  type Entry = { manager: string; operation: string; apiVersion?: string; time?: string; fieldsType?: string; fieldsV1?: unknown; subresource?: string };
  const mf = (body: { metadata: { managedFields?: Entry[] } }) => body.metadata.managedFields ?? [];
  const CMS = '/api/v1/namespaces/default/configmaps';

  test('a create records its fieldManager as an Update owning the fields it set', async (t) => {
    const { app } = await setup(t);
    const res = await app.inject({ method: 'POST', url: `${CMS}?fieldManager=kubectl-create`, payload: { ...cm('c1', { a: '1' }), metadata: { name: 'c1', labels: { l: 'v' } } } });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(mf(res.json()), [{
      manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } },
    }]);
  });

  for (const [ua, manager] of [['OpenAPI-Generator/31.0.0/python', 'OpenAPI-Generator'], ['kubectl/v1.32.0 (linux/amd64) kubernetes/abc', 'kubectl'], ['node-fetch', 'node-fetch']] as const) {
    test(`without ?fieldManager the manager is the user agent's prefix (${manager})`, async (t) => {
      const { app } = await setup(t);
      const res = await app.inject({ method: 'POST', url: CMS, payload: cm('c2', { a: '1' }), headers: { 'user-agent': ua } });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(mf(res.json())[0]?.manager, manager);
    });
  }

  test('an update moves the fields it changed to its manager; a status update records its subresource', async (t) => {
    const { app, clock } = await setup(t);
    await app.inject({ method: 'POST', url: `${CMS}?fieldManager=creator`, payload: cm('c3', { a: '1', b: '1' }) });
    clock.step(60_000);
    const patched = await app.inject({ method: 'PATCH', url: `${CMS}/c3?fieldManager=kubectl-edit`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { data: { b: '2' } } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(mf(patched.json()).map((e) => [e.manager, e.operation, e.fieldsV1]), [
      ['creator', 'Update', { 'f:data': { '.': {}, 'f:a': {} } }],
      ['kubectl-edit', 'Update', { 'f:data': { 'f:b': {} } }],
    ]);
    assert.equal(mf(patched.json())[1]!.time, '2026-01-01T00:01:00Z');

    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    const created = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods?fieldManager=kubectl-run', payload: pod });
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json();
    body.status = { ...body.status, phase: 'Running' };
    const st = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/default/pods/p/status?fieldManager=kubelet', payload: body });
    assert.equal(st.statusCode, 200, st.body);
    const kubelet = mf(st.json()).find((e) => e.manager === 'kubelet');
    assert.deepEqual(kubelet && { op: kubelet.operation, sub: kubelet.subresource, f: kubelet.fieldsV1 }, { op: 'Update', sub: 'status', f: { 'f:status': { 'f:phase': {} } } });
    assert.ok(mf(st.json()).some((e) => e.manager === 'kubectl-run' && !e.subresource), st.body);
  });

  describe('kubectl apply, then apply --server-side (client-side apply migrated as upstream)', () => {
    const LAST = 'kubectl.kubernetes.io/last-applied-configuration';
    const config = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'csa', namespace: 'default' }, data });
    const clientSideApply = async (app: Awaited<ReturnType<typeof setup>>['app']) => {
      const c = config({ a: '1', b: '1' });
      const body = { ...c, metadata: { ...c.metadata, annotations: { [LAST]: `${JSON.stringify(c)}\n` } } };
      const res = await app.inject({ method: 'POST', url: `${CMS}?fieldManager=kubectl-client-side-apply&fieldValidation=Strict`, payload: body });
      assert.equal(res.statusCode, 201, res.body);
    };
    const ssa = (app: Awaited<ReturnType<typeof setup>>['app'], manager: string, data: Record<string, string>, dryRun = false) => app.inject({
      method: 'PATCH', url: `${CMS}/csa?fieldManager=${manager}${dryRun ? '&dryRun=All' : ''}`, headers: APPLY, payload: config(data),
    });

    test('the same configuration applies without conflict and shares the fields', async (t) => {
      const { app } = await setup(t);
      await clientSideApply(app);
      const res = await ssa(app, 'kubectl', { a: '1', b: '1' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(mf(res.json()).map((e) => `${e.manager}/${e.operation}`), ['kubectl-client-side-apply/Update', 'kubectl/Apply']);
      // diff --server-side: a dry-run apply of the same configuration changes nothing.
      const diff = await ssa(app, 'kubectl', { a: '1', b: '1' }, true);
      assert.equal(diff.statusCode, 200, diff.body);
      assert.deepEqual(diff.json().data, res.json().data);
      assert.equal(diff.json().metadata.annotations[LAST], res.json().metadata.annotations[LAST]);
    });

    test("kubectl's changed configuration takes over the client-side fields whose value is the last-applied one", async (t) => {
      const { app } = await setup(t);
      await clientSideApply(app);
      const res = await ssa(app, 'kubectl', { a: '2', b: '1' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().data, { a: '2', b: '1' });
      const kubectl = mf(res.json()).find((e) => e.manager === 'kubectl')!;
      assert.deepEqual(kubectl.fieldsV1, { 'f:data': { 'f:a': {}, 'f:b': {} } });
      // The client-side record follows what was applied.
      assert.equal(res.json().metadata.annotations[LAST], '{"apiVersion":"v1","data":{"a":"2","b":"1"},"kind":"ConfigMap","metadata":{"name":"csa","namespace":"default"}}\n');
    });

    test('another manager, or a field changed since the client-side apply, still conflicts', async (t) => {
      const { app } = await setup(t);
      await clientSideApply(app);
      const other = await ssa(app, 'helm', { a: '2' });
      assert.equal(other.statusCode, 409, other.body);
      assert.match(other.json().message, /conflict with "kubectl-client-side-apply" using v1/);
      await app.inject({ method: 'PATCH', url: `${CMS}/csa?fieldManager=kubectl-edit`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { data: { b: 'edited' } } });
      const res = await ssa(app, 'kubectl', { a: '2', b: 'mine' });
      assert.equal(res.statusCode, 409, res.body);
      assert.deepEqual(res.json().details.causes.map((c: { field: string }) => c.field), ['.data.b']);
    });
  });
});
