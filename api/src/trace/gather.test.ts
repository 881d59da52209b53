import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../errors.js';
import { gatherTrace, proxiedServices, traceLinks, type ApiGet } from './gather.js';
import { firstBroken } from './link.js';

const T0 = '2026-11-30T09:00:00Z';
const owner = (kind: string, name: string, uid: string) => [{ apiVersion: 'apps/v1', kind, name, uid, controller: true }];
const deploy = { metadata: { name: 'web', namespace: 'ns', uid: 'd1', resourceVersion: '10', generation: 1, creationTimestamp: T0, annotations: { 'deployment.kubernetes.io/revision': '1' } }, spec: { selector: { matchLabels: { app: 'web' } }, template: {} }, status: { observedGeneration: 1 } };
const rs = { metadata: { name: 'web-1', namespace: 'ns', uid: 'r1', annotations: { 'deployment.kubernetes.io/revision': '1' }, ownerReferences: owner('Deployment', 'web', 'd1') }, spec: { replicas: 1, selector: {} } };
const pod = (image: string, waiting?: { reason: string; message: string }) => ({
  metadata: { name: 'web-1-a', namespace: 'ns', uid: 'p1', labels: { app: 'web' }, ownerReferences: owner('ReplicaSet', 'web-1', 'r1') },
  spec: { nodeName: 'node-1', containers: [{ name: 'web', image }] },
  status: waiting
    ? { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'web', image, imageID: '', ready: false, restartCount: 0, state: { waiting } }] }
    : { phase: 'Running', podIP: '10.244.0.5', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'web', image, imageID: 'docker://sha', ready: true, restartCount: 0, state: { running: { startedAt: T0 } } }] },
});
const node = (name: string) => ({ metadata: { name }, status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: T0 }] } });
const svc = { metadata: { name: 'web', namespace: 'ns' }, spec: { selector: { app: 'web' }, clusterIP: '10.96.0.20' } };
const headless = { metadata: { name: 'peers', namespace: 'ns' }, spec: { selector: { app: 'web' }, clusterIP: 'None' } };
const slice = (service: string) => ({ metadata: { name: `${service}-x`, labels: { 'kubernetes.io/service-name': service } }, endpoints: [{ addresses: ['10.244.0.5'], conditions: { ready: true } }] });
const list = (...items: unknown[]) => ({ kind: 'List', items });

/** A fake GET over a path → body table; unknown paths answer 404, `forbidden` paths 403; every path asked is recorded. */
function fakeGet(routes: Record<string, unknown>, forbidden: string[] = []): ApiGet & { asked: string[] } {
  const asked: string[] = [];
  const get = async (path: string) => {
    asked.push(path);
    if (forbidden.includes(path)) throw new ApiError('Forbidden', `cannot list ${path}`);
    if (!(path in routes)) throw new ApiError('NotFound', `${path} not found`);
    return structuredClone(routes[path]);
  };
  return Object.assign(get, { asked });
}

const chainRoutes = (p: unknown) => ({
  '/apis/apps/v1/namespaces/ns/deployments/web': deploy,
  '/apis/apps/v1/namespaces/ns/replicasets': list(rs),
  '/api/v1/namespaces/ns/pods': list(p),
  '/api/v1/namespaces/ns/services': list(svc, headless),
  '/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices': list(slice('web'), slice('peers')),
  '/api/v1/nodes': list(node('node-1'), node('node-2')),
  '/api/v1/namespaces/ns/events': list({ metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'web-1-a' }, reason: 'Failed', type: 'Warning', message: 'Failed to pull image "mk8s/does-not-exist:1": pull access denied', lastTimestamp: T0 }),
  '/api/v1/namespaces/ns/configmaps': list({ metadata: { name: 'cfg' } }),
  '/api/v1/namespaces/ns/secrets': list({ metadata: { name: 's1' } }),
  '/api/v1/namespaces/ns/persistentvolumeclaims': list(),
  '/api/v1/persistentvolumes': list(),
});

