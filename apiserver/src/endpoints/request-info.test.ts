import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo, type ResourceRequestInfo } from './request-info.js';

const parse = (method: string, url: string) => parseRequestInfo(method, url) as ResourceRequestInfo;

for (const tc of [
  { name: 'namespaced list', method: 'GET', url: '/api/v1/namespaces/default/pods?limit=500', want: { verb: 'list', namespace: 'default', resource: 'pods', name: '', subresource: '' } },
  { name: 'all-namespaces list', method: 'GET', url: '/api/v1/pods', want: { verb: 'list', namespace: '', resource: 'pods', name: '', subresource: '' } },
  { name: 'watch param', method: 'GET', url: '/api/v1/namespaces/default/pods?watch=1', want: { verb: 'watch', namespace: 'default', resource: 'pods', name: '', subresource: '' } },
  { name: 'legacy watch path', method: 'GET', url: '/api/v1/watch/namespaces/default/pods/web', want: { verb: 'watch', namespace: 'default', resource: 'pods', name: 'web', subresource: '' } },
  { name: 'get item', method: 'GET', url: '/apis/apps/v1/namespaces/ns/deployments/web', want: { verb: 'get', namespace: 'ns', resource: 'deployments', name: 'web', subresource: '' } },
  { name: 'subresource', method: 'PUT', url: '/apis/apps/v1/namespaces/ns/deployments/web/scale', want: { verb: 'update', namespace: 'ns', resource: 'deployments', name: 'web', subresource: 'scale' } },
  { name: 'namespace itself', method: 'GET', url: '/api/v1/namespaces/kube-system', want: { verb: 'get', namespace: '', resource: 'namespaces', name: 'kube-system', subresource: '' } },
  { name: 'namespace finalize', method: 'PUT', url: '/api/v1/namespaces/x/finalize', want: { verb: 'update', namespace: '', resource: 'namespaces', name: 'x', subresource: 'finalize' } },
  { name: 'namespace status', method: 'GET', url: '/api/v1/namespaces/x/status', want: { verb: 'get', namespace: '', resource: 'namespaces', name: 'x', subresource: 'status' } },
  { name: 'namespaced collection named like a subresource', method: 'GET', url: '/api/v1/namespaces/x/pods/status', want: { verb: 'get', namespace: 'x', resource: 'pods', name: 'status', subresource: '' } },
  { name: 'delete collection', method: 'DELETE', url: '/api/v1/namespaces/x/configmaps', want: { verb: 'deletecollection', namespace: 'x', resource: 'configmaps', name: '', subresource: '' } },
  { name: 'cluster-scoped', method: 'PATCH', url: '/api/v1/nodes/n1/status', want: { verb: 'patch', namespace: '', resource: 'nodes', name: 'n1', subresource: 'status' } },
]) {
  test(`parses ${tc.name}`, () => {
    const info = parse(tc.method, tc.url);
    assert.equal(info.resourceRequest, true);
    const { verb, namespace, resource, name, subresource } = info;
    assert.deepEqual({ verb, namespace, resource, name, subresource }, tc.want);
    assert.ok(info.descriptor, 'resolves the descriptor');
  });
}

test('unknown resources and versions resolve no descriptor', () => {
  assert.equal(parse('GET', '/api/v1/foos').descriptor, undefined);
  assert.equal(parse('GET', '/apis/apps/v2/deployments').descriptor, undefined);
});

test('non-resource paths', () => {
  assert.equal(parseRequestInfo('GET', '/healthz').resourceRequest, false);
  assert.equal(parseRequestInfo('GET', '/api').resourceRequest, false);
  assert.equal(parseRequestInfo('GET', '/apis/apps').resourceRequest, false);
});

test('the proxy subresource carries the rest of the path (still encoded); other subresources take none', () => {
  for (const [url, subpath] of [
    ['/api/v1/nodes/n1/proxy/stats/summary?only_cpu_and_memory=true', '/stats/summary'],
    ['/api/v1/nodes/n1/proxy/metrics/resource', '/metrics/resource'],
    ['/api/v1/nodes/n1/proxy', '/'],
    ['/api/v1/nodes/n1/proxy/logs/', '/logs/'],
    ['/api/v1/nodes/n1/proxy/containerLogs/ns/a%2Fb/c', '/containerLogs/ns/a%2Fb/c'],
  ] as const) {
    const info = parse('GET', url);
    assert.ok(info.resourceRequest, url);
    assert.deepEqual([info.verb, info.resource, info.name, info.subresource, info.subpath], ['get', 'nodes', 'n1', 'proxy', subpath], url);
  }
  assert.equal(parse('GET', '/api/v1/nodes/n1/status/extra').resourceRequest, false);
});
