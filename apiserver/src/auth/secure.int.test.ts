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
  // --as / --as-group: the question is asked as the impersonated identity.
  assert.equal(await canI('admin.kubeconfig', 'list', 'secrets', '--as=system:serviceaccount:default:default'), 'no');
  assert.equal(await canI('admin.kubeconfig', 'list', 'secrets', '--as=someone', '--as-group=system:masters'), 'yes');
  const kc = (cfg: string, ...args: string[]) => run('kubectl', ['--kubeconfig', join(dir, cfg), ...args]).then((r) => r.stdout, (e: { stderr?: string }) => `ERR ${e.stderr ?? ''}`);
  const who = await kc('admin.kubeconfig', 'auth', 'whoami', '--as=someone', '--as-group=devs', '-o', 'json');
  assert.deepEqual((JSON.parse(who) as { status: { userInfo: unknown } }).status.userInfo, { username: 'someone', groups: ['devs', 'system:authenticated'] });
  // A user who may impersonate no one is refused, with upstream's message.
  await writeFile(join(dir, 'n1.kubeconfig'), kubeconfig(`    client-certificate: ${pki.kubelets['n1']!.client.cert}\n    client-key: ${pki.kubelets['n1']!.client.key}`));
  const nodeRefused = await kc('n1.kubeconfig', 'get', 'pods', '--as=kubernetes-admin');
  assert.match(nodeRefused, /users "kubernetes-admin" is forbidden: User "system:node:n1" cannot impersonate resource "users" in API group "" at the cluster scope/);
  const refused = await kc('alice.kubeconfig', 'get', 'pods', '--as=kubernetes-admin');
  assert.match(refused, /users "kubernetes-admin" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope/);
});

const etcdctl = (...args: string[]) => run('etcdctl', ['--endpoints', server.etcdEndpoints.join(','), ...args], { env: { ...process.env, ETCDCTL_API: '3' }, encoding: 'buffer', maxBuffer: 16 << 20 });
/** The raw bytes etcd holds for key (etcdctl -w json: base64 of the exact value). */
async function rawValue(key: string): Promise<Buffer> {
  const { stdout } = await etcdctl('get', key, '-w', 'json');
  const kv = (JSON.parse(stdout.toString()) as { kvs?: { value: string }[] }).kvs?.[0];
  assert.ok(kv, `${key} is in etcd`);
  return Buffer.from(kv.value, 'base64');
}

test('Secrets are encrypted in etcd as whole objects: kubectl apply leaves no byte of the value or of last-applied readable', async () => {
  const admin = await id(pki.admin);
  const r = await call(admin, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { password: 'hunter2-plaintext' } });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  const got = await call(admin, 'GET', '/api/v1/namespaces/default/secrets/db');
  assert.equal(Buffer.from((got.json['data'] as Record<string, string>)['password']!, 'base64').toString(), 'hunter2-plaintext');
  const manifest = join(dir, 'secret.yaml');
  await writeFile(manifest, ['apiVersion: v1', 'kind: Secret', 'metadata:', '  name: applied', '  labels: {tier: vault-label}', 'stringData:', '  token: s3cr3t-applied-value', ''].join('\n'));
  await run('kubectl', ['--kubeconfig', join(dir, 'admin.kubeconfig'), 'apply', '-f', manifest]);
  for (const [name, words] of [['db', ['hunter2', Buffer.from('hunter2-plaintext').toString('base64')]],
    ['applied', ['s3cr3t', Buffer.from('s3cr3t-applied-value').toString('base64'), 'last-applied', 'vault-label', 'stringData', 'Opaque']]] as const) {
    const raw = await rawValue(`/registry/secrets/default/${name}`);
    assert.equal(raw.subarray(0, 23).toString(), 'k8s:enc:aesgcm:v1:key1:');
    for (const w of words) assert.ok(!raw.includes(w), `${w} readable in etcd`);
  }
  // kubectl sees the Secret whole (the watch cache decrypted it too: rv=0 lists come from it).
  const { stdout } = await run('kubectl', ['--kubeconfig', join(dir, 'admin.kubeconfig'), 'get', 'secret', 'applied', '-o', 'jsonpath={.data.token}']);
  assert.equal(Buffer.from(stdout, 'base64').toString(), 's3cr3t-applied-value');
  const cached = await call(admin, 'GET', '/api/v1/namespaces/default/secrets?resourceVersion=0');
  assert.ok((cached.json['items'] as { metadata: { name: string }; data: Record<string, string> }[]).some((s) => s.metadata.name === 'applied' && s.data['token'] === Buffer.from('s3cr3t-applied-value').toString('base64')));
});

test('a plaintext Secret written before encryption is served, and encrypted by its next update', async () => {
  const admin = await id(pki.admin);
  const key = '/registry/secrets/default/legacy';
  await etcdctl('put', key, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'legacy', namespace: 'default', uid: 'u-legacy', creationTimestamp: '2026-01-01T00:00:00Z' }, type: 'Opaque', data: { v: Buffer.from('old-plain-value').toString('base64') } }));
  const got = await call(admin, 'GET', '/api/v1/namespaces/default/secrets/legacy');
  assert.equal(got.status, 200, JSON.stringify(got.json));
  assert.equal(Buffer.from((got.json['data'] as Record<string, string>)['v']!, 'base64').toString(), 'old-plain-value');
  assert.ok((await rawValue(key)).includes(Buffer.from('old-plain-value').toString('base64')), 'still plaintext before the update');
  // An update that changes nothing still rewrites a stale value (upstream; what `kubectl replace` relies on for rotation).
  const put = await call(admin, 'PUT', '/api/v1/namespaces/default/secrets/legacy', got.json);
  assert.equal(put.status, 200, JSON.stringify(put.json));
  const raw = await rawValue(key);
  assert.equal(raw.subarray(0, 23).toString(), 'k8s:enc:aesgcm:v1:key1:');
  assert.ok(!raw.includes(Buffer.from('old-plain-value').toString('base64')) && !raw.includes('legacy'));
  const again = await call(admin, 'GET', '/api/v1/namespaces/default/secrets/legacy');
  assert.equal(Buffer.from((again.json['data'] as Record<string, string>)['v']!, 'base64').toString(), 'old-plain-value');
  // The encryption config's own health check (the analogue of upstream's /healthz/kms-providers).
  const health = await call(admin, 'GET', '/healthz/encryption-providers');
  assert.equal(health.status, 200);
});
