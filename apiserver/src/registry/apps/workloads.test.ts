import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../../testing/memory-storage.js';
import { buildApiServer } from '../../server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function setup(t: { after(fn: () => unknown): void }) {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock });
  await app.ready();
  t.after(() => app.close());
  const req = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method, url, ...(payload !== undefined ? { payload: payload as Obj } : {}), headers });
    return { code: res.statusCode, body: res.json() as Obj };
  };
  return { app, clock, req };
}

const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
const ds = (name: string, spec: Obj = {}) => ({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name }, spec: { selector: { matchLabels: { app: name } }, template: template(name), ...spec } });
const sts = (name: string, spec: Obj = {}) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name }, spec: { serviceName: name, selector: { matchLabels: { app: name } }, template: template(name), ...spec } });
const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const APPS = '/apis/apps/v1/namespaces/default';
const POLICY = '/apis/policy/v1/namespaces/default';

describe('apps/v1 DaemonSet, StatefulSet, ControllerRevision', () => {
  test('a DaemonSet is defaulted as upstream and starts with zero status and template generation 1', async (t) => {
    const { req } = await setup(t);
    const res = await req('POST', `${APPS}/daemonsets`, ds('agent'));
    assert.equal(res.code, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    assert.equal(res.body.spec.revisionHistoryLimit, 10);
    assert.equal(res.body.metadata.generation, 1);
    assert.equal(res.body.metadata.annotations['deprecated.daemonset.template.generation'], '1');
    assert.deepEqual(res.body.status, { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
    const upd = structuredClone(res.body);
    upd.spec.template.spec.containers[0].image = 'busybox:2';
    const put = await req('PUT', `${APPS}/daemonsets/agent`, upd);
    assert.equal(put.body.metadata.generation, 2);
    assert.equal(put.body.metadata.annotations['deprecated.daemonset.template.generation'], '2');
    const table = await req('GET', `${APPS}/daemonsets`, undefined, TABLE);
    assert.deepEqual(table.body.columnDefinitions.map((c: Obj) => c.name).slice(0, 8), ['Name', 'Desired', 'Current', 'Ready', 'Up-to-date', 'Available', 'Node Selector', 'Age']);
  });

  test('DaemonSet validation: empty selector, bad strategy, both zero', async (t) => {
    const { req } = await setup(t);
    const empty = await req('POST', `${APPS}/daemonsets`, ds('a', { selector: {} }));
    assert.equal(empty.code, 422);
    assert.ok(empty.body.details.causes.some((c: Obj) => c.field === 'spec.selector' && /empty selector is invalid for daemonset/.test(c.message)));
    const zero = await req('POST', `${APPS}/daemonsets`, ds('b', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }));
    assert.equal(zero.code, 422);
    assert.equal(zero.body.details.causes[0].field, 'spec.updateStrategy.rollingUpdate.maxUnavailable');
    const bad = await req('POST', `${APPS}/daemonsets`, ds('c', { updateStrategy: { type: 'Recreate' } }));
    assert.equal(bad.body.details.causes[0].reason, 'FieldValueNotSupported');
  });

  test('a StatefulSet is defaulted, served through /scale, and refuses changes outside the mutable fields', async (t) => {
    const { req } = await setup(t);
    const res = await req('POST', `${APPS}/statefulsets`, sts('web', { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] }));
    assert.equal(res.code, 201, JSON.stringify(res.body));
    const s = res.body.spec;
    assert.equal(s.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(s.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.deepEqual(s.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
    assert.equal(s.replicas, 1);
    assert.equal(s.revisionHistoryLimit, 10);
    assert.equal(s.volumeClaimTemplates[0].spec.volumeMode, 'Filesystem');
    assert.deepEqual(res.body.status, { replicas: 0, availableReplicas: 0 });
    const scale = await req('GET', `${APPS}/statefulsets/web/scale`);
    assert.equal(scale.body.kind, 'Scale');
    assert.equal(scale.body.status.selector, 'app=web');
    const scaled = await req('PATCH', `${APPS}/statefulsets/web/scale`, { spec: { replicas: 3 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(scaled.code, 200, JSON.stringify(scaled.body));
    const got = await req('GET', `${APPS}/statefulsets/web`);
    assert.equal(got.body.spec.replicas, 3);
    assert.equal(got.body.metadata.generation, 2);
    const forbidden = await req('PATCH', `${APPS}/statefulsets/web`, { spec: { serviceName: 'other' } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(forbidden.code, 422);
    assert.equal(forbidden.body.details.causes[0].reason, 'FieldValueForbidden');
    const table = await req('GET', `${APPS}/statefulsets`, undefined, TABLE);
    assert.deepEqual(table.body.rows[0].cells.slice(0, 2), ['web', '0/3']);
    const badPolicy = await req('POST', `${APPS}/statefulsets`, sts('x', { podManagementPolicy: 'Random' }));
    assert.equal(badPolicy.code, 422);
  });

  test('with MaxUnavailableStatefulSet off (the default) rollingUpdate.maxUnavailable is dropped on create and update', async (t) => {
    const { req } = await setup(t);
    const res = await req('POST', `${APPS}/statefulsets`, sts('mu', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1, maxUnavailable: 2 } } }));
    assert.equal(res.code, 201);
    assert.deepEqual(res.body.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 1 } });
    const patched = await req('PATCH', `${APPS}/statefulsets/mu`, { spec: { updateStrategy: { rollingUpdate: { maxUnavailable: 3 } } } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(patched.code, 200);
    assert.deepEqual(patched.body.spec.updateStrategy.rollingUpdate, { partition: 1 });
    assert.equal(patched.body.metadata.generation, 1, 'nothing of the spec changed');
  });

  test('a StatefulSet\'s containers may mount its claim templates; an unknown volume is still refused', async (t) => {
    const { req } = await setup(t);
    const claimTpl = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
    const mounting = (mount: string) => ({ metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: mount, mountPath: '/data' }] }] } });
    const ok = await req('POST', `${APPS}/statefulsets`, sts('db', { template: mounting('data'), volumeClaimTemplates: claimTpl }));
    assert.equal(ok.code, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.spec.template.spec.volumes, undefined, 'the stored template is as given');
    const bad = await req('POST', `${APPS}/statefulsets`, sts('db2', { selector: { matchLabels: { app: 'db' } }, template: mounting('other'), volumeClaimTemplates: claimTpl }));
    assert.equal(bad.code, 422);
    assert.ok(bad.body.details.causes.some((c: Obj) => c.field === 'spec.template.spec.containers[0].volumeMounts[0].name'), JSON.stringify(bad.body));
  });

  test('a ControllerRevision keeps its data immutable and prints its controller', async (t) => {
    const { req } = await setup(t);
    const cr = {
      apiVersion: 'apps/v1', kind: 'ControllerRevision', revision: 1, data: { spec: { template: { $patch: 'replace', spec: {} } } },
      metadata: { name: 'agent-6d4f', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'u1', controller: true }] },
    };
    const res = await req('POST', `${APPS}/controllerrevisions`, cr);
    assert.equal(res.code, 201, JSON.stringify(res.body));
    assert.equal(res.body.metadata.generation, undefined);
    const upd = { ...res.body, data: { other: 1 } };
    const put = await req('PUT', `${APPS}/controllerrevisions/agent-6d4f`, upd);
    assert.equal(put.code, 422);
    assert.equal(put.body.details.causes[0].field, 'data');
    const rev = await req('PUT', `${APPS}/controllerrevisions/agent-6d4f`, { ...res.body, revision: 4 });
    assert.equal(rev.code, 200, JSON.stringify(rev.body));
    const table = await req('GET', `${APPS}/controllerrevisions`, undefined, TABLE);
    assert.deepEqual(table.body.columnDefinitions.map((c: Obj) => c.name), ['Name', 'Controller', 'Revision', 'Age']);
    assert.deepEqual(table.body.rows[0].cells.slice(0, 3), ['agent-6d4f', 'daemonset.apps/agent', 4]);
    const missing = await req('POST', `${APPS}/controllerrevisions`, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'x' }, revision: 1 });
    assert.equal(missing.code, 422);
  });
});

