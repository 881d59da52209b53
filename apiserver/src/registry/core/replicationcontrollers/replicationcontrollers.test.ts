import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../../../testing/memory-storage.js';
import { buildApiServer } from '../../../server.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')) });
  await app.ready();
  t.after(() => app.close());
  return app;
}
const RC = '/api/v1/namespaces/default/replicationcontrollers';
const rc = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'ReplicationController', metadata: { name },
  spec: { template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }, ...extra },
});

test('replicationcontrollers: create defaults selector, labels and replicas from the template; status is the server\'s', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: RC, payload: { ...rc('web'), status: { replicas: 9 } } });
  assert.equal(res.statusCode, 201, res.body);
  const o = res.json();
  assert.deepEqual(o.spec.selector, { app: 'web' });
  assert.deepEqual(o.metadata.labels, { app: 'web' });
  assert.equal(o.spec.replicas, 1);
  assert.equal(o.metadata.generation, 1);
  assert.deepEqual(o.status, { replicas: 0 });
  assert.equal(o.spec.template.spec.restartPolicy, 'Always');
});

test('replicationcontrollers: a selector that does not match the template is 422 as upstream', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: RC, payload: rc('web', { selector: { app: 'other' } }) });
  assert.equal(res.statusCode, 422);
  const st = res.json();
  assert.equal(st.reason, 'Invalid');
  assert.match(st.message, /^ReplicationController "web" is invalid: spec.template.metadata.labels: Invalid value: .*`selector` does not match template `labels`/);
  assert.equal(st.details.causes[0].field, 'spec.template.metadata.labels');
});

test('replicationcontrollers: /scale reads and writes spec.replicas with a set-based selector string', async (t) => {
  const app = await setup(t);
  await app.inject({ method: 'POST', url: RC, payload: rc('web') });
  const s = (await app.inject({ method: 'GET', url: `${RC}/web/scale` })).json();
  assert.equal(s.kind, 'Scale');
  assert.equal(s.apiVersion, 'autoscaling/v1');
  assert.deepEqual(s.spec, { replicas: 1 });
  assert.deepEqual(s.status, { replicas: 0, selector: 'app=web' });
  const put = await app.inject({ method: 'PUT', url: `${RC}/web/scale`, payload: { ...s, spec: { replicas: 3 } } });
  assert.equal(put.statusCode, 200, put.body);
  const after = (await app.inject({ method: 'GET', url: `${RC}/web` })).json();
  assert.equal(after.spec.replicas, 3);
  assert.equal(after.metadata.generation, 2);
});

test('replicationcontrollers: Table has kubectl\'s columns; discovery lists rc in category all', async (t) => {
  const app = await setup(t);
  await app.inject({ method: 'POST', url: RC, payload: rc('web') });
  const table = (await app.inject({ method: 'GET', url: RC, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
  assert.deepEqual(table.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Desired', 'Current', 'Ready', 'Age', 'Containers', 'Images', 'Selector']);
  assert.deepEqual(table.rows[0].cells.slice(0, 4), ['web', 1, 0, 0]);
  const disc = (await app.inject({ method: 'GET', url: '/api/v1' })).json();
  const r = disc.resources.find((x: { name: string }) => x.name === 'replicationcontrollers');
  assert.deepEqual(r.shortNames, ['rc']);
  assert.deepEqual(r.categories, ['all']);
  assert.ok(disc.resources.some((x: { name: string }) => x.name === 'replicationcontrollers/scale'));
});

test('podtemplates: create validates the template and prints Containers, Images, Pod Labels', async (t) => {
  const app = await setup(t);
  const url = '/api/v1/namespaces/default/podtemplates';
  const bad = await app.inject({ method: 'POST', url, payload: { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'x' }, template: { spec: { containers: [] } } } });
  assert.equal(bad.statusCode, 422, bad.body);
  const ok = await app.inject({ method: 'POST', url, payload: { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'pt' }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } });
  assert.equal(ok.statusCode, 201, ok.body);
  assert.equal(ok.json().template.spec.dnsPolicy, 'ClusterFirst');
  const table = (await app.inject({ method: 'GET', url, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
  assert.deepEqual(table.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Containers', 'Images', 'Pod Labels']);
  assert.deepEqual(table.rows[0].cells, ['pt', 'c', 'busybox', 'a=b']);
});
