import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@mk8s/component-base';
import { ensureCa, issueCertificate } from '@mk8s/component-base/pki';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { apiServiceChanged, discoveryFailure, reachable } from './aggregator.js';
import { FakeClock } from '@mk8s/component-base/testing';
import { createServer as createTcpServer, type Socket } from 'node:net';

type Json = Record<string, any>;
let dir = '';
let backend: Server | undefined;
let port = 0;
let caBundle = '';
let proxyClient: { cert: string; key: string } | undefined;
const seen: Json[] = [];

/** A backend serving metrics.example.com/v1beta1 widgets, as an aggregated API server does. */
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mk8s-agg-'));
  const ca = await ensureCa({ cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') });
  const cert = await issueCertificate(ca, { commonName: 'api', usage: 'server', dnsNames: ['api.default.svc'] });
  caBundle = Buffer.from(ca.certPem).toString('base64');
  const client = await issueCertificate(ca, { commonName: 'front-proxy-client', usage: 'client' });
  proxyClient = { cert: client.certPem, key: client.keyPem };
  backend = createServer({ cert: cert.certPem, key: cert.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
    seen.push({ url: req.url, user: req.headers['x-remote-user'], groups: req.headers['x-remote-group'], client: peer?.subject?.CN });
    res.setHeader('content-type', 'application/json');
    if (req.url === '/apis/metrics.example.com/v1beta1') {
      return res.end(JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'metrics.example.com/v1beta1', resources: [{ name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs: ['get', 'list'] }] }));
    }
    if (req.url?.startsWith('/apis/metrics.example.com/v1beta1/namespaces/default/widgets')) {
      return res.end(JSON.stringify({ kind: 'WidgetList', apiVersion: 'metrics.example.com/v1beta1', metadata: {}, items: [{ metadata: { name: 'w' }, user: req.headers['x-remote-user'] }] }));
    }
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((r) => backend!.listen(0, '127.0.0.1', () => r()));
  port = (backend.address() as { port: number }).port;
});
after(async () => {
  backend?.closeAllConnections();
  await new Promise<void>((r) => backend!.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

async function eventually<T>(fn: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('API aggregation', () => {
  test('an APIService backed by a Service answers through the apiserver, in discovery, with Available', async (t) => {
    const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), ...(proxyClient ? { proxyClient } : {}) });
    await app.ready();
    t.after(() => app.close());
    const post = async (url: string, payload: Json) => { const r = await app.inject({ method: 'POST', url, payload }); assert.ok(r.statusCode < 300, r.body); return r.json(); };
    await post('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api' }, spec: { ports: [{ port: 443, targetPort: port }] } });
    const apiService = { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1beta1.metrics.example.com' },
      spec: { group: 'metrics.example.com', version: 'v1beta1', service: { namespace: 'default', name: 'api', port: 443 }, caBundle, groupPriorityMinimum: 100, versionPriority: 100 } };
    await post('/apis/apiregistration.k8s.io/v1/apiservices', apiService);
    const available = (want: string) => eventually(async () => {
      const a = (await app.inject({ url: '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.example.com' })).json();
      const c = a.status?.conditions?.find((x: Json) => x.type === 'Available');
      return c?.status === want ? c : undefined;
    }, `Available=${want}`);
    const missing = await available('False');
    assert.equal(missing.reason, 'MissingEndpoints');
    // Upstream's proxy answers 503 "service unavailable" for an unavailable APIService, not 404.
    const down = await app.inject({ url: '/apis/metrics.example.com/v1beta1/namespaces/default/widgets' });
    assert.equal(down.statusCode, 503, down.body);
    assert.equal(down.body, 'service unavailable\n');
    await post('/api/v1/namespaces/default/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'api' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port }] }] });
    // The Endpoints change is checked at once (and so is the label change).
    await app.inject({ method: 'PATCH', url: '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.example.com', headers: { 'content-type': 'application/merge-patch+json' }, payload: { metadata: { labels: { touched: 'yes' } } } });
    const ok = await available('True');
    assert.equal(ok.reason, 'Passed');
    const table = (await app.inject({ url: '/apis/apiregistration.k8s.io/v1/apiservices', headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
    assert.deepEqual(table.columnDefinitions.map((c: Json) => c.name), ['Name', 'Service', 'Available', 'Age']);
    assert.deepEqual(table.rows[0].cells.slice(0, 3), ['v1beta1.metrics.example.com', 'default/api', 'True']);
    const list = await app.inject({ url: '/apis/metrics.example.com/v1beta1/namespaces/default/widgets', headers: { 'user-agent': 'test' } });
    assert.equal(list.statusCode, 200, list.body);
    assert.equal(list.json().items[0].user, 'system:anonymous');
    assert.equal(seen.at(-1)!['user'], 'system:anonymous');
    assert.equal(seen.at(-1)!['client'], 'front-proxy-client', 'the proxy client certificate is presented');
    const disc = (await app.inject({ url: '/apis/metrics.example.com/v1beta1' })).json();
    assert.deepEqual(disc.resources.map((r: Json) => r.name), ['widgets']);
    const groups = (await app.inject({ url: '/apis' })).json();
    assert.ok(groups.groups.some((g: Json) => g.name === 'metrics.example.com'));
    await app.inject({ method: 'DELETE', url: '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.example.com' });
    await eventually(async () => ((await app.inject({ url: '/apis/metrics.example.com/v1beta1/namespaces/default/widgets' })).statusCode === 404 ? true : undefined), 'unserved');
  });

  test('checks run concurrently, bounded each; an Endpoints change is checked at once', async (t) => {
    // A backend that accepts connections and never answers (a hanging aggregated API server).
    const sockets = new Set<Socket>();
    const hang = createTcpServer((sock) => { sockets.add(sock); sock.on('close', () => sockets.delete(sock)); });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    const hangPort = (hang.address() as { port: number }).port;
    t.after(() => { for (const s of sockets) s.destroy(); hang.close(); });
    // A fake clock: the periodic resync and the check timeout only happen when the test steps it.
    const clock = new FakeClock(Date.now());
    const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock, ...(proxyClient ? { proxyClient } : {}) });
    await app.ready();
    t.after(() => app.close());
    const post = async (url: string, payload: Json) => { const r = await app.inject({ method: 'POST', url, payload }); assert.ok(r.statusCode < 300, r.body); return r.json(); };
    const svc = (name: string, target: number) => post('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 443, targetPort: target }] } });
    const eps = (name: string, target: number) => post('/api/v1/namespaces/default/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: target }] }] });
    const apiService = (name: string, group: string, service: string) => post('/apis/apiregistration.k8s.io/v1/apiservices', { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name },
      spec: { group, version: 'v1beta1', service: { namespace: 'default', name: service, port: 443 }, caBundle, groupPriorityMinimum: 100, versionPriority: 100 } });
    const condition = async (name: string) => ((await app.inject({ url: `/apis/apiregistration.k8s.io/v1/apiservices/${name}` })).json().status?.conditions ?? []).find((x: Json) => x.type === 'Available');
    await svc('hang', hangPort);
    await eps('hang', hangPort);
    await apiService('v1beta1.hang.example.com', 'hang.example.com', 'hang');
    await eventually(async () => (sockets.size > 0 ? true : undefined), 'the hanging check to connect');
    await svc('api', port);
    await apiService('v1beta1.metrics.example.com', 'metrics.example.com', 'api');
    assert.equal((await eventually(() => condition('v1beta1.metrics.example.com'), 'a condition')).reason, 'MissingEndpoints');
    // The Endpoints appearing is a change for the APIService that points at the Service: checked now, no resync needed.
    const discoveries = () => seen.filter((x) => x['url'] === '/apis/metrics.example.com/v1beta1').length;
    const before = discoveries();
    await eps('api', port);
    const ok = await eventually(async () => { const c = await condition('v1beta1.metrics.example.com'); return c?.status === 'True' ? c : undefined; }, 'Available=True');
    assert.equal(ok.reason, 'Passed');
    assert.equal(await condition('v1beta1.hang.example.com'), undefined, 'the hanging check is still under way and held nothing up');
    // The per-check timeout (upstream: 6 s) ends the hanging one.
    clock.step(6000);
    const timedOut = await eventually(async () => { const c = await condition('v1beta1.hang.example.com'); return c?.status === 'False' ? c : undefined; }, 'Available=False');
    assert.equal(timedOut.reason, 'FailedDiscoveryCheck');
    assert.equal(timedOut.message, `timed out waiting for https://127.0.0.1:${hangPort}/apis/hang.example.com/v1beta1`);
    assert.ok(discoveries() > before);
  });

  test('which APIService events call for a check: not status writes', () => {
    const a = { metadata: { name: 'v1.x.io', resourceVersion: '1' }, spec: { group: 'x.io', version: 'v1' } } as Json;
    const statusWrite = { ...a, metadata: { ...a['metadata'], resourceVersion: '2' }, status: { conditions: [{ type: 'Available', status: 'True' }] } };
    assert.equal(apiServiceChanged('MODIFIED', a as any, statusWrite as any), false);
    assert.equal(apiServiceChanged('MODIFIED', a as any, { ...a, spec: { ...a['spec'], insecureSkipTLSVerify: true } } as any), true);
    assert.equal(apiServiceChanged('MODIFIED', a as any, { ...a, metadata: { ...a['metadata'], labels: { t: 'y' } } } as any), true);
    assert.equal(apiServiceChanged('ADDED', undefined, a as any), true);
    assert.equal(apiServiceChanged('DELETED', a as any, a as any), true);
    assert.equal(apiServiceChanged('BOOKMARK', a as any, a as any), false);
  });

  test('APIServices are validated', async (t) => {
    const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger() });
    await app.ready();
    t.after(() => app.close());
    const r = await app.inject({ method: 'POST', url: '/apis/apiregistration.k8s.io/v1/apiservices', payload: { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'wrong' }, spec: { group: 'g.io', version: 'v1', groupPriorityMinimum: 0, versionPriority: 1 } } });
    assert.equal(r.statusCode, 422);
    assert.deepEqual(r.json().details.causes.map((c: Json) => c.field), ['metadata.name', 'spec.groupPriorityMinimum']);
  });

  test('why a Service-backed APIService is not reachable, in upstream availability controller words', () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'm', namespace: 'kube-system' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 4443 }] } };
    assert.deepEqual(reachable(svc, undefined, 'm', 'kube-system', 8443), { reason: 'ServicePortError', message: 'service/m in "kube-system" is not listening on port 8443' });
    assert.deepEqual(reachable(svc, undefined, 'm', 'kube-system', 443), { reason: 'MissingEndpoints', message: 'endpoints for service/m in "kube-system" have no addresses with port name "https"' });
    const eps = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'm', namespace: 'kube-system' }, subsets: [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ name: 'https', port: 4443 }] }] };
    assert.equal(reachable(svc, eps, 'm', 'kube-system', 443), '10.0.0.5:4443');
    const url = 'https://10.0.0.5:4443/apis/metrics.k8s.io/v1beta1';
    assert.equal(discoveryFailure(url, new Error('connect ECONNREFUSED 10.0.0.5:4443')), `failing or missing response from ${url}: Get "${url}": connect ECONNREFUSED 10.0.0.5:4443`);
    assert.equal(discoveryFailure(url, new Error(`timed out waiting for ${url}`)), `timed out waiting for ${url}`);
    const bad = `failing or missing response from ${url}: bad status from ${url}: 503`;
    assert.equal(discoveryFailure(url, new Error(bad)), bad);
  });
});