describe('policy/v1 PodDisruptionBudget and pods/eviction', () => {
  const pdb = (name: string, spec: Obj) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } });
  const readyStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  async function runningPod(req: Awaited<ReturnType<typeof setup>>['req'], name: string, ready = true) {
    const created = await req('POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } });
    const st = await req('PUT', `/api/v1/namespaces/default/pods/${name}/status`, { ...created.body, status: ready ? readyStatus : { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } });
    assert.equal(st.code, 200, JSON.stringify(st.body));
  }
  async function setPdbStatus(req: Awaited<ReturnType<typeof setup>>['req'], name: string, status: Obj) {
    const cur = await req('GET', `${POLICY}/poddisruptionbudgets/${name}`);
    const res = await req('PUT', `${POLICY}/poddisruptionbudgets/${name}/status`, { ...cur.body, status: { observedGeneration: cur.body.metadata.generation, ...status } });
    assert.equal(res.code, 200, JSON.stringify(res.body));
  }
  const evict = (req: Awaited<ReturnType<typeof setup>>['req'], name: string) =>
    req('POST', `/api/v1/namespaces/default/pods/${name}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' }, deleteOptions: {} });

  test('a PDB starts with zero status; minAvailable and maxUnavailable together are invalid; table columns', async (t) => {
    const { req } = await setup(t);
    const res = await req('POST', `${POLICY}/poddisruptionbudgets`, pdb('web', { minAvailable: 2 }));
    assert.equal(res.code, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    const both = await req('POST', `${POLICY}/poddisruptionbudgets`, pdb('b', { minAvailable: 1, maxUnavailable: 1 }));
    assert.equal(both.code, 422);
    assert.match(both.body.details.causes[0].message, /minAvailable and maxUnavailable cannot be both set/);
    const pct = await req('POST', `${POLICY}/poddisruptionbudgets`, pdb('c', { maxUnavailable: '120%' }));
    assert.equal(pct.code, 422);
    const table = await req('GET', `${POLICY}/poddisruptionbudgets`, undefined, TABLE);
    assert.deepEqual(table.body.columnDefinitions.map((c: Obj) => c.name), ['Name', 'Min Available', 'Max Unavailable', 'Allowed Disruptions', 'Age']);
    assert.deepEqual(table.body.rows[0].cells.slice(0, 4), ['web', '2', 'N/A', 0]);
  });

  test('eviction of a pod whose PDB allows no disruption is 429 with a DisruptionBudget cause; the pod stays', async (t) => {
    const { req } = await setup(t);
    await runningPod(req, 'web-1');
    await req('POST', `${POLICY}/poddisruptionbudgets`, pdb('web', { minAvailable: 1 }));
    await setPdbStatus(req, 'web', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 });
    const res = await evict(req, 'web-1');
    assert.equal(res.code, 429, JSON.stringify(res.body));
    assert.equal(res.body.reason, 'TooManyRequests');
    assert.equal(res.body.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(res.body.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 1 currently' }]);
    assert.equal((await req('GET', '/api/v1/namespaces/default/pods/web-1')).body.metadata.deletionTimestamp, undefined);
  });

  test('eviction takes one disruption: disruptionsAllowed decremented, pod in disruptedPods, DisruptionTarget, graceful delete', async (t) => {
    const { req } = await setup(t);
    await runningPod(req, 'web-1');
    await runningPod(req, 'web-2');
    await req('POST', `${POLICY}/poddisruptionbudgets`, pdb('web', { maxUnavailable: 1 }));
    await setPdbStatus(req, 'web', { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 });
    const res = await evict(req, 'web-1');
    assert.equal(res.code, 201, JSON.stringify(res.body));
    const p = (await req('GET', `${POLICY}/poddisruptionbudgets/web`)).body;
    assert.equal(p.status.disruptionsAllowed, 0);
    assert.deepEqual(Object.keys(p.status.disruptedPods), ['web-1']);
    assert.equal(p.status.conditions.find((c: Obj) => c.type === 'DisruptionAllowed').reason, 'InsufficientPods');
    const pod = (await req('GET', '/api/v1/namespaces/default/pods/web-1')).body;
    assert.ok(pod.metadata.deletionTimestamp);
    assert.equal(pod.status.conditions.find((c: Obj) => c.type === 'DisruptionTarget').reason, 'EvictionByEvictionAPI');
    const second = await evict(req, 'web-2');
    assert.equal(second.code, 429);
  });

  test('eviction waits for the PDB controller to observe the current generation', async (t) => {
    const { req } = await setup(t);
    await runningPod(req, 'web-1');
    await req('POST', `${POLICY}/poddisruptionbudgets`, pdb('web', { maxUnavailable: 1 }));
    const res = await evict(req, 'web-1');
    assert.equal(res.code, 429);
    assert.equal(res.body.details.causes[0].message, 'observedGeneration must be >= metadata.generation');
  });

  test('an unready pod is evicted without a disruption when the budget is met; pods no PDB covers are just deleted', async (t) => {
    const { req } = await setup(t);
    await runningPod(req, 'web-1');
    await runningPod(req, 'web-2', false);
    await req('POST', `${POLICY}/poddisruptionbudgets`, pdb('web', { minAvailable: 1 }));
    await setPdbStatus(req, 'web', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 2 });
    const res = await evict(req, 'web-2');
    assert.equal(res.code, 201, JSON.stringify(res.body));
    assert.equal((await req('GET', `${POLICY}/poddisruptionbudgets/web`)).body.status.disruptedPods, undefined);
    const other = await req('POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lone' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } });
    await req('PUT', '/api/v1/namespaces/default/pods/lone/status', { ...other.body, status: readyStatus });
    assert.equal((await evict(req, 'lone')).code, 201);
  });
});
