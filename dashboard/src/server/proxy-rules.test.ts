import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { createLogger } from '@mk8s/component-base';
import type { ProxyEvidence } from '@mk8s/api/trace';
import { buildDashboardServer } from './server.js';
import type { ProxyRulesReader } from './proxy-rules.js';
import { invalidProxyRulesParams, parseNodesParam } from './proxy-rules.js';
import type { Upstream, UpstreamRequest } from './upstream.js';

const TOKEN = 'user-token-xyz';
const URL_WEB = '/mk8s/v1/namespaces/ns/services/web/proxy-rules';
const auth = { authorization: `Bearer ${TOKEN}` };
const SERVICE = JSON.stringify({ kind: 'Service', apiVersion: 'v1', metadata: { name: 'web', namespace: 'ns' }, spec: { clusterIP: '10.96.0.20' } });
const status = (code: number, reason: string) => JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `services "web" is ${reason}` });

/** The apiserver answers the Service GET with status/body; the reader is a table of nodes. */
function fixture(o: { status?: number; body?: string; nodes?: string[] | undefined; noReader?: boolean } = {}) {
  const calls: UpstreamRequest[] = [];
  const upstream: Upstream = async (req) => {
    calls.push(req);
    return { status: o.status ?? 200, headers: { 'content-type': 'application/json' }, body: Readable.from([o.body ?? SERVICE]) };
  };
  const reads: { nodes: readonly string[]; service: { namespace: string; name: string } }[] = [];
  const reader: ProxyRulesReader = {
    nodes: async () => (o.nodes === undefined ? undefined : new Set(o.nodes)),
    async read(nodes, service) {
      reads.push({ nodes, service });
      const out: Record<string, ProxyEvidence> = {};
      for (const n of nodes) out[n] = { node: n, present: true, endpoints: 2, detail: `${service.namespace}/${service.name} → KUBE-SVC-ABC with 2 endpoints` };
      return out;
    },
  };
  const sink = new Writable({ write(_c, _e, cb) { cb(); } });
  const opts = { upstream, assets: new Map(), logger: createLogger({ level: 'warn', destination: sink }), ...(o.noReader ? {} : { proxyRules: reader }) };
  return { calls, reads, opts };
}

test('proxy-rules: without a bearer token 401, and neither the apiserver nor the nodes are asked', async (t) => {
  const f = fixture({ nodes: ['n1'] });
  const app = await buildDashboardServer(f.opts);
  t.after(() => app.close());
  const res = await app.inject({ url: URL_WEB });
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().reason, 'Unauthorized');
  assert.equal(f.calls.length + f.reads.length, 0);
});

test('proxy-rules: the user\'s token GETs the Service first; then each node\'s evidence', async (t) => {
  const f = fixture({ nodes: ['n1', 'n2', 'n3'] });
  const app = await buildDashboardServer(f.opts);
  t.after(() => app.close());
  const res = await app.inject({ url: `${URL_WEB}?nodes=n1,n2`, headers: { ...auth, cookie: 'a=1' } });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['x-frame-options'], 'DENY');
  const body = res.json();
  assert.equal(body.kind, 'ProxyRules');
  assert.deepEqual(Object.keys(body.nodes), ['n1', 'n2']);
  assert.match(body.nodes.n1.detail, /KUBE-SVC/);
  assert.equal(f.calls.length, 1);
  assert.equal(f.calls[0]!.method, 'GET');
  assert.equal(f.calls[0]!.path, '/api/v1/namespaces/ns/services/web');
  assert.deepEqual(Object.keys(f.calls[0]!.headers).sort(), ['accept', 'authorization', 'user-agent']);
  assert.equal(f.calls[0]!.headers['authorization'], `Bearer ${TOKEN}`);
  assert.deepEqual(f.reads, [{ nodes: ['n1', 'n2'], service: { namespace: 'ns', name: 'web' } }]);
  // No nodes named: every node with a netns here.
  const all = await app.inject({ url: URL_WEB, headers: auth });
  assert.deepEqual(Object.keys(all.json().nodes), ['n1', 'n2', 'n3']);
});

