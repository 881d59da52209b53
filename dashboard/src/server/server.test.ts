import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { createLogger } from '@mk8s/component-base';
import { buildDashboardServer, type Asset } from './server.js';
import type { Upstream, UpstreamRequest } from './upstream.js';
import { CSRF_HEADER, csrfRefusal, isProxiedPath } from './security.js';

const TOKEN = 'secret-token-abc123';

function fixture(o: { status?: number; body?: string; fail?: boolean } = {}) {
  const calls: { req: UpstreamRequest; body: string }[] = [];
  const upstream: Upstream = async (req) => {
    let body = '';
    if (req.body) for await (const c of req.body) body += String(c);
    calls.push({ req, body });
    if (o.fail) throw new Error('connect ECONNREFUSED');
    return { status: o.status ?? 200, headers: { 'content-type': 'application/json', 'set-cookie': ['x=1'] }, body: Readable.from([o.body ?? '{"kind":"PodList","items":[]}']) };
  };
  let logs = '';
  const sink = new Writable({ write(c, _e, cb) { logs += String(c); cb(); } });
  const assets = new Map<string, Asset>([['/index.html', { contentType: 'text/html', body: Buffer.from('<!doctype html><script type="module" src="/app.js"></script>') }], ['/app.js', { contentType: 'text/javascript', body: Buffer.from('1') }]]);
  return { calls, upstream, assets, logger: createLogger({ level: 'debug', destination: sink }), logs: () => logs };
}

test('a request without a bearer token gets 401 and never reaches the apiserver', async (t) => {
  const f = fixture();
  const app = await buildDashboardServer(f);
  t.after(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/api/v1/pods' });
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().reason, 'Unauthorized');
  const basic = await app.inject({ method: 'GET', url: '/api/v1/pods', headers: { authorization: 'Basic YTpi' } });
  assert.equal(basic.statusCode, 401);
  assert.equal(f.calls.length, 0);
});

test('the proxy forwards only the user token and content headers, and the answer as it came', async (t) => {
  const f = fixture({ status: 403, body: '{"kind":"Status","code":403,"reason":"Forbidden"}' });
  const app = await buildDashboardServer(f);
  t.after(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/pods?watch=1&resourceVersion=5', headers: { authorization: `Bearer ${TOKEN}`, cookie: 'session=1', accept: 'application/json', 'x-forwarded-for': '1.2.3.4', 'impersonate-user': 'admin' } });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().reason, 'Forbidden');
  assert.equal(res.headers['set-cookie'], undefined);
  const [call] = f.calls;
  assert.equal(call!.req.path, '/api/v1/namespaces/default/pods?watch=1&resourceVersion=5');
  assert.deepEqual(Object.keys(call!.req.headers).sort(), ['accept', 'authorization', 'user-agent']);
  assert.equal(call!.req.headers['authorization'], `Bearer ${TOKEN}`);
});

test('mutations need the dashboard header and a same-origin Origin', async (t) => {
  const f = fixture();
  const app = await buildDashboardServer(f);
  t.after(() => app.close());
  const url = '/apis/apps/v1/namespaces/default/deployments/web?fieldManager=mk8s-dashboard';
  const base = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/apply-patch+yaml', host: 'dash.local:8443' };
  const noHeader = await app.inject({ method: 'PATCH', url, headers: base, payload: 'a: 1' });
  assert.equal(noHeader.statusCode, 403);
  const otherOrigin = await app.inject({ method: 'PATCH', url, headers: { ...base, [CSRF_HEADER]: '1', origin: 'https://evil.example' }, payload: 'a: 1' });
  assert.equal(otherOrigin.statusCode, 403);
  assert.equal(f.calls.length, 0);
  const ok = await app.inject({ method: 'PATCH', url, headers: { ...base, [CSRF_HEADER]: '1', origin: 'https://dash.local:8443' }, payload: 'kind: Deployment\n' });
  assert.equal(ok.statusCode, 200);
  assert.equal(f.calls[0]!.body, 'kind: Deployment\n');
  assert.equal(f.calls[0]!.req.headers['content-type'], 'application/apply-patch+yaml');
});

test('every response carries the anti-framing, CSP and referrer headers', async (t) => {
  const f = fixture();
  const app = await buildDashboardServer(f);
  t.after(() => app.close());
  for (const res of [await app.inject({ url: '/' }), await app.inject({ url: '/api/v1/pods' }), await app.inject({ url: '/nope.js' })]) {
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.match(String(res.headers['content-security-policy']), /script-src 'self'(;|$)/);
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
  }
  const page = await app.inject({ url: '/' });
  assert.equal(page.statusCode, 200);
  assert.equal(page.headers['cache-control'], 'no-store');
});

test('the token never appears in the logs, even when the apiserver is down', async (t) => {
  const f = fixture({ fail: true });
  const app = await buildDashboardServer(f);
  t.after(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/api/v1/pods', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.statusCode, 502);
  app.log.info({ req: { headers: { authorization: `Bearer ${TOKEN}` } } }, 'Probe');
  assert.ok(f.logs().includes('Could not reach the apiserver'));
  assert.ok(!f.logs().includes(TOKEN), f.logs());
});

test('healthz and readyz', async (t) => {
  let up = false;
  const f = fixture();
  const app = await buildDashboardServer({ ...f, ready: async () => up });
  t.after(() => app.close());
  assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
  assert.equal((await app.inject({ url: '/readyz' })).statusCode, 503);
  up = true;
  assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
});

test('csrfRefusal', () => {
  for (const tc of [
    { name: 'GET is always allowed', method: 'GET', h: {}, ok: true },
    { name: 'POST without the header', method: 'POST', h: { host: 'a' }, ok: false },
    { name: 'POST with header, no Origin (non-browser client)', method: 'POST', h: { host: 'a', [CSRF_HEADER]: '1' }, ok: true },
    { name: 'DELETE from another origin', method: 'DELETE', h: { host: 'a', origin: 'https://b', [CSRF_HEADER]: '1' }, ok: false },
    { name: 'PUT cross-site fetch metadata', method: 'PUT', h: { host: 'a', origin: 'https://a', 'sec-fetch-site': 'cross-site', [CSRF_HEADER]: '1' }, ok: false },
    { name: 'PATCH same origin', method: 'PATCH', h: { host: 'a', origin: 'https://a', 'sec-fetch-site': 'same-origin', [CSRF_HEADER]: '1' }, ok: true },
  ]) assert.equal(csrfRefusal(tc.method, tc.h) === undefined, tc.ok, tc.name);
});

test('isProxiedPath', () => {
  for (const [p, want] of [['/api', true], ['/api/v1/pods?watch=1', true], ['/apis/apps/v1', true], ['/apiz', false], ['/healthz', false],
    ['/api/../healthz', false], ['/api/%2e%2e/metrics', false], ['/api/v1/namespaces/default/pods/x/log?follow=true', true]] as const) {
    assert.equal(isProxiedPath(p), want, p);
  }
});
