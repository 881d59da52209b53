import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@mk8s/component-base';
import { ensureCa, issueCertificate } from '@mk8s/component-base/pki';
import { ConfigMaps, Namespaces, type KubeObject } from '@mk8s/api';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { CompiledWebhookSet, callWebhook, matchesWebhook, ruleMatches, webhookUrl } from './webhook.js';
import { createServer as createTcpServer } from 'node:net';
import type { AdmissionAttributes } from '../admission/interfaces.js';
import type { Webhook, WebhookConfiguration } from './types.js';

type Json = Record<string, any>;

let dir = '';
let server: Server | undefined;
let url = '';
let caBundle = '';
const reviews: Json[] = [];
/** The timeout= query parameter of each call. */
const queries: string[] = [];

/** A webhook server: /deny refuses ConfigMaps with data.bad, /label adds a label, /slow never answers. */
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mk8s-webhook-'));
  const ca = await ensureCa({ cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') });
  const cert = await issueCertificate(ca, { commonName: 'webhook', usage: 'server', ips: ['127.0.0.1'] });
  caBundle = Buffer.from(ca.certPem).toString('base64');
  server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    queries.push(new URL(req.url ?? '/', 'https://x').searchParams.get('timeout') ?? '');
    if (path === '/trickle') {
      // Answers headers, then a byte now and then, never finishing (a socket idle timeout never fires).
      res.writeHead(200, { 'content-type': 'application/json' });
      const tick = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(tick));
      return;
    }
    let body = '';
    req.on('data', (d: Buffer) => { body += d.toString(); });
    req.on('end', () => {
      const review = JSON.parse(body) as Json;
      reviews.push(review);
      const uid = review['request'].uid;
      const obj = review['request'].object;
      let response: Json = { uid, allowed: true };
      if (path === '/slow') return;
      const b64 = (x: string) => Buffer.from(x).toString('base64');
      if (path === '/garbage') { res.end('this is not JSON'); return; }
      if (path === '/noresponse') { res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' })); return; }
      if (path === '/badpatch') response = { uid, allowed: true, patchType: 'JSONPatch', patch: b64('{not json') };
      if (path === '/objectpatch') response = { uid, allowed: true, patchType: 'JSONPatch', patch: b64('{"op":"add"}') };
      if (path === '/noapply') response = { uid, allowed: true, patchType: 'JSONPatch', patch: b64(JSON.stringify([{ op: 'remove', path: '/spec/missing' }])) };
      if (path === '/deny' && obj?.data?.bad) response = { uid, allowed: false, status: { code: 403, message: 'bad data is not allowed here' } };
      if (path === '/label') {
        const patch = obj.metadata.labels ? [{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }] : [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }];
        response = { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64'), warnings: ['labelled by the webhook'] };
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => server!.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

async function setup(t: { after(fn: () => unknown): void }) {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger() });
  await app.ready();
  t.after(() => app.close());
  return app;
}

const hook = (name: string, path: string, extra: Partial<Webhook> = {}): Json => ({
  name, clientConfig: { url: `${url}${path}`, caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'],
  rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], ...extra,
});
const config = (kind: 'Validating' | 'Mutating', name: string, webhooks: Json[]) => ({
  apiVersion: 'admissionregistration.k8s.io/v1', kind: `${kind}WebhookConfiguration`, metadata: { name }, webhooks,
});
const cm = (name: string, data: Json = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const CM = '/api/v1/namespaces/default/configmaps';

describe('admission webhooks', () => {
  test('configurations are defaulted and validated', async (t) => {
    const app = await setup(t);
    const res = await app.inject({ method: 'POST', url: VWC, payload: config('Validating', 'v', [hook('deny.example.com', '/deny')]) });
    assert.equal(res.statusCode, 201, res.body);
    const w = res.json().webhooks[0];
    assert.deepEqual([w.failurePolicy, w.matchPolicy, w.timeoutSeconds, w.rules[0].scope], ['Fail', 'Equivalent', 10, '*']);
    const table = (await app.inject({ url: VWC, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
    assert.deepEqual(table.columnDefinitions.map((c: Json) => c.name), ['Name', 'Webhooks', 'Age']);
    assert.deepEqual(table.rows[0].cells.slice(0, 2), ['v', 1]);
    const bad = await app.inject({ method: 'POST', url: VWC, payload: config('Validating', 'bad', [{ name: 'short', clientConfig: { url: 'http://x' } }]) });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(bad.json().details.causes.map((c: Json) => c.field), ['webhooks[0].name', 'webhooks[0].clientConfig.url', 'webhooks[0].sideEffects', 'webhooks[0].admissionReviewVersions']);
  });

  test('a validating webhook denies with its message; allowed objects pass', async (t) => {
    const app = await setup(t);
    await app.inject({ method: 'POST', url: VWC, payload: config('Validating', 'v', [hook('deny.example.com', '/deny')]) });
    const denied = await app.inject({ method: 'POST', url: CM, payload: cm('bad', { bad: 'x' }) });
    assert.equal(denied.statusCode, 403, denied.body);
    assert.equal(denied.json().message, 'admission webhook "deny.example.com" denied the request: bad data is not allowed here');
    assert.equal((await app.inject({ method: 'POST', url: CM, payload: cm('good') })).statusCode, 201);
    const review = reviews.at(-1)!;
    assert.equal(review['apiVersion'], 'admission.k8s.io/v1');
    assert.deepEqual(review['request'].kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.equal(review['request'].operation, 'CREATE');
    assert.equal(review['request'].namespace, 'default');
    assert.equal(review['request'].object.metadata.name, 'good');
  });

  test('a mutating webhook patches the object before it is stored, with its warning', async (t) => {
    const app = await setup(t);
    await app.inject({ method: 'POST', url: MWC, payload: config('Mutating', 'm', [hook('label.example.com', '/label')]) });
    const res = await app.inject({ method: 'POST', url: CM, payload: cm('m') });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().metadata.labels.mutated, 'yes');
    assert.match(String(res.headers['warning']), /labelled by the webhook/);
    assert.equal((await app.inject({ url: `${CM}/m` })).json().metadata.labels.mutated, 'yes');
  });

  test('failurePolicy: Fail rejects when the call fails, Ignore lets the write through', async (t) => {
    const app = await setup(t);
    await app.inject({ method: 'POST', url: VWC, payload: config('Validating', 'v', [hook('slow.example.com', '/slow', { timeoutSeconds: 1, failurePolicy: 'Ignore' })]) });
    assert.equal((await app.inject({ method: 'POST', url: CM, payload: cm('a') })).statusCode, 201);
    await app.inject({ method: 'PUT', url: `${VWC}/v`, payload: { ...config('Validating', 'v', [hook('slow.example.com', '/slow', { timeoutSeconds: 1, failurePolicy: 'Fail' })]) } });
    const res = await app.inject({ method: 'POST', url: CM, payload: cm('b') });
    assert.equal(res.statusCode, 500, res.body);
    assert.match(res.json().message, /^Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: /);
    // The configurations themselves are never sent to webhooks: a broken one can be removed.
    assert.equal((await app.inject({ method: 'DELETE', url: `${VWC}/v` })).statusCode, 200);
  });
});

describe('bad mutating responses', () => {
  const write = async (t: { after(fn: () => unknown): void }, path: string, failurePolicy: 'Fail' | 'Ignore') => {
    const app = await setup(t);
    const made = await app.inject({ method: 'POST', url: MWC, payload: config('Mutating', 'm', [hook('bad.example.com', path, { failurePolicy })]) });
    assert.equal(made.statusCode, 201, made.body);
    return app.inject({ method: 'POST', url: CM, payload: cm('x') });
  };
  const cases: Array<[string, string]> = [
    ['/badpatch', 'Internal error occurred: failed calling webhook "bad.example.com": received undecodable patch in webhook response: '],
    ['/objectpatch', 'Internal error occurred: failed calling webhook "bad.example.com": received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch'],
    ['/garbage', 'Internal error occurred: failed calling webhook "bad.example.com": failed to call webhook: the webhook response is not a valid AdmissionReview'],
    ['/noresponse', 'Internal error occurred: failed calling webhook "bad.example.com": received invalid webhook response: webhook response was absent'],
  ];
  for (const [path, message] of cases) {
    test(`${path}: a 500 InternalError Status under Fail, ignored under Ignore`, async (t) => {
      const res = await write(t, path, 'Fail');
      assert.equal(res.statusCode, 500, res.body);
      const status = res.json();
      assert.deepEqual([status.kind, status.status, status.reason, status.code], ['Status', 'Failure', 'InternalError', 500]);
      assert.ok(status.message.startsWith(message), status.message);
      assert.doesNotMatch(res.body, /\bat .*\.ts:\d+/);
      const ignored = await write(t, path, 'Ignore');
      assert.equal(ignored.statusCode, 201, ignored.body);
    });
  }
  test('a patch that does not apply is an InternalError whatever the failurePolicy (upstream: NewInternalError)', async (t) => {
    for (const policy of ['Fail', 'Ignore'] as const) {
      const res = await write(t, '/noapply', policy);
      assert.equal(res.statusCode, 500, res.body);
      assert.equal(res.json().reason, 'InternalError');
      assert.match(res.json().message, /^Internal error occurred: /);
    }
    // Nothing half-written.
    const app = await setup(t);
    assert.equal((await app.inject({ url: `${CM}/x` })).statusCode, 404);
  });
  test('the call carries ?timeout=<timeoutSeconds>s, as upstream\'s client adds it', async (t) => {
    queries.length = 0;
    const app = await setup(t);
    await app.inject({ method: 'POST', url: MWC, payload: config('Mutating', 'm', [hook('label.example.com', '/label', { timeoutSeconds: 7 })]) });
    assert.equal((await app.inject({ method: 'POST', url: CM, payload: cm('t') })).statusCode, 201);
    assert.deepEqual(queries, ['7s']);
    assert.equal(webhookUrl({ name: 'a.b.c', clientConfig: { service: { namespace: 'ns', name: 'svc', path: '/m?x=1' } } } as unknown as Webhook).toString(), 'https://svc.ns.svc/m?x=1&timeout=10s');
  });
});

describe('compiled webhook set', () => {
  const cfg = (name: string, rv: string, sel: Json = { matchLabels: { a: 'b' } }) => ({ metadata: { name, resourceVersion: rv }, webhooks: [{ name: `${name}.example.com`, clientConfig: {}, objectSelector: sel }] }) as unknown as WebhookConfiguration;
  test('compiles each configuration once, again when its resourceVersion changes; name order', () => {
    const set = new CompiledWebhookSet();
    const first = set.update([cfg('b', '5'), cfg('a', '3')]);
    assert.deepEqual(first.map((h) => h.webhook.name), ['a.example.com', 'b.example.com']);
    assert.equal(set.compiled, 2);
    assert.equal(set.update([cfg('a', '3'), cfg('b', '5')]), first, 'unchanged: the same compiled set');
    assert.equal(set.compiled, 2);
    const next = set.update([cfg('a', '3'), cfg('b', '9', { matchLabels: { c: 'd' } })]);
    assert.equal(set.compiled, 3, 'only b compiled again');
    assert.equal(next[0], first[0]);
    assert.ok(next[1]!.objectSelector.matches({ c: 'd' }));
    assert.deepEqual(set.update([cfg('b', '9')]).map((h) => h.webhook.name), ['b.example.com']);
    assert.equal(set.compiled, 3);
  });
});

describe('matching', () => {
  const attrs = (o: Partial<{ op: 'CREATE' | 'UPDATE' | 'DELETE'; labels: Record<string, string>; sub: string }> = {}) => ({
    operation: o.op ?? 'CREATE', resource: ConfigMaps, subresource: o.sub ?? '', namespace: 'default', name: 'x',
    object: { metadata: { name: 'x', labels: o.labels ?? {} } } as KubeObject, oldObject: undefined, user: { username: 'u', groups: [] as string[] }, dryRun: false,
  }) as AdmissionAttributes;
  const rule = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] };
  test('rules: operations, groups, resources, subresources, scope', () => {
    assert.ok(ruleMatches(rule, attrs()));
    assert.ok(!ruleMatches(rule, attrs({ op: 'UPDATE' })));
    assert.ok(ruleMatches({ ...rule, operations: ['*'], resources: ['*'] }, attrs({ op: 'UPDATE' })));
    assert.ok(!ruleMatches({ ...rule, resources: ['*'] }, attrs({ sub: 'status' })));
    assert.ok(ruleMatches({ ...rule, resources: ['*/*'] }, attrs({ sub: 'status' })));
    assert.ok(!ruleMatches({ ...rule, scope: 'Cluster' }, attrs()));
    assert.ok(!ruleMatches({ ...rule, apiGroups: ['apps'] }, attrs()));
  });
  test('object and namespace selectors', () => {
    const w = { name: 'a.b.c', clientConfig: {}, rules: [rule] } as Webhook;
    assert.ok(matchesWebhook({ ...w, objectSelector: { matchLabels: { a: 'b' } } }, attrs({ labels: { a: 'b' } }), undefined));
    assert.ok(!matchesWebhook({ ...w, objectSelector: { matchLabels: { a: 'b' } } }, attrs(), undefined));
    assert.ok(matchesWebhook({ ...w, namespaceSelector: { matchLabels: { team: 'x' } } }, attrs(), { team: 'x' }));
    assert.ok(!matchesWebhook({ ...w, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] } }, attrs(), {}));
    void Namespaces;
  });

  test('a call that cannot connect fails with Go\'s wording: Post "<url>": <cause>', async () => {
    const probe = createTcpServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const free = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const w = { name: 'down.example.com', clientConfig: { url: `https://127.0.0.1:${free}/validate` }, sideEffects: 'None', admissionReviewVersions: ['v1'] } as unknown as Webhook;
    await assert.rejects(callWebhook(w, { request: { uid: 'u' } }, async () => { throw new Error('unused'); }),
      (err: Error) => err.message.startsWith(`Post "https://127.0.0.1:${free}/validate?timeout=10s": `) && /ECONNREFUSED/.test(err.message));
  });

  test('timeoutSeconds bounds the whole call, also when the webhook keeps trickling bytes', { timeout: 10_000 }, async () => {
    const w = { name: 'trickle.example.com', clientConfig: { url: `${url}/trickle`, caBundle }, timeoutSeconds: 1, sideEffects: 'None', admissionReviewVersions: ['v1'] } as unknown as Webhook;
    await assert.rejects(callWebhook(w, { request: { uid: 'u' } }, async () => { throw new Error('unused'); }),
      (err: Error) => err.message === `Post "${url}/trickle?timeout=1s": context deadline exceeded`);
  });
});