describe('gatherTrace reads what the chain needs through one GET', () => {
  test('a Deployment: the target first, then its namespace\'s lists and the nodes; sources name what to watch', async () => {
    const get = fakeGet(chainRoutes(pod('mk8s/test-server')));
    const g = await gatherTrace(get, { kind: 'Deployment', namespace: 'ns', name: 'web' });
    assert.equal(get.asked[0], '/apis/apps/v1/namespaces/ns/deployments/web');
    assert.deepEqual(new Set(get.asked.slice(1)), new Set(Object.keys(chainRoutes(undefined)).slice(1)));
    assert.equal(g.sources[0], '/apis/apps/v1/namespaces/ns/deployments?fieldSelector=metadata.name%3Dweb');
    assert.ok(g.sources.includes('/api/v1/namespaces/ns/events') && g.sources.includes('/api/v1/nodes'));
    assert.equal(g.kind, 'chain');
    if (g.kind !== 'chain') return;
    assert.deepEqual(g.input.configMaps, ['cfg']);
    assert.deepEqual(g.input.secrets, ['s1']);
    assert.deepEqual(proxiedServices(g), [{ namespace: 'ns', name: 'web' }], 'headless Services have no proxy rules');
    const links = traceLinks(g);
    assert.equal(firstBroken(links), undefined);
    assert.deepEqual(links.map((l) => `${l.step}:${l.status}`), ['stored:ok', 'replicaset:ok', 'pods:ok', 'scheduled:ok', 'node:ok', 'image:ok', 'started:ok', 'ready:ok', 'endpoints:ok', 'kube-proxy:info', 'endpoints:ok', 'kube-proxy:info', 'dns:info']);
  });

  test('a pod whose image is missing: the chain breaks at image with the pull error', async () => {
    const routes = { ...chainRoutes(pod('mk8s/does-not-exist:1', { reason: 'ImagePullBackOff', message: 'Back-off pulling image "mk8s/does-not-exist:1"' })) };
    const get = fakeGet({ ...routes, '/api/v1/namespaces/ns/pods/web-1-a': (routes['/api/v1/namespaces/ns/pods'] as { items: unknown[] }).items[0] });
    const links = traceLinks(await gatherTrace(get, { kind: 'Pod', namespace: 'ns', name: 'web-1-a' }));
    const b = firstBroken(links);
    assert.equal(b?.step, 'image');
    assert.match(b!.evidence, /ImagePullBackOff for mk8s\/does-not-exist:1: Failed to pull image "mk8s\/does-not-exist:1": pull access denied/);
  });

  test('forbidden Secrets, claims and volumes are skipped; a forbidden list the chain needs rejects', async () => {
    const routes = chainRoutes(pod('mk8s/test-server'));
    const g = await gatherTrace(fakeGet(routes, ['/api/v1/namespaces/ns/secrets', '/api/v1/persistentvolumes']), { kind: 'Deployment', namespace: 'ns', name: 'web' });
    assert.ok(g.kind === 'chain' && !('secrets' in g.input) && g.input.volumes?.length === 0);
    await assert.rejects(gatherTrace(fakeGet(routes, ['/api/v1/nodes']), { kind: 'Deployment', namespace: 'ns', name: 'web' }), (e) => e instanceof ApiError && e.reason === 'Forbidden');
  });

  test('a missing target rejects with NotFound before any list is read', async () => {
    const get = fakeGet({});
    await assert.rejects(gatherTrace(get, { kind: 'Service', namespace: 'ns', name: 'nope' }), (e) => e instanceof ApiError && e.reason === 'NotFound');
    assert.deepEqual(get.asked, ['/api/v1/namespaces/ns/services/nope']);
  });

  test('a Job reads its pods and only its own events; a CronJob also its Jobs', async () => {
    const job = { metadata: { name: 'pi', namespace: 'ns', uid: 'j1' }, spec: { template: {} }, status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } };
    const events = '/api/v1/namespaces/ns/events?fieldSelector=involvedObject.name%3Dpi';
    const get = fakeGet({ '/apis/batch/v1/namespaces/ns/jobs/pi': job, '/api/v1/namespaces/ns/pods': list(), [events]: list() });
    const g = await gatherTrace(get, { kind: 'Job', namespace: 'ns', name: 'pi' });
    assert.deepEqual(get.asked.slice(1).sort(), ['/api/v1/namespaces/ns/pods', events].sort());
    assert.deepEqual(traceLinks(g).map((l) => `${l.step}:${l.status}`), ['stored:ok', 'pods:ok', 'complete:ok']);
    const cj = { metadata: { name: 'pi', namespace: 'ns', uid: 'c1' }, spec: { schedule: '* * * * *', jobTemplate: {} } };
    const cget = fakeGet({ '/apis/batch/v1/namespaces/ns/cronjobs/pi': cj, '/api/v1/namespaces/ns/pods': list(), [events]: list(), '/apis/batch/v1/namespaces/ns/jobs': list() });
    const cg = await gatherTrace(cget, { kind: 'CronJob', namespace: 'ns', name: 'pi' });
    assert.ok(cget.asked.includes('/apis/batch/v1/namespaces/ns/jobs'));
    assert.deepEqual(traceLinks(cg).map((l) => `${l.step}:${l.status}`), ['stored:ok', 'last job:waiting']);
  });

  test('a DaemonSet reads the nodes; a StatefulSet only its pods', async () => {
    const ds = { metadata: { name: 'agent', namespace: 'ns', uid: 'ds', generation: 1 }, spec: { selector: {}, template: { spec: { containers: [] } } }, status: { observedGeneration: 1 } };
    const dget = fakeGet({ '/apis/apps/v1/namespaces/ns/daemonsets/agent': ds, '/api/v1/namespaces/ns/pods': list(), '/api/v1/nodes': list(node('node-1')) });
    const links = traceLinks(await gatherTrace(dget, { kind: 'DaemonSet', namespace: 'ns', name: 'agent' }));
    assert.deepEqual(links.map((l) => `${l.step}:${l.status}`), ['stored:ok', 'node node-1:broken']);
    const sts = { metadata: { name: 'db', namespace: 'ns', uid: 's', generation: 1 }, spec: { replicas: 0, selector: {}, template: {} }, status: { observedGeneration: 1, replicas: 0 } };
    const sget = fakeGet({ '/apis/apps/v1/namespaces/ns/statefulsets/db': sts, '/api/v1/namespaces/ns/pods': list() });
    await gatherTrace(sget, { kind: 'StatefulSet', namespace: 'ns', name: 'db' });
    assert.deepEqual(sget.asked, ['/apis/apps/v1/namespaces/ns/statefulsets/db', '/api/v1/namespaces/ns/pods']);
  });
});

test('the trace library is browser-safe: no node: import in it or in what it imports', () => {
  const here = dirname(fileURLToPath(import.meta.url));
  const seen = new Set<string>();
  const bad: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/^(?:import|export)\s(?:type\s)?[^;]*?from\s+'([^']+)'/gm)) {
      const spec = m[1]!;
      if (/^(?:import|export)\s+type\s/.test(m[0])) continue;                   // erased at build time
      if (spec.startsWith('node:')) bad.push(`${file}: ${spec}`);
      else if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
    }
  };
  visit(join(here, 'index.ts'));
  assert.ok(seen.size > 5);
  assert.deepEqual(bad, []);
});
