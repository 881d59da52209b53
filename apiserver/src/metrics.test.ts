import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { MemoryStorage } from './testing/memory-storage.js';
import { buildApiServer } from './server.js';
import { parseRequestInfo } from './endpoints/request-info.js';
import { cleanDryRun, RequestLabelCache, requestMetricLabels } from './metrics.js';

describe('requestMetricLabels', () => {
  const cases: { name: string; method: string; url: string; contentType?: string; want: Partial<Record<string, string>> | undefined }[] = [
    { name: 'GET of one object is GET, scope resource', method: 'GET', url: '/api/v1/namespaces/default/pods/web',
      want: { verb: 'GET', group: '', version: 'v1', resource: 'pods', subresource: '', scope: 'resource', component: 'apiserver' } },
    { name: 'GET of a namespaced collection is LIST, scope namespace', method: 'GET', url: '/api/v1/namespaces/default/pods', want: { verb: 'LIST', scope: 'namespace' } },
    { name: 'GET across namespaces is LIST, scope cluster', method: 'GET', url: '/apis/apps/v1/deployments', want: { verb: 'LIST', group: 'apps', version: 'v1', resource: 'deployments', scope: 'cluster' } },
    { name: 'HEAD of a collection is LIST', method: 'HEAD', url: '/api/v1/nodes', want: { verb: 'LIST', scope: 'cluster' } },
    { name: '?watch=true is WATCH', method: 'GET', url: '/api/v1/namespaces/default/pods?watch=true', want: { verb: 'WATCH', scope: 'namespace' } },
    { name: '?watch=1 is WATCH', method: 'GET', url: '/api/v1/pods?watch=1&resourceVersion=5', want: { verb: 'WATCH', scope: 'cluster' } },
    { name: '?watch=false is LIST', method: 'GET', url: '/api/v1/pods?watch=false', want: { verb: 'LIST' } },
    { name: 'legacy /watch/ path is WATCH', method: 'GET', url: '/api/v1/watch/namespaces/default/pods', want: { verb: 'WATCH', resource: 'pods', scope: 'namespace' } },
    { name: 'watch of one object by name is WATCH, scope resource', method: 'GET', url: '/api/v1/watch/namespaces/default/pods/web', want: { verb: 'WATCH', scope: 'resource' } },
    { name: 'create is POST with scope resource', method: 'POST', url: '/api/v1/namespaces/default/pods', want: { verb: 'POST', scope: 'resource' } },
    { name: 'update is PUT', method: 'PUT', url: '/api/v1/namespaces/default/pods/web', want: { verb: 'PUT', scope: 'resource' } },
    { name: 'status update keeps its subresource', method: 'PUT', url: '/api/v1/namespaces/default/pods/web/status', want: { verb: 'PUT', resource: 'pods', subresource: 'status' } },
    { name: 'merge patch is PATCH', method: 'PATCH', url: '/apis/apps/v1/namespaces/d/deployments/x', contentType: 'application/merge-patch+json', want: { verb: 'PATCH' } },
    { name: 'server-side apply is APPLY', method: 'PATCH', url: '/apis/apps/v1/namespaces/d/deployments/x?fieldManager=kubectl', contentType: 'application/apply-patch+yaml', want: { verb: 'APPLY' } },
    { name: 'apply with a charset is still APPLY', method: 'PATCH', url: '/api/v1/namespaces/d/configmaps/x', contentType: 'application/apply-patch+yaml; charset=utf-8', want: { verb: 'APPLY' } },
    { name: 'delete of one object is DELETE', method: 'DELETE', url: '/api/v1/namespaces/default/pods/web', want: { verb: 'DELETE', scope: 'resource' } },
    { name: 'delete of a collection is DELETE, scope namespace', method: 'DELETE', url: '/api/v1/namespaces/default/pods', want: { verb: 'DELETE', scope: 'namespace' } },
    { name: 'exec is CONNECT', method: 'POST', url: '/api/v1/namespaces/default/pods/web/exec?command=ls', want: { verb: 'CONNECT', subresource: 'exec', scope: 'resource' } },
    { name: 'log is CONNECT', method: 'GET', url: '/api/v1/namespaces/default/pods/web/log?follow=true', want: { verb: 'CONNECT', subresource: 'log' } },
    { name: 'scale stays GET', method: 'GET', url: '/apis/apps/v1/namespaces/d/deployments/x/scale', want: { verb: 'GET', subresource: 'scale' } },
    { name: 'cluster-scoped object is scope resource', method: 'GET', url: '/api/v1/namespaces/kube-system', want: { verb: 'GET', resource: 'namespaces', scope: 'resource' } },
    { name: 'dryRun=All is reported', method: 'POST', url: '/api/v1/namespaces/default/pods?dryRun=All', want: { verb: 'POST', dry_run: 'All' } },
    { name: 'healthz is its path with no component', method: 'GET', url: '/healthz', want: { verb: 'GET', resource: '', subresource: '/healthz', scope: '', component: '' } },
    { name: 'group discovery is its path', method: 'GET', url: '/apis/apps', want: { subresource: '/apis/apps', scope: '' } },
    { name: 'an unknown path gets no series', method: 'GET', url: '/favicon.ico', want: undefined },
    { name: 'an unserved resource gets no series', method: 'GET', url: '/api/v1/namespaces/default/nosuchthing123', want: undefined },
    { name: 'an unserved group gets no series', method: 'GET', url: '/apis/x.example/v9/widgets', want: undefined },
    { name: 'an unknown subresource gets no series', method: 'GET', url: '/api/v1/namespaces/default/pods/web/zzz', want: undefined },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const info = parseRequestInfo(tc.method, tc.url);
      const q = tc.url.indexOf('?');
      const dryRun = q < 0 ? [] : new URLSearchParams(tc.url.slice(q + 1)).getAll('dryRun');
      const got = requestMetricLabels(info, { contentType: tc.contentType, dryRun });
      if (tc.want === undefined) return assert.equal(got, undefined);
      assert.ok(got);
      for (const [k, v] of Object.entries(tc.want)) assert.equal((got as unknown as Record<string, string>)[k], v, k);
    });
  }
});

