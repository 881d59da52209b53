import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockAgent } from 'undici';
import { Deployments, Nodes, Pods, isConflict, isNotFound, isResourceExpired, type KubeObject } from '@mk8s/api';
import { FakeClock } from '@mk8s/component-base/testing';
import { createClientset, isConnectionResetOrEOF } from './rest-clientset.js';
import { loadKubeConfig, restConfigFromKubeConfig } from './kubeconfig.js';
import { decodeWatchEvents, ndjsonLines } from './watch-decoder.js';
import { TokenBucket } from './token-bucket.js';

const SERVER = 'https://127.0.0.1:6443';
function setup() {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const pool = agent.get(SERVER);
  const c = createClientset({ server: SERVER, userAgent: 'test-component', dispatcher: agent, qps: 0 });
  return { agent, pool, c };
}
const JSON_HDR = { headers: { 'content-type': 'application/json' } };
const pod = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' } });

describe('RestClientset', () => {
  test('writeFence refuses a write before it is sent; reads pass', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get(SERVER);
    let open = false;
    const c = createClientset({ server: SERVER, dispatcher: agent, qps: 0, writeFence: (r) => (open ? undefined : new Error(`fenced ${r.method} ${r.path}`)) });
    pool.intercept({ path: '/api/v1/namespaces/default/pods/a', method: 'GET' }).reply(200, pod('a'), JSON_HDR);
    assert.equal((await c.resource(Pods, 'default').get('a')).metadata.name, 'a');
    await assert.rejects(c.resource(Pods, 'default').create(pod('b')), /fenced POST \/api\/v1\/namespaces\/default\/pods/);
    open = true;
    pool.intercept({ path: '/api/v1/namespaces/default/pods?fieldManager=mk8s', method: 'POST' }).reply(201, pod('b'), JSON_HDR);
    assert.equal((await c.resource(Pods, 'default').create(pod('b'))).metadata.name, 'b');
  });

  test('get builds the path from the scheme and sends the user agent', async () => {
    const { pool, c } = setup();
    let ua = '';
    pool.intercept({ path: '/apis/apps/v1/namespaces/ns1/deployments/web', method: 'GET' })
      .reply(200, (opts) => { ua = String((opts.headers as Record<string, string>)['user-agent']); return { metadata: { name: 'web' } }; }, JSON_HDR);
    const d = await c.resource(Deployments, 'ns1').get('web');
    assert.equal(d.metadata.name, 'web');
    assert.equal(ua, 'test-component/v0.1.0 mk8s');
  });

  test('list passes selectors; cluster-scoped resources ignore namespace', async () => {
    const { pool, c } = setup();
    pool.intercept({ path: '/api/v1/nodes?labelSelector=a%3Db&limit=5', method: 'GET' }).reply(200, { kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] }, JSON_HDR);
    const l = await c.resource(Nodes, 'ignored').list({ labelSelector: 'a=b', limit: 5 });
    assert.equal(l.metadata.resourceVersion, '7');
  });

  test('errors become ApiError from the Status body', async () => {
    const { pool, c } = setup();
    pool.intercept({ path: '/api/v1/namespaces/default/pods/x', method: 'GET' })
      .reply(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'pods "x" not found' }, JSON_HDR);
    pool.intercept({ path: '/api/v1/namespaces/default/pods/y?fieldManager=test-component', method: 'PUT' })
      .reply(409, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409, message: 'conflict' }, JSON_HDR);
    pool.intercept({ path: '/api/v1/namespaces/default/pods/z', method: 'GET' }).reply(500, 'oops');
    await assert.rejects(c.resource(Pods, 'default').get('x'), (e) => isNotFound(e) && (e as Error).message === 'pods "x" not found');
    await assert.rejects(c.resource(Pods, 'default').update(pod('y')), isConflict);
    await assert.rejects(c.resource(Pods, 'default').get('z'), (e) => (e as { code: number }).code === 500);
  });

  const patchCases = [
    { type: 'merge' as const, ct: 'application/merge-patch+json', q: 'fieldManager=test-component' },
    { type: 'strategic' as const, ct: 'application/strategic-merge-patch+json', q: 'fieldManager=test-component' },
    { type: 'json' as const, ct: 'application/json-patch+json', q: 'fieldManager=test-component' },
    { type: 'apply' as const, ct: 'application/apply-patch+yaml', q: 'fieldManager=mgr&force=true' },
  ];
  for (const tc of patchCases) {
    test(`patch ${tc.type} sends ${tc.ct}`, async () => {
      const { pool, c } = setup();
      let ct = '';
      pool.intercept({ path: `/api/v1/namespaces/default/pods/a/status?${tc.q}`, method: 'PATCH' })
        .reply(200, (o) => { ct = String((o.headers as Record<string, string>)['content-type']); return pod('a'); }, JSON_HDR);
      await c.resource(Pods, 'default').patch('a', tc.type, {}, { subresource: 'status', ...(tc.type === 'apply' ? { fieldManager: 'mgr', force: true } : {}) } as never);
      assert.equal(ct, tc.ct);
    });
  }

  test('delete sends DeleteOptions', async () => {
    const { pool, c } = setup();
    let body: unknown;
    pool.intercept({ path: '/api/v1/namespaces/default/pods/a', method: 'DELETE' })
      .reply(200, (o) => { body = JSON.parse(String(o.body)); return { kind: 'Status', status: 'Success' }; }, JSON_HDR);
    await c.resource(Pods, 'default').delete('a', { propagationPolicy: 'Foreground', gracePeriodSeconds: 0, preconditions: { uid: 'u1' } });
    assert.deepEqual(body, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground', gracePeriodSeconds: 0, preconditions: { uid: 'u1' } });
  });

  test('watch decodes events and throws on ERROR', async () => {
    const { pool, c } = setup();
    const lines = [
      { type: 'ADDED', object: pod('a') },
      { type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '9' } } },
      { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' } },
    ].map((l) => JSON.stringify(l)).join('\n') + '\n';
    pool.intercept({ path: '/api/v1/pods?resourceVersion=5&allowWatchBookmarks=true&watch=true', method: 'GET' }).reply(200, lines, JSON_HDR);
    const got: string[] = [];
    await assert.rejects(async () => {
      for await (const ev of c.resource(Pods).watch({ resourceVersion: '5', allowWatchBookmarks: true })) got.push(ev.type);
    }, isResourceExpired);
    assert.deepEqual(got, ['ADDED', 'BOOKMARK']);
  });

  test('watch ends quietly on stream end', async () => {
    const { pool, c } = setup();
    pool.intercept({ path: '/api/v1/namespaces/default/pods?watch=true', method: 'GET' }).reply(200, JSON.stringify({ type: 'ADDED', object: pod('a') }) + '\n', JSON_HDR);
    const got: string[] = [];
    for await (const ev of c.resource(Pods, 'default').watch()) got.push(ev.object.metadata.name);
    assert.deepEqual(got, ['a']);
  });

  test('getRaw returns text and sends the bearer token', async () => {
    const agent = new MockAgent(); agent.disableNetConnect();
    const c = createClientset({ restConfig: { server: SERVER, namespace: 'default', token: 'tok' }, dispatcher: agent });
    let auth = '';
    agent.get(SERVER).intercept({ path: '/api/v1/namespaces/default/pods/a/log?follow=false', method: 'GET' })
      .reply(200, (o) => { auth = String((o.headers as Record<string, string>)['authorization']); return 'line1\nline2\n'; }, { headers: { 'content-type': 'text/plain' } });
    assert.equal(await c.getRaw('/api/v1/namespaces/default/pods/a/log', { query: { follow: false } }), 'line1\nline2\n');
    assert.equal(auth, 'Bearer tok');
  });
});

