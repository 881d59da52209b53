import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../../testing/memory-storage.js';
import { buildApiServer } from '../../server.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')),
    enableAdmissionPlugins: ['LimitRanger', 'ResourceQuota'] });
  await app.ready();
  t.after(() => app.close());
  return app;
}
const NS = '/api/v1/namespaces/default';
const pod = (name: string, resources?: Record<string, unknown>) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', ...(resources ? { resources } : {}) }] },
});
/** A quota whose status the controller has already computed. */
async function quota(app: Awaited<ReturnType<typeof setup>>, hard: Record<string, string>, used: Record<string, string>) {
  const created = (await app.inject({ method: 'POST', url: `${NS}/resourcequotas`, payload: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard } } })).json();
  const res = await app.inject({ method: 'PUT', url: `${NS}/resourcequotas/q/status`, payload: { ...created, status: { hard, used } } });
  assert.equal(res.statusCode, 200, res.body);
}

test('ResourceQuota: a pod past the pods quota is 403 with upstream\'s exceeded-quota message', async (t) => {
  const app = await setup(t);
  await quota(app, { pods: '1', 'count/resourcequotas': '5' }, { pods: '0', 'count/resourcequotas': '1' });
  assert.equal((await app.inject({ method: 'POST', url: `${NS}/pods`, payload: pod('a') })).statusCode, 201);
  const q = (await app.inject({ method: 'GET', url: `${NS}/resourcequotas/q` })).json();
  assert.deepEqual(q.status.used, { pods: '1', 'count/resourcequotas': '1' }, 'admission charged the create');
  const res = await app.inject({ method: 'POST', url: `${NS}/pods`, payload: pod('b') });
  assert.equal(res.statusCode, 403);
  const st = res.json();
  assert.equal(st.reason, 'Forbidden');
  assert.equal(st.message, 'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1');
});

test('ResourceQuota: compute quotas require requests and sum them', async (t) => {
  const app = await setup(t);
  await quota(app, { 'requests.cpu': '1', 'requests.memory': '1Gi' }, { 'requests.cpu': '0', 'requests.memory': '0' });
  const missing = await app.inject({ method: 'POST', url: `${NS}/pods`, payload: pod('a') });
  assert.equal(missing.statusCode, 403);
  assert.equal(missing.json().message, 'pods "a" is forbidden: failed quota: q: must specify requests.cpu for: c; requests.memory for: c');
  const ok = await app.inject({ method: 'POST', url: `${NS}/pods`, payload: pod('b', { requests: { cpu: '600m', memory: '512Mi' } }) });
  assert.equal(ok.statusCode, 201, ok.body);
  const over = await app.inject({ method: 'POST', url: `${NS}/pods`, payload: pod('c', { requests: { cpu: '600m', memory: '100Mi' } }) });
  assert.equal(over.json().message, 'pods "c" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1');
});

test('ResourceQuota: a quota without computed status refuses what it limits', async (t) => {
  const app = await setup(t);
  await app.inject({ method: 'POST', url: `${NS}/resourcequotas`, payload: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'fresh' }, spec: { hard: { 'count/configmaps': '1' } } } });
  const res = await app.inject({ method: 'POST', url: `${NS}/configmaps`, payload: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().message, 'configmaps "x" is forbidden: status unknown for quota: fresh, resources: count/configmaps');
});

test('ResourceQuota: dry runs are checked but not charged', async (t) => {
  const app = await setup(t);
  await quota(app, { 'count/configmaps': '1' }, { 'count/configmaps': '0' });
  const dry = await app.inject({ method: 'POST', url: `${NS}/configmaps?dryRun=All`, payload: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } });
  assert.equal(dry.statusCode, 201);
  assert.deepEqual((await app.inject({ method: 'GET', url: `${NS}/resourcequotas/q` })).json().status.used, { 'count/configmaps': '0' });
});

test('ResourceQuota: validation rejects negative and non-standard quantities', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: `${NS}/resourcequotas`, payload: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'bad' }, spec: { hard: { pods: '-1', bogus: '1' } } } });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json().details.causes.map((c: { field: string }) => c.field).sort(), ['spec.hard[bogus]', 'spec.hard[pods]']);
});

test('LimitRanger: fills defaults, annotates, and enforces max', async (t) => {
  const app = await setup(t);
  const lr = await app.inject({ method: 'POST', url: `${NS}/limitranges`, payload: { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'lr' },
    spec: { limits: [{ type: 'Container', max: { cpu: '1' }, defaultRequest: { cpu: '100m' }, default: { memory: '128Mi' } }] } } });
  assert.equal(lr.statusCode, 201, lr.body);
  // SetDefaults_LimitRangeItem: default cpu from max, defaultRequest memory from default.
  assert.deepEqual(lr.json().spec.limits[0].default, { memory: '128Mi', cpu: '1' });
  assert.deepEqual(lr.json().spec.limits[0].defaultRequest, { cpu: '100m', memory: '128Mi' });
  const p = (await app.inject({ method: 'POST', url: `${NS}/pods`, payload: pod('a') })).json();
  assert.deepEqual(p.spec.containers[0].resources, { limits: { cpu: '1', memory: '128Mi' }, requests: { cpu: '100m', memory: '128Mi' } });
  assert.equal(p.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c');
  assert.equal(p.status.qosClass, 'Burstable');
  const big = await app.inject({ method: 'POST', url: `${NS}/pods`, payload: pod('b', { limits: { cpu: '2' } }) });
  assert.equal(big.statusCode, 403);
  assert.equal(big.json().message, 'pods "b" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
});

test('LimitRange: validation orders min, default and max as upstream', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: `${NS}/limitranges`, payload: { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'lr' },
    spec: { limits: [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }] } } });
  assert.equal(res.statusCode, 422);
  assert.match(res.json().message, /spec.limits\[0\].min\[cpu\]: Invalid value: 2: min value 2 is greater than max value 1/);
});

test('ResourceQuota and LimitRange print kubectl\'s columns', async (t) => {
  const app = await setup(t);
  await quota(app, { pods: '4', 'limits.cpu': '2', 'requests.cpu': '1' }, { pods: '1', 'limits.cpu': '500m', 'requests.cpu': '0' });
  const table = (await app.inject({ method: 'GET', url: `${NS}/resourcequotas`, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
  assert.deepEqual(table.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Age', 'Request', 'Limit']);
  assert.deepEqual(table.rows[0].cells.slice(2), ['pods: 1/4, requests.cpu: 0/1', 'limits.cpu: 500m/2']);
});