describe('cleanDryRun', () => {
  for (const [values, want] of [[[], ''], [['All'], 'All'], [['All', 'All'], 'All'], [['Some'], 'invalid']] as const) {
    test(`${JSON.stringify(values)} → ${JSON.stringify(want)}`, () => assert.equal(cleanDryRun(values), want));
  }
});

describe('RequestLabelCache', () => {
  test('client-chosen dryRun values and content types do not grow it; same shape, same objects', () => {
    const c = new RequestLabelCache();
    const url = (i: number) => `/api/v1/namespaces/default/configmaps/x?dryRun=junk${i}`;
    const first = c.labelsFor(parseRequestInfo('PATCH', url(0)), url(0), 'application/merge-patch+json; x=0');
    for (let i = 1; i < 100; i++) {
      assert.equal(c.labelsFor(parseRequestInfo('PATCH', url(i)), url(i), `application/merge-patch+json; x=${i}`), first);
    }
    assert.equal(first?.dry_run, 'invalid');
    assert.equal(first?.verb, 'PATCH');
    const apply = '/api/v1/namespaces/default/configmaps/x?dryRun=All';
    assert.equal(c.labelsFor(parseRequestInfo('PATCH', apply), apply, 'application/apply-patch+yaml; charset=utf-8')?.verb, 'APPLY');
    assert.equal(c.size, 2);
    assert.equal(c.withCode(first!, 200), c.withCode(first!, 200));
    assert.equal(c.withCode(first!, 404).code, '404');
  });

  test('past its bound it still derives labels', () => {
    const c = new RequestLabelCache(1);
    for (const u of ['/api/v1/pods', '/api/v1/nodes', '/api/v1/nodes']) assert.ok(c.labelsFor(parseRequestInfo('GET', u), u, undefined));
    assert.equal(c.size, 1);
  });
});

describe('apiserver /metrics', () => {
  test('serves upstream families with the full label set, process metrics and storage counts', async (t) => {
    const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger() });
    t.after(() => app.close());
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } } });
    await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/configmaps' });
    await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/configmaps/missing' });
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = (re: RegExp) => text.split('\n').find((l) => re.test(l));
    assert.ok(line(/^apiserver_request_total\{verb="POST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="resource",component="apiserver",code="201"\} 1$/), 'POST series');
    assert.ok(line(/^apiserver_request_total\{verb="LIST",.*resource="configmaps".*scope="namespace".*code="200"\} 1$/), 'LIST series');
    assert.ok(line(/^apiserver_request_total\{verb="GET",.*resource="configmaps".*code="404"\} 1$/), 'GET 404 series');
    assert.ok(line(/^apiserver_request_duration_seconds_bucket\{le="0.005",verb="LIST",.*resource="configmaps"/), 'duration buckets');
    assert.ok(line(/^apiserver_current_inflight_requests\{request_kind="readOnly"\} \d+$/), 'inflight readOnly');
    assert.ok(line(/^apiserver_current_inflight_requests\{request_kind="mutating"\} \d+$/), 'inflight mutating');
    assert.ok(line(/^apiserver_storage_objects\{resource="configmaps"\} 1$/), 'storage objects');
    assert.ok(line(/^apiserver_storage_objects\{resource="deployments.apps"\} 0$/), 'storage objects of a group resource');
    assert.ok(line(/^process_cpu_seconds_total /), 'process metrics');
    assert.ok(line(/^nodejs_eventloop_lag_seconds /), 'runtime metrics');
  });

  test('a watch counts its events and is a WATCH request once it ends', async (t) => {
    const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), bootstrapNamespaces: false });
    t.after(() => app.close());
    await app.inject({ method: 'POST', url: '/api/v1/namespaces', payload: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n1' } } });
    const res = await app.inject({ method: 'GET', url: '/api/v1/namespaces?watch=true&resourceVersion=0&timeoutSeconds=1' });
    assert.match(res.body, /"ADDED"/);
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(text, /apiserver_watch_events_total\{group="",version="v1",kind="Namespace"\} [1-9]/);
    assert.match(text, /apiserver_request_total\{verb="WATCH",dry_run="",group="",version="v1",resource="namespaces",subresource="",scope="cluster",component="apiserver",code="200"\} 1/);
    assert.match(text, /apiserver_longrunning_requests\{verb="WATCH",.*resource="namespaces".*\} 0/);
  });
});
