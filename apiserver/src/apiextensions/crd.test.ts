import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { crontabCrd } from './testdata/crontab.js';

type Json = Record<string, any>;
type App = Awaited<ReturnType<typeof buildApiServer>>;

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

async function setup(t: { after(fn: () => unknown): void }) {
  const storage = new MemoryStorage();
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const app = await buildApiServer({ storage, logger: silentLogger(), clock });
  await app.ready();
  t.after(() => app.close());
  return { app, clock };
}

const crontab = (name: string, spec: Json = {}) => ({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name }, spec: { cronSpec: '* * * * */5', ...spec } });

/** Polls until fn returns a value, failing after 5 s (the controller runs asynchronously). */
async function eventually<T>(fn: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function established(app: App, name = 'crontabs.stable.example.com'): Promise<Json> {
  return eventually(async () => {
    const r = await app.inject({ url: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}` });
    const crd = r.json();
    return crd.status?.conditions?.some((c: Json) => c.type === 'Established' && c.status === 'True') ? crd : undefined;
  }, 'Established');
}

async function createCrd(app: App, crd: Json = crontabCrd()): Promise<Json> {
  const res = await app.inject({ method: 'POST', url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', payload: crd });
  assert.equal(res.statusCode, 201, res.body);
  const ready = await established(app, crd['metadata'].name);
  // Served once established (the registry entry is added right after the status write).
  await eventually(async () => ((await app.inject({ url: `/apis/${crd['spec'].group}/${crd['spec'].versions[0].name}` })).statusCode === 200 ? true : undefined), 'discovery');
  return ready;
}

const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';

describe('CustomResourceDefinition', () => {
  test('defaults, conditions, storedVersions and the cleanup finalizer only on delete', async (t) => {
    const { app } = await setup(t);
    const crd = await createCrd(app);
    assert.equal(crd.spec.names.listKind, 'CronTabList');
    assert.equal(crd.spec.conversion.strategy, 'None');
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    assert.equal(crd.status.acceptedNames.plural, 'crontabs');
    const names = crd.status.conditions.find((c: Json) => c.type === 'NamesAccepted');
    assert.equal(names.status, 'True');
    assert.equal(names.reason, 'NoConflicts');
    assert.equal(crd.metadata.finalizers, undefined);
  });

  test('invalid CRDs are refused with upstream field paths', async (t) => {
    const { app } = await setup(t);
    const bad = crontabCrd();
    bad['metadata'].name = 'wrong.stable.example.com';
    bad['spec'].versions[0].storage = false;
    delete bad['spec'].versions[0].schema.openAPIV3Schema.properties.spec.properties.cronSpec.type;
    const res = await app.inject({ method: 'POST', url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', payload: bad });
    assert.equal(res.statusCode, 422, res.body);
    const fields = res.json().details.causes.map((c: Json) => c.field);
    assert.ok(fields.includes('metadata.name'), fields);
    assert.ok(fields.includes('spec.versions'), fields);
    assert.ok(fields.includes('spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[cronSpec].type'), fields);
  });

  test('a conflicting CRD is not accepted', async (t) => {
    const { app } = await setup(t);
    await createCrd(app);
    const other = crontabCrd();
    other['metadata'].name = 'crontabz.stable.example.com';
    other['spec'].names = { plural: 'crontabz', singular: 'crontabz', kind: 'CronTab' };
    assert.equal((await app.inject({ method: 'POST', url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', payload: other })).statusCode, 201);
    const crd = await eventually(async () => {
      const c = (await app.inject({ url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabz.stable.example.com' })).json();
      return c.status?.conditions?.find((x: Json) => x.type === 'NamesAccepted') ? c : undefined;
    }, 'NamesAccepted');
    const cond = crd.status.conditions.find((x: Json) => x.type === 'NamesAccepted');
    assert.equal(cond.status, 'False');
    assert.equal(cond.reason, 'NameConflict');
    assert.equal(cond.message, '"CronTab" is already in use');
  });

  test('custom objects: create with defaults and pruning, get, list, 422 naming the field', async (t) => {
    const { app } = await setup(t);
    await createCrd(app);
    const res = await app.inject({ method: 'POST', url: CT, payload: crontab('a', { unknown: 1, extra: { kept: true }, port: 'http' }) });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(String(res.headers['warning']), /unknown field \\"spec.unknown\\"/);
    const obj = res.json();
    assert.equal(obj.apiVersion, 'stable.example.com/v1');
    assert.equal(obj.kind, 'CronTab');
    assert.equal(obj.spec.image, 'busybox');
    assert.equal(obj.spec.replicas, 1);
    assert.equal(obj.spec.unknown, undefined);
    assert.deepEqual(obj.spec.extra, { kept: true });
    assert.equal(obj.metadata.generation, 1);
    const got = (await app.inject({ url: `${CT}/a` })).json();
    assert.equal(got.spec.cronSpec, '* * * * */5');
    const list = (await app.inject({ url: CT })).json();
    assert.equal(list.kind, 'CronTabList');
    assert.equal(list.items.length, 1);

    const bad = await app.inject({ method: 'POST', url: CT, payload: crontab('b', { replicas: 20, mode: 'Medium', cronSpec: 'never' }) });
    assert.equal(bad.statusCode, 422, bad.body);
    const status = bad.json();
    assert.equal(status.reason, 'Invalid');
    assert.match(status.message, /^CronTab\.stable\.example\.com "b" is invalid: /);
    assert.deepEqual(status.details.causes.map((c: Json) => c.field).sort(), ['spec.cronSpec', 'spec.mode', 'spec.replicas']);
    assert.match(status.message, /spec\.replicas: Invalid value: 20: spec\.replicas in body should be less than or equal to 10/);
    assert.match(status.message, /spec\.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"/);
    const typeErr = await app.inject({ method: 'POST', url: CT, payload: crontab('c', { replicas: 'two' }) });
    assert.match(typeErr.json().message, /spec\.replicas: Invalid value: "string": spec\.replicas in body must be of type integer: "string"/);
    const strict = await app.inject({ method: 'POST', url: `${CT}?fieldValidation=Strict`, payload: crontab('d', { nope: 1 }) });
    assert.equal(strict.statusCode, 400);
    assert.match(strict.json().message, /unknown field "spec\.nope"/);
    const required = await app.inject({ method: 'POST', url: CT, payload: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'e' }, spec: {} } });
    assert.match(required.json().message, /spec\.cronSpec: Required value/);
  });

  test('patches: merge, json and apply served; strategic merge patch 415', async (t) => {
    const { app } = await setup(t);
    await createCrd(app);
    await app.inject({ method: 'POST', url: CT, payload: crontab('a') });
    const merge = await app.inject({ method: 'PATCH', url: `${CT}/a`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: { replicas: 3 } } });
    assert.equal(merge.statusCode, 200, merge.body);
    assert.equal(merge.json().spec.replicas, 3);
    assert.equal(merge.json().metadata.generation, 2);
    const json = await app.inject({ method: 'PATCH', url: `${CT}/a`, headers: { 'content-type': 'application/json-patch+json' }, payload: [{ op: 'replace', path: '/spec/replicas', value: 4 }] });
    assert.equal(json.json().spec.replicas, 4);
    const apply = await app.inject({ method: 'PATCH', url: `${CT}/a?fieldManager=test&force=true`, headers: { 'content-type': 'application/apply-patch+yaml' }, payload: JSON.stringify(crontab('a', { replicas: 5 })) });
    assert.equal(apply.statusCode, 200, apply.body);
    assert.equal(apply.json().spec.replicas, 5);
    const smp = await app.inject({ method: 'PATCH', url: `${CT}/a`, headers: { 'content-type': 'application/strategic-merge-patch+json' }, payload: { spec: { replicas: 6 } } });
    assert.equal(smp.statusCode, 415, smp.body);
    assert.equal(smp.json().reason, 'UnsupportedMediaType');
    assert.equal(smp.json().message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    const invalid = await app.inject({ method: 'PATCH', url: `${CT}/a`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: { replicas: 0 } } });
    assert.equal(invalid.statusCode, 422);
    assert.equal(invalid.json().details.causes[0].field, 'spec.replicas');
  });

  test('status and scale subresources', async (t) => {
    const { app } = await setup(t);
    await createCrd(app);
    const created = (await app.inject({ method: 'POST', url: CT, payload: { ...crontab('a', { replicas: 2 }), status: { replicas: 9 } } })).json();
    assert.equal(created.status, undefined, 'status is dropped on create');
    const st = await app.inject({ method: 'PUT', url: `${CT}/a/status`, payload: { ...created, spec: { ...created.spec, replicas: 7 }, status: { replicas: 2, selector: 'app=a' } } });
    assert.equal(st.statusCode, 200, st.body);
    assert.equal(st.json().status.replicas, 2);
    assert.equal(st.json().spec.replicas, 2, 'a status write keeps spec');
    const main = await app.inject({ method: 'PATCH', url: `${CT}/a`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { status: { replicas: 5 } } });
    assert.equal(main.json().status.replicas, 2, 'a main write keeps status');
    const scale = (await app.inject({ url: `${CT}/a/scale` })).json();
    assert.deepEqual({ kind: scale.kind, apiVersion: scale.apiVersion, spec: scale.spec, status: scale.status },
      { kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { replicas: 2, selector: 'app=a' } });
    const scaled = await app.inject({ method: 'PATCH', url: `${CT}/a/scale`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: { replicas: 4 } } });
    assert.equal(scaled.statusCode, 200, scaled.body);
    assert.equal(scaled.json().spec.replicas, 4);
    assert.equal((await app.inject({ url: `${CT}/a` })).json().spec.replicas, 4);
    const tooMany = await app.inject({ method: 'PUT', url: `${CT}/a/scale`, payload: { ...(scaled.json() as Json), spec: { replicas: 11 } } });
    assert.equal(tooMany.statusCode, 422, tooMany.body);
  });

  test('Table with printer columns; discovery; OpenAPI v3 with the schema', async (t) => {
    const { app, clock } = await setup(t);
    await createCrd(app);
    await app.inject({ method: 'POST', url: CT, payload: crontab('a', { replicas: 3 }) });
    clock.step(90_000);
    const table = (await app.inject({ url: CT, headers: { accept: TABLE } })).json();
    assert.equal(table.kind, 'Table');
    assert.deepEqual(table.columnDefinitions.map((c: Json) => c.name), ['Name', 'Spec', 'Replicas', 'Age']);
    assert.deepEqual(table.rows[0].cells, ['a', '* * * * */5', 3, '90s']);
    assert.equal(table.rows[0].object.kind, 'PartialObjectMetadata');

    const crds = (await app.inject({ url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', headers: { accept: TABLE } })).json();
    assert.deepEqual(crds.columnDefinitions.map((c: Json) => c.name), ['Name', 'Created At']);
    assert.deepEqual(crds.rows[0].cells, ['crontabs.stable.example.com', '2026-01-01T00:00:00Z']);
    const list = (await app.inject({ url: '/apis/stable.example.com/v1' })).json();
    const ct = list.resources.find((r: Json) => r.name === 'crontabs');
    assert.deepEqual({ kind: ct.kind, namespaced: ct.namespaced, shortNames: ct.shortNames, categories: ct.categories, singularName: ct.singularName },
      { kind: 'CronTab', namespaced: true, shortNames: ['ct'], categories: ['all'], singularName: 'crontab' });
    assert.deepEqual(list.resources.map((r: Json) => r.name), ['crontabs', 'crontabs/scale', 'crontabs/status']);
    const agg = (await app.inject({ url: '/apis', headers: { accept: AGGREGATED } })).json();
    const group = agg.items.find((i: Json) => i.metadata.name === 'stable.example.com');
    assert.deepEqual(group.versions[0].resources[0].subresources.map((s: Json) => s.subresource), ['scale', 'status']);
    assert.ok(agg.items.some((i: Json) => i.metadata.name === 'apiextensions.k8s.io'));

    const index = (await app.inject({ url: '/openapi/v3' })).json();
    const url = index.paths['apis/stable.example.com/v1'].serverRelativeURL;
    const doc = (await app.inject({ url })).json();
    const schema = doc.components.schemas['com.example.stable.v1.CronTab'];
    assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', version: 'v1', kind: 'CronTab' }]);
    assert.equal(schema.properties.spec.properties.replicas.maximum, 10);
    assert.ok(doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
    assert.ok(doc.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'].patch);
  });

  test('watch sees custom objects', async (t) => {
    const { app } = await setup(t);
    await createCrd(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const ac = new AbortController();
    t.after(() => ac.abort());
    const res = await fetch(`http://127.0.0.1:${port}${CT}?watch=true`, { signal: ac.signal });
    const reader = res.body!.getReader();
    await app.inject({ method: 'POST', url: CT, payload: crontab('w') });
    let text = '';
    while (!text.includes('\n')) text += new TextDecoder().decode((await reader.read()).value);
    const ev = JSON.parse(text.split('\n')[0]!);
    assert.equal(ev.type, 'ADDED');
    assert.equal(ev.object.kind, 'CronTab');
    assert.equal(ev.object.metadata.name, 'w');
  });

  test('several versions: one storage version, each served version answers in its own apiVersion', async (t) => {
    const { app } = await setup(t);
    const base = crontabCrd().spec.versions[0];
    await createCrd(app, crontabCrd({ versions: [{ ...base, name: 'v1', storage: true }, { ...base, name: 'v1beta1', storage: false }, { ...base, name: 'v1alpha1', served: false, storage: false }] }));
    await app.inject({ method: 'POST', url: '/apis/stable.example.com/v1beta1/namespaces/default/crontabs', payload: { ...crontab('m'), apiVersion: 'stable.example.com/v1beta1' } });
    assert.equal((await app.inject({ url: `${CT}/m` })).json().apiVersion, 'stable.example.com/v1');
    assert.equal((await app.inject({ url: '/apis/stable.example.com/v1beta1/namespaces/default/crontabs/m' })).json().apiVersion, 'stable.example.com/v1beta1');
    assert.equal((await app.inject({ url: '/apis/stable.example.com/v1alpha1/namespaces/default/crontabs/m' })).statusCode, 404);
    const group = (await app.inject({ url: '/apis/stable.example.com' })).json();
    assert.deepEqual(group.versions.map((v: Json) => v.version), ['v1', 'v1beta1']);
    assert.equal(group.preferredVersion.version, 'v1');
  });

  test('x-kubernetes-validations: CEL rules refuse objects, transition rules updates', async (t) => {
    const { app } = await setup(t);
    const crd = crontabCrd();
    const spec = crd['spec'].versions[0].schema.openAPIV3Schema.properties.spec;
    spec['x-kubernetes-validations'] = [{ rule: "!has(self.mode) || self.mode != 'Slow' || self.replicas <= 3", message: 'Slow crontabs run at most 3 replicas' }];
    spec.properties.image['x-kubernetes-validations'] = [{ rule: 'self == oldSelf', message: 'image is immutable' }];
    await createCrd(app, crd);
    const bad = await app.inject({ method: 'POST', url: CT, payload: crontab('a', { mode: 'Slow', replicas: 5 }) });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.equal(bad.json().message, 'CronTab.stable.example.com "a" is invalid: spec: Invalid value: "object": Slow crontabs run at most 3 replicas');
    assert.equal((await app.inject({ method: 'POST', url: CT, payload: crontab('a', { mode: 'Slow', replicas: 2 }) })).statusCode, 201);
    const change = await app.inject({ method: 'PATCH', url: `${CT}/a`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { spec: { image: 'nginx' } } });
    assert.equal(change.statusCode, 422, change.body);
    assert.equal(change.json().details.causes[0].field, 'spec.image');
    const badRule = crontabCrd();
    badRule['metadata'].name = 'others.stable.example.com';
    badRule['spec'].names = { plural: 'others', kind: 'Other' };
    badRule['spec'].versions[0].schema.openAPIV3Schema['x-kubernetes-validations'] = [{ rule: 'self.(' }];
    const refused = await app.inject({ method: 'POST', url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', payload: badRule });
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.json().details.causes[0].field, 'spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule');
  });

  test('server-side apply merges x-kubernetes-list-type map lists by key; other lists are atomic', async (t) => {
    const { app } = await setup(t);
    const crd = crontabCrd();
    const props = crd['spec'].versions[0].schema.openAPIV3Schema.properties.spec.properties;
    props.ports = { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } } };
    props.args = { type: 'array', items: { type: 'string' } };
    await createCrd(app, crd);
    const apply = (manager: string, spec: Json) => app.inject({ method: 'PATCH', url: `${CT}/a?fieldManager=${manager}`, headers: { 'content-type': 'application/apply-patch+yaml' },
      payload: JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'a' }, spec: { cronSpec: '* * * * */5', ...spec } }) });
    assert.equal((await apply('one', { ports: [{ name: 'http', port: 80 }], args: ['a'] })).statusCode, 201);
    const two = await apply('two', { ports: [{ name: 'metrics', port: 9090 }] });
    assert.equal(two.statusCode, 200, two.body);
    assert.deepEqual(two.json().spec.ports.map((p: Json) => p.name).sort(), ['http', 'metrics']);
    const conflict = await apply('three', { args: ['b'] });
    assert.equal(conflict.statusCode, 409, 'an atomic list owned by another manager conflicts');
  });

  test('cluster-scoped custom resources', async (t) => {
    const { app } = await setup(t);
    await createCrd(app, crontabCrd({ scope: 'Cluster' }));
    const res = await app.inject({ method: 'POST', url: '/apis/stable.example.com/v1/crontabs', payload: crontab('c') });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().metadata.namespace, undefined);
    assert.equal((await app.inject({ url: CT })).statusCode, 404);
  });

  test('deleting the CRD removes its objects and stops serving it', async (t) => {
    const { app } = await setup(t);
    await createCrd(app);
    for (const n of ['a', 'b']) assert.equal((await app.inject({ method: 'POST', url: CT, payload: crontab(n) })).statusCode, 201);
    const del = await app.inject({ method: 'DELETE', url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com' });
    assert.equal(del.statusCode, 200, del.body);
    await eventually(async () => ((await app.inject({ url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com' })).statusCode === 404 ? true : undefined), 'CRD gone');
    await eventually(async () => ((await app.inject({ url: CT })).statusCode === 404 ? true : undefined), 'not served');
    assert.equal((await app.inject({ url: '/apis/stable.example.com/v1' })).statusCode, 404);
    // Recreated: none of the old objects come back.
    await createCrd(app);
    assert.equal((await app.inject({ url: CT })).json().items.length, 0);
  });
});
