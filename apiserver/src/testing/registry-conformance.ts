/**
 * The registry's conformance suite: the REST semantics every registered resource must have, run
 * through the HTTP handlers against one resource (a built-in one and a custom one take the same
 * path). Each fixture names the resource's collection, an object, a spec change, and whether it
 * has status and scale subresources.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

type Json = Record<string, any>;

export interface RegistryConformanceFixture {
  /** A running server (inject is enough; watch needs listen, which the suite does itself). */
  setup(t: { after(fn: () => unknown): void }): Promise<FastifyInstance>;
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** A valid object of the kind named `name`. */
  object(name: string): Json;
  /** A copy of obj with a valid change to its spec, and how to read it back. */
  changeSpec(obj: Json): Json;
  specValue(obj: Json): unknown;
  /** A status body the status subresource accepts; undefined when the resource has no status subresource. */
  status?: Json;
  /** The resource has a scale subresource on spec.replicas. */
  scale?: boolean;
}

const NS = 'default';

export function defineRegistryConformance(name: string, f: RegistryConformanceFixture): void {
  const base = f.group ? `/apis/${f.group}/${f.version}` : `/api/${f.version}`;
  const coll = f.namespaced ? `${base}/namespaces/${NS}/${f.resource}` : `${base}/${f.resource}`;
  const item = (n: string) => `${coll}/${n}`;
  const apiVersion = f.group ? `${f.group}/${f.version}` : f.version;
  const merge = { 'content-type': 'application/merge-patch+json' };

  describe(`registry conformance: ${name}`, () => {
    test('create answers 201 with the server fields; get and list return it', async (t) => {
      const app = await f.setup(t);
      const res = await app.inject({ method: 'POST', url: coll, payload: f.object('a') });
      assert.equal(res.statusCode, 201, res.body);
      const obj = res.json();
      assert.equal(obj.apiVersion, apiVersion);
      assert.equal(obj.kind, f.kind);
      assert.ok(obj.metadata.uid);
      assert.match(obj.metadata.resourceVersion, /^\d+$/);
      assert.ok(obj.metadata.creationTimestamp);
      if (f.namespaced) assert.equal(obj.metadata.namespace, NS); else assert.equal(obj.metadata.namespace, undefined);
      assert.equal((await app.inject({ url: item('a') })).json().metadata.uid, obj.metadata.uid);
      const list = (await app.inject({ url: coll })).json();
      assert.equal(list.kind, `${f.kind}List`);
      assert.match(list.metadata.resourceVersion, /^\d+$/);
      assert.deepEqual(list.items.map((o: Json) => o.metadata.name), ['a']);
      const again = await app.inject({ method: 'POST', url: coll, payload: f.object('a') });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().reason, 'AlreadyExists');
      assert.equal((await app.inject({ url: item('missing') })).statusCode, 404);
    });

    test('update is compare-and-swap on resourceVersion; generation follows spec changes', async (t) => {
      const app = await f.setup(t);
      const created = (await app.inject({ method: 'POST', url: coll, payload: f.object('a') })).json();
      const updated = await app.inject({ method: 'PUT', url: item('a'), payload: f.changeSpec(created) });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.equal(f.specValue(updated.json()), f.specValue(f.changeSpec(created)));
      assert.notEqual(updated.json().metadata.resourceVersion, created.metadata.resourceVersion);
      assert.equal(updated.json().metadata.generation, (created.metadata.generation ?? 1) + 1);
      const stale = await app.inject({ method: 'PUT', url: item('a'), payload: f.changeSpec(created) });
      assert.equal(stale.statusCode, 409);
      assert.equal(stale.json().reason, 'Conflict');
    });

    test('merge, JSON and apply patches', async (t) => {
      const app = await f.setup(t);
      const created = (await app.inject({ method: 'POST', url: coll, payload: f.object('a') })).json();
      const m = await app.inject({ method: 'PATCH', url: item('a'), headers: merge, payload: { metadata: { labels: { patched: 'merge' } } } });
      assert.equal(m.statusCode, 200, m.body);
      assert.equal(m.json().metadata.labels.patched, 'merge');
      const j = await app.inject({ method: 'PATCH', url: item('a'), headers: { 'content-type': 'application/json-patch+json' }, payload: [{ op: 'add', path: '/metadata/labels/patched', value: 'json' }] });
      assert.equal(j.json().metadata.labels.patched, 'json');
      const applied = { ...f.changeSpec(created) };
      applied['metadata'] = { name: 'a', labels: { patched: 'apply' } };
      const a = await app.inject({ method: 'PATCH', url: `${item('a')}?fieldManager=conformance&force=true`, headers: { 'content-type': 'application/apply-patch+yaml' }, payload: JSON.stringify(applied) });
      assert.equal(a.statusCode, 200, a.body);
      assert.equal(a.json().metadata.labels.patched, 'apply');
      assert.ok(a.json().metadata.managedFields.some((e: Json) => e.manager === 'conformance' && e.operation === 'Apply'));
      const fresh = { ...f.object('b') };
      const c = await app.inject({ method: 'PATCH', url: `${item('b')}?fieldManager=conformance`, headers: { 'content-type': 'application/apply-patch+yaml' }, payload: JSON.stringify(fresh) });
      assert.equal(c.statusCode, 201, 'apply creates');
    });

    test('delete answers the status or the object; the object is gone', async (t) => {
      const app = await f.setup(t);
      await app.inject({ method: 'POST', url: coll, payload: f.object('a') });
      const del = await app.inject({ method: 'DELETE', url: item('a') });
      assert.equal(del.statusCode, 200, del.body);
      assert.equal((await app.inject({ url: item('a') })).statusCode, 404);
      assert.equal((await app.inject({ method: 'DELETE', url: item('a') })).statusCode, 404);
    });

    test('watch sends ADDED, MODIFIED and DELETED', async (t) => {
      const app = await f.setup(t);
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as { port: number }).port;
      const ac = new AbortController();
      t.after(() => ac.abort());
      const list = (await app.inject({ url: coll })).json();
      const res = await fetch(`http://127.0.0.1:${port}${coll}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, { signal: ac.signal });
      const reader = res.body!.getReader();
      const created = (await app.inject({ method: 'POST', url: coll, payload: f.object('w') })).json();
      await app.inject({ method: 'PATCH', url: item('w'), headers: merge, payload: { metadata: { labels: { x: 'y' } } } });
      await app.inject({ method: 'DELETE', url: item('w') });
      let text = '';
      const events = () => text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Json);
      while (!events().some((e) => e['type'] === 'DELETED')) text += new TextDecoder().decode((await reader.read()).value);
      const evs = events().filter((e) => e['object'].metadata.name === 'w');
      assert.deepEqual(evs.map((e) => e['type']), ['ADDED', 'MODIFIED', 'DELETED']);
      assert.equal(evs[0]!['object'].metadata.uid, created.metadata.uid);
      assert.equal(evs[0]!['object'].kind, f.kind);
    });

    test('Table, discovery and OpenAPI know the resource', async (t) => {
      const app = await f.setup(t);
      await app.inject({ method: 'POST', url: coll, payload: f.object('a') });
      const table = (await app.inject({ url: coll, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
      assert.equal(table.kind, 'Table');
      assert.equal(table.columnDefinitions[0].name, 'Name');
      assert.equal(table.rows[0].cells[0], 'a');
      const rl = (await app.inject({ url: base })).json();
      const entry = rl.resources.find((r: Json) => r.name === f.resource);
      assert.equal(entry.kind, f.kind);
      assert.equal(entry.namespaced, f.namespaced);
      for (const sub of [...(f.status ? ['status'] : []), ...(f.scale ? ['scale'] : [])]) assert.ok(rl.resources.some((r: Json) => r.name === `${f.resource}/${sub}`), sub);
      const index = (await app.inject({ url: '/openapi/v3' })).json();
      const key = f.group ? `apis/${f.group}/${f.version}` : `api/${f.version}`;
      const doc = (await app.inject({ url: index.paths[key].serverRelativeURL })).json();
      assert.ok(Object.values<Json>(doc.components.schemas).some((s) => (s['x-kubernetes-group-version-kind'] ?? []).some((g: Json) => g.kind === f.kind && g.group === f.group)));
    });

    if (f.status) {
      test('the status subresource writes status only; the main resource keeps status', async (t) => {
        const app = await f.setup(t);
        const created = (await app.inject({ method: 'POST', url: coll, payload: f.object('a') })).json();
        const st = await app.inject({ method: 'PUT', url: `${item('a')}/status`, payload: { ...f.changeSpec(created), status: f.status } });
        assert.equal(st.statusCode, 200, st.body);
        assert.equal(f.specValue(st.json()), f.specValue(created), 'spec unchanged by a status write');
        for (const [k, v] of Object.entries(f.status!)) assert.deepEqual(st.json().status[k], v);
        const main = await app.inject({ method: 'PATCH', url: item('a'), headers: merge, payload: { status: null } });
        for (const [k, v] of Object.entries(f.status!)) assert.deepEqual(main.json().status[k], v, 'status kept by a main write');
        const sp = await app.inject({ method: 'PATCH', url: `${item('a')}/status`, headers: merge, payload: { metadata: { labels: { no: 'no' } } } });
        assert.equal(sp.statusCode, 200);
        assert.equal(sp.json().metadata.labels?.no, undefined, 'metadata unchanged by a status write');
      });
    }

    if (f.scale) {
      test('the scale subresource reads and writes spec.replicas as autoscaling/v1 Scale', async (t) => {
        const app = await f.setup(t);
        await app.inject({ method: 'POST', url: coll, payload: f.object('a') });
        const scale = (await app.inject({ url: `${item('a')}/scale` })).json();
        assert.equal(scale.kind, 'Scale');
        assert.equal(scale.apiVersion, 'autoscaling/v1');
        const put = await app.inject({ method: 'PUT', url: `${item('a')}/scale`, payload: { ...scale, spec: { replicas: 3 } } });
        assert.equal(put.statusCode, 200, put.body);
        assert.equal((await app.inject({ url: item('a') })).json().spec.replicas, 3);
        const stale = await app.inject({ method: 'PUT', url: `${item('a')}/scale`, payload: { ...scale, spec: { replicas: 4 } } });
        assert.equal(stale.statusCode, 409, 'a stale Scale resourceVersion conflicts');
      });
    }

    test('an unknown subresource is 404; a verb the subresource does not serve is 405', async (t) => {
      const app = await f.setup(t);
      await app.inject({ method: 'POST', url: coll, payload: f.object('a') });
      assert.equal((await app.inject({ url: `${item('a')}/nope` })).statusCode, 404);
      if (f.status) assert.equal((await app.inject({ method: 'POST', url: `${item('a')}/status`, payload: {} })).statusCode, 405);
    });
  });
}
