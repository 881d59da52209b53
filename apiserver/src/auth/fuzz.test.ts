/**
 * Hostile input: property-based requests (paths, bodies, patches, selectors) against the secure
 * in-memory server never crash it and never answer 5xx; oversized bodies are refused within the
 * body limit. Bounded runs with a fixed seed, so the test is deterministic.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import type { FastifyInstance } from 'fastify';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { buildSecurity } from './security.js';

const dir = mkdtempSync(join(tmpdir(), 'mk8s-fuzz-'));
let app: FastifyInstance;

before(async () => {
  writeFileSync(join(dir, 'tokens.csv'), 'tok-admin,admin,u1,"system:masters"\ntok-alice,alice,u2\ntok-n1,system:node:n1,u3,"system:nodes"\n');
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const sec = buildSecurity({ tokenAuthFile: join(dir, 'tokens.csv'), authorizationModes: ['Node', 'RBAC'] }, { clock, logger: silentLogger() });
  app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock,
    authenticators: sec.authenticators!, authorizers: sec.authorizers!, admission: sec.admission, plugins: sec.plugins });
  await app.ready();
  await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/pods', headers: { authorization: 'Bearer tok-admin' },
    payload: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
});
after(async () => { await app?.close(); rmSync(dir, { recursive: true, force: true }); });

const segment = fc.oneof(
  fc.constantFrom('api', 'apis', 'v1', 'namespaces', 'default', 'pods', 'p', 'status', 'log', 'exec', 'nodes', 'secrets', 'rbac.authorization.k8s.io',
    'roles', 'clusterrolebindings', 'authorization.k8s.io', 'selfsubjectaccessreviews', 'watch', '..', '%2e%2e', '%00', '%', '*', ''),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);
const path = fc.array(segment, { minLength: 0, maxLength: 8 }).map((xs) => `/${xs.join('/')}`);
const query = fc.array(fc.tuple(fc.constantFrom('labelSelector', 'fieldSelector', 'watch', 'limit', 'continue', 'resourceVersion', 'dryRun', 'fieldValidation', 'timeoutSeconds', 'propagationPolicy', 'gracePeriodSeconds'),
  fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('a=b,c!=d', 'a in (x,y)', '!a', 'metadata.name=p', 'spec.nodeName==', 'true', '-1', '0', '1e99', 'All', 'Strict'))), { maxLength: 4 })
  .map((kv) => (kv.length ? `?${kv.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : ''));
const json = fc.jsonValue({ maxDepth: 4 });
const body = fc.oneof(
  json.map((v) => JSON.stringify(v)),
  fc.record({ apiVersion: fc.constantFrom('v1', 'rbac.authorization.k8s.io/v1', 'x'), kind: fc.constantFrom('Pod', 'Role', 'RoleBinding', 'Secret'), metadata: fc.record({ name: fc.string({ maxLength: 10 }) }), spec: json, rules: json, roleRef: json, subjects: json }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constant('{"a":'.repeat(500)),
);
const contentType = fc.constantFrom('application/json', 'application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json',
  'application/apply-patch+yaml', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'text/plain', '');
const token = fc.constantFrom('tok-admin', 'tok-alice', 'tok-n1', 'garbage', 'a.b.c', '');

test('fuzzed requests never crash the apiserver nor answer 5xx', async () => {
  await fc.assert(fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'), path, query, body, contentType, token,
    async (method, p, q, b, ct, tok) => {
      const res = await app.inject({ method, url: p + q, headers: { ...(ct ? { 'content-type': ct } : {}), ...(tok ? { authorization: `Bearer ${tok}` } : {}) },
        ...(method === 'GET' || method === 'DELETE' ? {} : { payload: b }) });
      // Watches that were accepted stream; inject resolves once the handler ends, and here the request has no body to wait on.
      assert.ok(res.statusCode < 500, `${method} ${p}${q} (${ct}) → ${res.statusCode} ${res.body.slice(0, 300)}`);
    }), { numRuns: 300, seed: 42, endOnFailure: true });
  const health = await app.inject({ method: 'GET', url: '/healthz' });
  assert.equal(health.statusCode, 200);
});

test('a body over the limit is refused (413), a YAML bomb does not expand', async () => {
  const big = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', headers: { authorization: 'Bearer tok-admin', 'content-type': 'application/json' },
    payload: `{"data":{"a":"${'x'.repeat(4 * 1024 * 1024)}"}}` });
  assert.equal(big.statusCode, 413);
  const bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 0; i < 9; i++) bomb.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`);
  const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', headers: { authorization: 'Bearer tok-admin', 'content-type': 'application/yaml' },
    payload: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n${bomb.join('\n')}\n` });
  assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode} ${res.body.slice(0, 200)}`);
});

test('deeply nested bodies are refused with 400 (was a 500: the stack overflowed walking them)', async () => {
  const deep = (d: number) => '{"a":'.repeat(d) + '1' + '}'.repeat(d);
  const cases: { method: 'POST' | 'PATCH'; url: string; ct: string; payload: string }[] = [
    { method: 'POST', url: '/api/v1/namespaces/default/configmaps', ct: 'application/json', payload: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":${deep(5000)}}` },
    { method: 'POST', url: '/api/v1/namespaces/default/secrets', ct: 'application/yaml', payload: deep(5000) },
    { method: 'POST', url: '/api/v1/namespaces/default/pods', ct: 'application/json', payload: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d","annotations":${deep(20000)}}}` },
    { method: 'PATCH', url: '/api/v1/namespaces/default/pods/p', ct: 'application/merge-patch+json', payload: `{"metadata":{"labels":${deep(5000)}}}` },
    { method: 'PATCH', url: '/api/v1/namespaces/default/pods/p?fieldManager=f', ct: 'application/apply-patch+yaml', payload: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":${deep(5000)}}` },
    { method: 'POST', url: '/api/v1/namespaces/default/configmaps', ct: 'application/yaml', payload: 'a: ' + '['.repeat(5000) + ']'.repeat(5000) },
  ];
  for (const c of cases) {
    const res = await app.inject({ method: c.method, url: c.url, headers: { 'content-type': c.ct, authorization: 'Bearer tok-admin' }, payload: c.payload });
    assert.equal(res.statusCode, 400, `${c.method} ${c.url} (${c.ct}) → ${res.statusCode} ${res.body.slice(0, 300)}`);
    const st = JSON.parse(res.body) as { kind: string; reason: string; message: string };
    assert.equal(st.kind, 'Status');
    assert.equal(st.reason, 'BadRequest');
    assert.match(st.message, /exceeded max ?depth/i);
  }
  // A nesting a real object has is fine.
  const ok = await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', headers: { 'content-type': 'application/json', authorization: 'Bearer tok-admin' },
    payload: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shallow', annotations: { a: 'b' } }, data: { k: 'v' } }) });
  assert.equal(ok.statusCode, 201, ok.body);
});

test('HTTP CONNECT is answered 405 with a Status, not a dropped socket', async () => {
  // fastify's inject cannot send CONNECT: the server's 'connect' listener is called with a socket directly.
  const listeners = app.server.listeners('connect') as ((req: unknown, socket: import('node:stream').Duplex, head: Buffer) => void)[];
  assert.equal(listeners.length, 1);
  const { PassThrough } = await import('node:stream');
  const socket = new PassThrough();
  let out = '';
  socket.on('data', (d: Buffer) => { out += d.toString(); });
  await new Promise<void>((resolve) => { socket.on('finish', () => resolve()); listeners[0]!({}, socket, Buffer.alloc(0)); });
  assert.match(out, /^HTTP\/1\.1 405 MethodNotAllowed\r\n/);
  assert.match(out, /"kind":"Status"/);
});
