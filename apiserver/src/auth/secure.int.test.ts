/**
 * The secure apiserver end to end on a real etcd: HTTPS with the cluster PKI, x509 identities,
 * Node,RBAC authorization, bootstrap policy, real `kubectl auth can-i` (protobuf request), and
 * Secrets encrypted in etcd (checked with etcdctl).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensurePki, type PkiPaths } from '@mk8s/component-base/pki';
import { startTestApiServer, type TestApiServer } from '../testing/index.js';

const run = promisify(execFile);
let dir = ''; let pki: PkiPaths; let server: TestApiServer; let ca = '';

async function call(who: { cert?: string; key?: string; token?: string } | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const u = new URL(path, server.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({
      host: u.hostname, port: u.port, path: u.pathname + u.search, method, ca,
      ...(who?.cert ? { cert: who.cert, key: who.key } : {}),
      headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...(who?.token ? { authorization: `Bearer ${who.token}` } : {}) },
    }, (res) => {
      let data = ''; res.setEncoding('utf8'); res.on('data', (c: string) => { data += c; });
      res.on('end', () => { let json: Record<string, unknown> = {}; try { json = JSON.parse(data) as Record<string, unknown>; } catch { /* text */ } resolve({ status: res.statusCode ?? 0, json }); });
    });
    req.on('error', reject);
    req.end(payload);
  });
}
const id = async (p: { cert: string; key: string }) => ({ cert: await readFile(p.cert, 'utf8'), key: await readFile(p.key, 'utf8') });

function kubeconfig(user: string): string {
  return [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: mk8s', '  cluster:', `    server: ${server.url}`, `    certificate-authority: ${pki.ca.cert}`,
    'users:', '- name: u', '  user:', user,
    'contexts:', '- name: mk8s', '  context:', '    cluster: mk8s', '    user: u', '    namespace: default',
    'current-context: mk8s', '',
  ].join('\n');
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk8s-secure-'));
  pki = await ensurePki(join(dir, 'pki'), { nodes: ['n1', 'n2'] });
  ca = await readFile(pki.ca.cert, 'utf8');
  await writeFile(join(dir, 'tokens.csv'), 'tok-alice,alice,uid-a\n');
  await writeFile(join(dir, 'enc.yaml'), [
    'apiVersion: apiserver.config.k8s.io/v1', 'kind: EncryptionConfiguration', 'resources:', '- resources: [secrets]', '  providers:',
    '  - aesgcm:', '      keys:', '      - name: key1', `        secret: ${Buffer.alloc(32, 3).toString('base64')}`, '  - identity: {}', '',
  ].join('\n'));
  server = await startTestApiServer({
    etcdMembers: 1,
    tls: { certFile: pki.apiserver.cert, keyFile: pki.apiserver.key, clientCAFile: pki.ca.cert },
    security: { clientCAFile: pki.ca.cert, tokenAuthFile: join(dir, 'tokens.csv'), serviceAccountKeyFiles: [pki.serviceAccount.pub], authorizationModes: ['Node', 'RBAC'] },
    encryptionProviderConfig: join(dir, 'enc.yaml'),
  });
});
after(async () => { await server?.stop(); await rm(dir, { recursive: true, force: true }); });

test('HTTPS with x509 identities, 401 for anonymous, Node/RBAC decisions', async () => {
  assert.match(server.url, /^https:\/\//);
  const admin = await id(pki.admin); const n1 = await id(pki.kubelets['n1']!.client);
  assert.equal((await call(undefined, 'GET', '/healthz')).status, 200);
  const anon = await call(undefined, 'GET', '/api/v1/namespaces/default/pods');
  assert.equal(anon.status, 401); assert.equal(anon.json['reason'], 'Unauthorized');
  for (const n of ['n1', 'n2']) {
    const r = await call(admin, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  }
  assert.equal((await call(n1, 'PATCH', '/api/v1/nodes/n1', undefined)).status !== 401, true);
  const other = await call(n1, 'DELETE', '/api/v1/nodes/n2');
  assert.equal(other.status, 403, JSON.stringify(other.json));
  const cm = await call(await id(pki.controllerManager), 'GET', '/api/v1/pods');
  assert.equal(cm.status, 200);
  const sched = await call(await id(pki.scheduler), 'GET', '/api/v1/secrets');
  assert.equal(sched.status, 403);
  assert.equal(sched.json['message'], 'secrets is forbidden: User "system:kube-scheduler" cannot list resource "secrets" in API group "" at the cluster scope');
  const proxy = await call(await id(pki.kubeProxy), 'GET', '/apis/discovery.k8s.io/v1/endpointslices');
  assert.equal(proxy.status, 200);
});

test('kubectl auth can-i answers (protobuf SelfSubjectAccessReview)', async () => {
  await writeFile(join(dir, 'admin.kubeconfig'), kubeconfig(`    client-certificate: ${pki.admin.cert}\n    client-key: ${pki.admin.key}`));
  await writeFile(join(dir, 'alice.kubeconfig'), kubeconfig('    token: tok-alice'));
  const canI = async (cfg: string, ...args: string[]) => {
    try { return (await run('kubectl', ['--kubeconfig', join(dir, cfg), 'auth', 'can-i', ...args])).stdout.trim(); } catch (err) {
      return String((err as { stdout?: string }).stdout ?? '').trim() || String(err);
    }
  };
  assert.equal(await canI('admin.kubeconfig', 'delete', 'nodes'), 'yes');
  assert.equal(await canI('alice.kubeconfig', 'list', 'pods'), 'no');
  assert.equal(await canI('admin.kubeconfig', 'get', 'secrets', '-n', 'kube-system'), 'yes');
});

test('Secrets are encrypted in etcd and plain through the API', async () => {
  const admin = await id(pki.admin);
  const r = await call(admin, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { password: 'hunter2-plaintext' } });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  const got = await call(admin, 'GET', '/api/v1/namespaces/default/secrets/db');
  assert.equal(Buffer.from((got.json['data'] as Record<string, string>)['password']!, 'base64').toString(), 'hunter2-plaintext');
  const { stdout } = await run('etcdctl', ['--endpoints', server.etcdEndpoints.join(','), 'get', '/registry/secrets/default/db'], { env: { ...process.env, ETCDCTL_API: '3' } });
  assert.match(stdout, /k8s:enc:aesgcm:v1:key1:/);
  assert.ok(!stdout.includes('hunter2') && !stdout.includes(Buffer.from('hunter2-plaintext').toString('base64')), stdout);
});