describe('RestClientset retries and streams', () => {
  test('retries after Retry-After on 429, then succeeds', async () => {
    const agent = new MockAgent(); agent.disableNetConnect();
    const clock = new FakeClock();
    const c = createClientset({ server: SERVER, dispatcher: agent, clock, qps: 0 });
    const pool = agent.get(SERVER);
    pool.intercept({ path: '/api/v1/nodes/n1', method: 'GET' }).reply(429, { kind: 'Status', reason: 'TooManyRequests', code: 429 }, { headers: { 'retry-after': '2', 'content-type': 'application/json' } });
    pool.intercept({ path: '/api/v1/nodes/n1', method: 'GET' }).reply(200, { metadata: { name: 'n1' } }, JSON_HDR);
    const p = c.resource(Nodes).get('n1');
    for (let i = 0; i < 50 && clock.pending() === 0; i++) await new Promise((r) => setImmediate(r));
    clock.step(2000);
    assert.equal((await p).metadata.name, 'n1');
  });
  test('a GET whose connection is reset is retried after 1 s; a POST is not', async () => {
    const agent = new MockAgent(); agent.disableNetConnect();
    const clock = new FakeClock();
    const c = createClientset({ server: SERVER, dispatcher: agent, clock, qps: 0 });
    const pool = agent.get(SERVER);
    const reset = Object.assign(new Error('Client network socket disconnected before secure TLS connection was established'), { code: 'ECONNRESET' });
    pool.intercept({ path: '/api/v1/nodes/n1', method: 'GET' }).replyWithError(reset);
    pool.intercept({ path: '/api/v1/nodes/n1', method: 'GET' }).reply(200, { metadata: { name: 'n1' } }, JSON_HDR);
    const p = c.resource(Nodes).get('n1');
    for (let i = 0; i < 50 && clock.pending() === 0; i++) await new Promise((r) => setImmediate(r));
    assert.equal(clock.pending(), 1, 'waiting its Retry-After of 1 s');
    clock.step(1000);
    assert.equal((await p).metadata.name, 'n1');
    pool.intercept({ path: '/api/v1/namespaces/default/pods?fieldManager=mk8s', method: 'POST' }).replyWithError(reset);
    await assert.rejects(c.resource(Pods, 'default').create(pod('x')), /socket disconnected/);
  });
  test('isConnectionResetOrEOF: resets, early closes and EOFs; not refusals or timeouts', () => {
    const cases: [unknown, boolean][] = [
      [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), true],
      [Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }), true],
      [new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) }), true],
      [new Error('unexpected EOF'), true],
      [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }), false],
      [Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), false],
      [undefined, false],
    ];
    for (const [err, want] of cases) assert.equal(isConnectionResetOrEOF(err), want, String((err as Error | undefined)?.message));
  });
  test('429 without Retry-After is an error', async () => {
    const { pool, c } = setup();
    pool.intercept({ path: '/api/v1/nodes/n1', method: 'GET' }).reply(429, { kind: 'Status', reason: 'TooManyRequests', code: 429, message: 'slow down' }, JSON_HDR);
    await assert.rejects(c.resource(Nodes).get('n1'), (e) => (e as { reason: string }).reason === 'TooManyRequests');
  });
  test('streamRaw yields body text', async () => {
    const { pool, c } = setup();
    pool.intercept({ path: '/api/v1/namespaces/default/pods/a/log?follow=true', method: 'GET' }).reply(200, 'hello\nworld\n', { headers: { 'content-type': 'text/plain' } });
    let text = '';
    for await (const t of c.streamRaw('/api/v1/namespaces/default/pods/a/log', { query: { follow: true } })) text += t;
    assert.equal(text, 'hello\nworld\n');
  });
});

