import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { RESOURCES } from '@mk8s/api';
import { registerDiscovery } from './register.js';
import { negotiateAggregated, storageVersionHash } from './documents.js';

const KUBECTL_DISCOVERY_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

async function app() {
  const a = Fastify();
  registerDiscovery(a, { resources: RESOURCES });
  await a.ready();
  return a;
}

type Json = Record<string, any>;

describe('discovery', () => {
  test('/version reports 1.32 with every field kubectl reads', async (t) => {
    const a = await app(); t.after(() => a.close());
    const res = await a.inject({ url: '/version?timeout=32s' });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^application\/json/);
    const v = res.json();
    assert.equal(v.major, '1');
    assert.equal(v.minor, '32');
    assert.equal(v.gitVersion, 'v1.32.0-mk8s');
    for (const f of ['gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform']) assert.equal(typeof v[f], 'string', f);
  });

  test('legacy /api lists v1', async (t) => {
    const a = await app(); t.after(() => a.close());
    const res = await a.inject({ url: '/api', headers: { accept: 'application/json, */*' } });
    assert.equal(res.headers['content-type'], 'application/json');
    const body = res.json();
    assert.equal(body.kind, 'APIVersions');
    assert.deepEqual(body.versions, ['v1']);
    assert.equal(body.serverAddressByClientCIDRs[0].clientCIDR, '0.0.0.0/0');
  });

  test('legacy /apis lists every non-core group with a preferred version', async (t) => {
    const a = await app(); t.after(() => a.close());
    const body = (await a.inject({ url: '/apis' })).json();
    assert.equal(body.kind, 'APIGroupList');
    const names = body.groups.map((g: Json) => g.name);
    assert.deepEqual(names, ['apps', 'coordination.k8s.io', 'discovery.k8s.io', 'scheduling.k8s.io', 'rbac.authorization.k8s.io', 'batch', 'policy', 'storage.k8s.io', 'certificates.k8s.io', 'events.k8s.io', 'autoscaling']);
    assert.deepEqual(body.groups[0].preferredVersion, { groupVersion: 'apps/v1', version: 'v1' });
    const autoscaling = body.groups.find((g: Json) => g.name === 'autoscaling');
    assert.deepEqual(autoscaling.versions.map((v: Json) => v.version), ['v2', 'v1'], 'autoscaling serves v2 (preferred) and v1');
    assert.deepEqual(autoscaling.preferredVersion, { groupVersion: 'autoscaling/v2', version: 'v2' });
    const group = (await a.inject({ url: '/apis/apps' })).json();
    assert.equal(group.kind, 'APIGroup');
    assert.equal(group.name, 'apps');
  });

  test('/api/v1 lists resources and subresources like upstream', async (t) => {
    const a = await app(); t.after(() => a.close());
    const body = (await a.inject({ url: '/api/v1' })).json();
    assert.equal(body.kind, 'APIResourceList');
    assert.equal(body.groupVersion, 'v1');
    const by = new Map<string, Json>(body.resources.map((r: Json) => [r.name, r]));
    const pods = by.get('pods')!;
    assert.equal(pods.singularName, 'pod');
    assert.equal(pods.namespaced, true);
    assert.equal(pods.kind, 'Pod');
    assert.deepEqual(pods.shortNames, ['po']);
    assert.deepEqual(pods.categories, ['all']);
    assert.deepEqual(pods.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.equal(pods.storageVersionHash, storageVersionHash('', 'v1', 'Pod'));
    assert.deepEqual(by.get('pods/eviction'), { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
    assert.equal(by.get('pods/status')!.kind, 'Pod');
    assert.equal(by.get('pods/binding')!.kind, 'Binding');
    assert.equal(by.get('pods/exec')!.kind, 'PodExecOptions');
    assert.deepEqual(by.get('pods/log')!.verbs, ['get']);
    assert.equal(by.get('nodes')!.namespaced, false);
    assert.equal(by.get('services')!.shortNames[0], 'svc');
    assert.equal(by.get('serviceaccounts/token')!.group, 'authentication.k8s.io');
    // Upstream sorts resources by name; categories expand in this order (`get all`: pods before services).
    const top = body.resources.filter((r: Json) => !r.name.includes('/')).map((r: Json) => r.name);
    assert.deepEqual(top, [...top].sort());
  });

  test('/apis/apps/v1 lists deployments/scale as autoscaling/v1 Scale', async (t) => {
    const a = await app(); t.after(() => a.close());
    const body = (await a.inject({ url: '/apis/apps/v1' })).json();
    assert.equal(body.groupVersion, 'apps/v1');
    const scale = body.resources.find((r: Json) => r.name === 'deployments/scale');
    assert.deepEqual(scale, { name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
    const deploy = body.resources.find((r: Json) => r.name === 'deployments');
    assert.deepEqual(deploy.categories, ['all']);
    assert.deepEqual(deploy.shortNames, ['deploy']);
  });

  test('unknown group versions are not served here', async (t) => {
    const a = await app(); t.after(() => a.close());
    assert.equal((await a.inject({ url: '/apis/batch/v2' })).statusCode, 404);
  });

  for (const [path, legacy] of [['/api', true], ['/apis', false]] as const) {
    test(`aggregated discovery on ${path} with upstream's exact content type`, async (t) => {
      const a = await app(); t.after(() => a.close());
      const res = await a.inject({ url: `${path}?timeout=32s`, headers: { accept: KUBECTL_DISCOVERY_ACCEPT } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      const body = res.json();
      assert.equal(body.kind, 'APIGroupDiscoveryList');
      assert.equal(body.apiVersion, 'apidiscovery.k8s.io/v2');
      if (legacy) {
        assert.equal(body.items.length, 1);
        assert.deepEqual(body.items[0].metadata, {});
        const pods = body.items[0].versions[0].resources.find((r: Json) => r.resource === 'pods');
        assert.deepEqual(pods.responseKind, { group: '', version: 'v1', kind: 'Pod' });
        assert.equal(pods.scope, 'Namespaced');
        assert.equal(pods.singularResource, 'pod');
        const eviction = pods.subresources.find((s: Json) => s.subresource === 'eviction');
        assert.deepEqual(eviction.responseKind, { group: 'policy', version: 'v1', kind: 'Eviction' });
        const nodes = body.items[0].versions[0].resources.find((r: Json) => r.resource === 'nodes');
        assert.equal(nodes.scope, 'Cluster');
      } else {
        assert.deepEqual(body.items.map((i: Json) => i.metadata.name), ['apps', 'coordination.k8s.io', 'discovery.k8s.io', 'scheduling.k8s.io', 'rbac.authorization.k8s.io', 'batch', 'policy', 'storage.k8s.io', 'certificates.k8s.io', 'events.k8s.io', 'autoscaling']);
        const v1 = body.items[0].versions[0];
        assert.equal(v1.version, 'v1');
        assert.equal(v1.freshness, 'Current');
        const deploy = v1.resources.find((r: Json) => r.resource === 'deployments');
        const scale = deploy.subresources.find((s: Json) => s.subresource === 'scale');
        assert.deepEqual(scale.responseKind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
        assert.deepEqual(deploy.categories, ['all']);
      }
    });
  }

  test('aggregated discovery carries an ETag and answers 304 to a matching If-None-Match', async (t) => {
    const a = await app(); t.after(() => a.close());
    const first = await a.inject({ url: '/apis', headers: { accept: KUBECTL_DISCOVERY_ACCEPT } });
    const etag = first.headers['etag'] as string;
    assert.match(etag, /^"[0-9A-F]+"$/);
    const again = await a.inject({ url: '/apis', headers: { accept: KUBECTL_DISCOVERY_ACCEPT, 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const api = await a.inject({ url: '/api', headers: { accept: KUBECTL_DISCOVERY_ACCEPT, 'if-none-match': etag } });
    assert.equal(api.statusCode, 200, 'each document has its own ETag');
  });

  test('v2beta1 only when the client asks for it alone', async (t) => {
    const a = await app(); t.after(() => a.close());
    const res = await a.inject({ url: '/apis', headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList' } });
    assert.equal(res.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
    assert.equal(res.json().apiVersion, 'apidiscovery.k8s.io/v2beta1');
  });
});

describe('negotiateAggregated', () => {
  for (const tc of [
    { accept: undefined, want: undefined },
    { accept: 'application/json', want: undefined },
    { accept: 'application/json, */*', want: undefined },
    { accept: KUBECTL_DISCOVERY_ACCEPT, want: 'v2' },
    { accept: 'application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io', want: 'v2' },
    { accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json', want: 'v2beta1' },
    { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io', want: undefined },
  ]) {
    test(`${tc.accept} → ${tc.want}`, () => assert.equal(negotiateAggregated(tc.accept), tc.want));
  }
});

test('storageVersionHash matches upstream for apps/v1 Deployment', () => {
  // Value served by a real 1.32 apiserver.
  assert.equal(storageVersionHash('apps', 'v1', 'Deployment'), '8aSe+NMegvE=');
  assert.equal(storageVersionHash('', 'v1', 'Pod'), 'xPOwRZ+Yhw8=');
});
