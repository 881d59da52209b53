/**
 * The real kubectl 1.32 against CustomResourceDefinitions on a real (one-member) etcd: apply a CRD,
 * wait for Established, then what users do with custom objects. One --cache-dir for the whole
 * file, as one user's: kubectl must notice the new resource through discovery's ETags.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlRunner, startTestApiServer, type KubectlRunner, type TestApiServer } from '../testing/index.js';
import { crontabCrd } from './testdata/crontab.js';

let dir = '';
let server: TestApiServer | undefined;
let k: KubectlRunner;
const file = (name: string, body: unknown): string => { const p = join(dir, name); writeFileSync(p, JSON.stringify(body)); return p; };
const crontab = (name: string, spec: Record<string, unknown> = {}) =>
  ({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name, namespace: 'default' }, spec: { cronSpec: '* * * * */5', ...spec } });

describe('kubectl and custom resources', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mk8s-crd-'));
    server = await startTestApiServer({ etcdMembers: 1 });
    k = kubectlRunner({ kubeconfig: server.kubeconfigPath, cacheDir: join(dir, 'cache') });
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('apply a CRD and wait for Established', async () => {
    assert.match(await k.ok('apply', '-f', file('crd.json', crontabCrd())), /customresourcedefinition.apiextensions.k8s.io\/crontabs.stable.example.com created/);
    await k.ok('wait', '--for=condition=Established', '--timeout=30s', 'crd/crontabs.stable.example.com');
    assert.match(await k.ok('get', 'crd'), /^NAME\s+CREATED AT\ncrontabs\.stable\.example\.com\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/);
    const rows = (await k.ok('api-resources', '--api-group=stable.example.com', '--no-headers')).trim().split(/\s+/);
    assert.deepEqual(rows, ['crontabs', 'ct', 'stable.example.com/v1', 'true', 'CronTab']);
  });

  test('apply, get with printer columns, patch (merge, json), server-side apply, scale', async () => {
    assert.match(await k.ok('apply', '-f', file('a.json', crontab('a', { replicas: 2 }))), /crontab.stable.example.com\/a created/);
    const table = await k.ok('get', 'crontabs');
    assert.match(table, /^NAME\s+SPEC\s+REPLICAS\s+AGE\n/);
    assert.match(table, /\na\s+\* \* \* \* \*\/5\s+2\s+\d+s\n/);
    assert.match(await k.ok('get', 'ct', 'a', '-o', 'jsonpath={.spec.image}'), /^busybox$/);
    // A second client-side apply computes a merge patch (no SMP for custom kinds).
    await k.ok('apply', '-f', file('a2.json', crontab('a', { replicas: 3 })));
    assert.equal(await k.ok('get', 'crontab', 'a', '-o', 'jsonpath={.spec.replicas}'), '3');
    await k.ok('patch', 'crontab', 'a', '--type=merge', '-p', '{"spec":{"mode":"Fast"}}');
    await k.ok('patch', 'crontab', 'a', '--type=json', '-p', '[{"op":"replace","path":"/spec/replicas","value":4}]');
    const smp = await k.kubectl('patch', 'crontab', 'a', '-p', '{"spec":{"replicas":5}}');
    assert.notEqual(smp.code, 0);
    assert.match(smp.stderr, /application\/merge-patch\+json/);
    await k.ok('apply', '--server-side', '--force-conflicts', '-f', file('a3.json', crontab('a', { replicas: 6, mode: 'Fast' })));
    assert.equal(await k.ok('get', 'crontab', 'a', '-o', 'jsonpath={.spec.replicas}'), '6');
    assert.match(await k.ok('scale', 'crontab/a', '--replicas=7'), /crontab.stable.example.com\/a scaled/);
    assert.equal(await k.ok('get', 'crontab', 'a', '-o', 'jsonpath={.spec.replicas}'), '7');
    assert.match(await k.ok('get', 'all'), /crontab.stable.example.com\/a/);
  });

  test('an object outside the schema is refused naming the field; unknown fields are refused by strict validation', async () => {
    const bad = await k.kubectl('apply', '-f', file('bad.json', crontab('b', { replicas: 20 })));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.replicas: Invalid value: 20: spec\.replicas in body should be less than or equal to 10/);
    const unknown = await k.kubectl('create', '-f', file('unknown.json', crontab('u', { color: 'red' })));
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /unknown field "spec\.color"/);
    await k.ok('create', '--validate=false', '-f', file('unknown2.json', crontab('u', { color: 'red' })));
    assert.equal(await k.ok('get', 'crontab', 'u', '-o', 'jsonpath={.spec.color}'), '', 'pruned');
  });

  test('explain reads the published schema', async () => {
    const out = await k.ok('explain', 'crontab.spec');
    assert.match(out, /KIND:\s+CronTab/);
    assert.match(out, /replicas\s+<integer>/);
    assert.match(out, /cronSpec\s+<string> -required-/);
  });

  test('deleting the CRD deletes its objects', async () => {
    await k.ok('delete', 'crd', 'crontabs.stable.example.com', '--timeout=60s');
    // A warm discovery cache still maps the name (the server answers 404); a cold one has no such type.
    const r = await k.kubectl('get', 'crontabs');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /the server could not find the requested resource|the server doesn't have a resource type "crontabs"/);
    const cold = kubectlRunner({ kubeconfig: server!.kubeconfigPath, cacheDir: join(dir, 'cold') });
    assert.match((await cold.kubectl('get', 'crontabs')).stderr, /the server doesn't have a resource type "crontabs"/);
    assert.match(await k.ok('apply', '-f', file('crd.json', crontabCrd())), /created/);
    await k.ok('wait', '--for=condition=Established', '--timeout=30s', 'crd/crontabs.stable.example.com');
    assert.match((await k.run(['get', 'crontabs', '-A'])).stderr, /No resources found/);
  });
});