describe('watch decoder', () => {
  test('splits lines at any chunk boundary, including inside UTF-8 sequences', async () => {
    const text = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'ünïcødé-✓' } } }) + '\n' + JSON.stringify({ type: 'DELETED', object: { metadata: { name: 'b' } } }) + '\n';
    const bytes = Buffer.from(text);
    for (let size = 1; size <= 7; size++) {
      async function* chunks() { for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size); }
      const evs = [];
      for await (const e of decodeWatchEvents<{ metadata: { name: string } }>(chunks())) evs.push(`${e.type} ${e.object.metadata.name}`);
      assert.deepEqual(evs, ['ADDED ünïcødé-✓', 'DELETED b']);
    }
  });
  test('a last line without newline is still delivered', async () => {
    async function* chunks() { yield 'a\nb'; }
    const out = []; for await (const l of ndjsonLines(chunks())) out.push(l);
    assert.deepEqual(out, ['a', 'b']);
  });
});

describe('kubeconfig', () => {
  test('resolves current context, namespace, files relative to the kubeconfig, and data fields', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kc-'));
    writeFileSync(join(dir, 'ca.crt'), 'CA-PEM');
    writeFileSync(join(dir, 'kubeconfig'), `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster: { server: "https://127.0.0.1:6443/", certificate-authority: ca.crt }
users:
- name: u1
  user: { token: abc, client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key-data: ${Buffer.from('KEY').toString('base64')} }
contexts:
- name: dev
  context: { cluster: c1, user: u1, namespace: team }
- name: other
  context: { cluster: c1 }
`);
    const kc = loadKubeConfig(undefined, { KUBECONFIG: join(dir, 'kubeconfig') });
    const rc = restConfigFromKubeConfig(kc);
    assert.deepEqual(rc, { server: 'https://127.0.0.1:6443', namespace: 'team', ca: 'CA-PEM', token: 'abc', cert: 'CERT', key: 'KEY' });
    assert.deepEqual(restConfigFromKubeConfig(kc, { context: 'other' }), { server: 'https://127.0.0.1:6443', namespace: 'default', ca: 'CA-PEM' });
    assert.throws(() => restConfigFromKubeConfig(kc, { context: 'nope' }), /does not exist/);
  });
});

describe('TokenBucket', () => {
  test('burst passes at once, then waits 1/qps per request', async () => {
    const clock = new FakeClock();
    const b = new TokenBucket({ qps: 10, burst: 2, clock });
    await b.acquire(); await b.acquire();
    let done = false;
    const p = b.acquire().then(() => { done = true; });
    await new Promise((r) => setImmediate(r));
    assert.equal(done, false);
    clock.step(100);
    await p;
    assert.equal(done, true);
  });
  test('reserve: the shared bucket of BucketRateLimiter; refills at qps, capped at burst; qps <= 0 never waits', () => {
    const clock = new FakeClock();
    const b = new TokenBucket({ qps: 10, burst: 2, clock });
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve(), b.reserve()], [0, 0, 100, 200]);
    clock.step(10_000);
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 100]);
    const off = new TokenBucket({ qps: 0, burst: 1, clock });
    assert.deepEqual([off.reserve(), off.reserve()], [0, 0]);
  });
});
