import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CachedDiscovery, GroupDiscoveryFailedError, partialResources, resourcesFromDiscovery, RestDiscovery, type DiscoveryClient } from './discovery.js';

const core = { groupVersion: 'v1', resources: [
  { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['create', 'delete', 'get', 'list', 'watch'], shortNames: ['po'] },
  { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
  { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', verbs: ['get', 'list'] },
] };
const crd = { groupVersion: 'stable.example.com/v1', resources: [{ name: 'crontabs', singularName: 'crontab', namespaced: true, kind: 'CronTab', verbs: ['delete', 'list', 'watch'], categories: ['all'] }] };

test('discovery: resourcesFromDiscovery folds subresources and splits groupVersion', () => {
  const rs = resourcesFromDiscovery([core, crd]);
  assert.deepEqual(rs.map((r) => `${r.group}/${r.version}/${r.resource}:${r.namespaced}`), ['/v1/pods:true', '/v1/namespaces:false', 'stable.example.com/v1/crontabs:true']);
  assert.deepEqual(rs[0]!.subresources, ['status']);
  assert.deepEqual(rs[0]!.shortNames, ['po']);
  assert.equal(rs[2]!.listKind, 'CronTabList');
  assert.deepEqual(rs[2]!.categories, ['all']);
});

test('discovery: RestDiscovery reads /api, /apis and each preferred version', async () => {
  const docs: Record<string, unknown> = {
    '/api': { versions: ['v1'] },
    '/apis': { groups: [{ name: 'stable.example.com', versions: [{ groupVersion: 'stable.example.com/v1', version: 'v1' }, { groupVersion: 'stable.example.com/v1beta1', version: 'v1beta1' }], preferredVersion: { groupVersion: 'stable.example.com/v1', version: 'v1' } }] },
    '/api/v1': core, '/apis/stable.example.com/v1': crd,
  };
  const paths: string[] = [];
  const d = new RestDiscovery({ getRaw: async (p) => { paths.push(p); if (!(p in docs)) throw new Error(`404 ${p}`); return JSON.stringify(docs[p]); } });
  const rs = await d.serverPreferredResources();
  assert.deepEqual(rs.map((r) => r.resource), ['pods', 'namespaces', 'crontabs']);
  assert.deepEqual(paths.sort(), ['/api', '/api/v1', '/apis', '/apis/stable.example.com/v1']);
});

test('discovery: CachedDiscovery serves from cache within the TTL and refreshes after it', async () => {
  let calls = 0;
  let now = 0;
  const inner: DiscoveryClient = { serverPreferredResources: async () => { calls++; return []; } };
  const c = new CachedDiscovery(inner, 30_000, () => now);
  await Promise.all([c.serverPreferredResources(), c.serverPreferredResources()]);
  assert.equal(calls, 1, 'concurrent callers share one request');
  now = 29_999; await c.serverPreferredResources(); assert.equal(calls, 1);
  now = 30_000; await c.serverPreferredResources(); assert.equal(calls, 2);
  c.invalidate(); await c.serverPreferredResources(); assert.equal(calls, 3);
});

test('discovery: a group that fails is reported with the resources of the others', async () => {
  const d = new RestDiscovery({ getRaw: async (p) => {
    if (p === '/api') return JSON.stringify({ versions: ['v1'] });
    if (p === '/apis') return JSON.stringify({ groups: [{ name: 'metrics.example.com', versions: [{ groupVersion: 'metrics.example.com/v1', version: 'v1' }] }, { name: 'stable.example.com', versions: [{ groupVersion: 'stable.example.com/v1', version: 'v1' }] }] });
    if (p === '/api/v1') return JSON.stringify(core);
    if (p === '/apis/stable.example.com/v1') return JSON.stringify(crd);
    throw new Error('503 service unavailable');
  } });
  const err = await d.serverPreferredResources().then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof GroupDiscoveryFailedError);
  assert.deepEqual([...err.groups.keys()], ['metrics.example.com/v1']);
  assert.deepEqual(partialResources(err).map((r) => r.resource), ['pods', 'namespaces', 'crontabs']);
  assert.throws(() => partialResources(new Error('other')), /other/);
});