test('proxy-rules: the apiserver\'s refusal is the answer (403, 404), and no rule is read', async (t) => {
  for (const [code, reason] of [[403, 'Forbidden'], [404, 'NotFound'], [401, 'Unauthorized']] as const) {
    const f = fixture({ status: code, body: status(code, reason), nodes: ['n1'] });
    const app = await buildDashboardServer(f.opts);
    const res = await app.inject({ url: `${URL_WEB}?nodes=n1`, headers: auth });
    await app.close();
    assert.equal(res.statusCode, code);
    assert.equal(res.json().kind, 'Status');
    assert.equal(res.json().reason, reason);
    assert.equal(f.reads.length, 0, reason);
  }
  t.diagnostic('403/404/401 pass through');
});

test('proxy-rules: names that are not DNS labels are refused before anything is read', async (t) => {
  const f = fixture({ nodes: ['n1'] });
  const app = await buildDashboardServer(f.opts);
  t.after(() => app.close());
  for (const url of [
    '/mk8s/v1/namespaces/NS/services/web/proxy-rules',
    '/mk8s/v1/namespaces/ns/services/web%3Brm/proxy-rules',
    '/mk8s/v1/namespaces/ns/services/1web/proxy-rules',
    `${URL_WEB}?nodes=n1,$(reboot)`,
    `${URL_WEB}?nodes=n1;id`,
    `${URL_WEB}?nodes=../n1`,
  ]) {
    const res = await app.inject({ url, headers: auth });
    assert.equal(res.statusCode, 400, url);
    assert.equal(res.json().reason, 'BadRequest', url);
  }
  assert.equal(f.calls.length + f.reads.length, 0);
});

test('proxy-rules: a node without a netns here is refused; nothing readable (not root, compose, VM) is 501', async (t) => {
  const f = fixture({ nodes: ['n1'] });
  const app = await buildDashboardServer(f.opts);
  t.after(() => app.close());
  const unknown = await app.inject({ url: `${URL_WEB}?nodes=n1,n9`, headers: auth });
  assert.equal(unknown.statusCode, 400);
  assert.match(unknown.json().message, /mk8s-n9/);
  assert.equal(f.reads.length, 0);
  for (const o of [{ nodes: undefined }, { nodes: [] }, { noReader: true }]) {
    const g = fixture(o);
    const app2 = await buildDashboardServer(g.opts);
    const res = await app2.inject({ url: `${URL_WEB}?nodes=n1`, headers: auth });
    await app2.close();
    assert.equal(res.statusCode, 501, JSON.stringify(o));
    assert.equal(res.json().kind, 'Status');
    assert.equal(res.json().reason, 'NotImplemented');
  }
});

test('proxy-rules: an apiserver that is down is 502', async (t) => {
  const f = fixture({ nodes: ['n1'] });
  const app = await buildDashboardServer({ ...f.opts, upstream: async () => { throw new Error('connect ECONNREFUSED'); } });
  t.after(() => app.close());
  const res = await app.inject({ url: URL_WEB, headers: auth });
  assert.equal(res.statusCode, 502);
});

test('parseNodesParam and invalidProxyRulesParams', () => {
  assert.deepEqual(parseNodesParam('a, b,,a'), ['a', 'b']);
  assert.deepEqual(parseNodesParam(['a', 'b,c']), ['a', 'b', 'c']);
  assert.deepEqual(parseNodesParam(undefined), []);
  assert.equal(invalidProxyRulesParams('ns', 'web', ['node-1']), undefined);
  assert.match(invalidProxyRulesParams('ns', 'web', ['Node_1']) ?? '', /not a DNS label/);
  assert.match(invalidProxyRulesParams('ns', 'web', Array.from({ length: 65 }, (_, i) => `n${i}`)) ?? '', /at most/);
});
