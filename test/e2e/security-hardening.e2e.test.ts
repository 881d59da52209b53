/**
 * Issue 18 on the launched cluster: Secrets are whole-object ciphertext in every etcd member (values
 * and kubectl's last-applied annotation alike, checked through each member with etcdctl and in the
 * members' files); a plaintext Secret written before encryption is served and encrypted by its next
 * update; `--as` is honoured and refused as upstream; the kubelet port refuses anonymous and
 * unauthorized callers on every path; the audit log has a line per request and never a Secret's value.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const STATE = join(ROOT, '.mk8s');
const PKI = join(STATE, 'pki');
const CA = join(PKI, 'ca.crt');
const ADMIN = { cert: join(PKI, 'admin.crt'), key: join(PKI, 'admin.key') };
const AUDIT_LOG = join(STATE, 'logs', 'audit.log');
const ETCD_PORTS = [2379, 22379, 32379];
const NODE1 = join(STATE, 'nodes', 'node-1', 'kubeconfig');

interface Reply { code: number; body: string; headers: Record<string, string | string[] | undefined> }
function call(url: string, o: { cert?: string; key?: string; token?: string; method?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const r = request(url, {
      method: o.method ?? 'GET', ca: readFileSync(CA), timeout: 15_000,
      ...(o.cert ? { cert: readFileSync(o.cert), key: readFileSync(o.key!) } : {}),
      headers: { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...o.headers },
    }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body, headers: res.headers }));
    });
    r.on('timeout', () => r.destroy(new Error('timeout')));
    r.on('error', reject);
    r.end();
  });
}

/** The exact bytes one etcd member holds for key (serializable read: that member's own store). */
function memberValue(port: number, key: string): Buffer | undefined {
  const r = spawnSync('etcdctl', ['--endpoints', `https://127.0.0.1:${port}`, '--cacert', join(PKI, 'etcd', 'ca.crt'),
    '--cert', join(PKI, 'apiserver-etcd-client.crt'), '--key', join(PKI, 'apiserver-etcd-client.key'),
    '--command-timeout', '10s', '--consistency', 's', 'get', key, '-w', 'json'], { encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' } });
  assert.equal(r.status, 0, r.stderr);
  const kv = (JSON.parse(r.stdout) as { kvs?: { value: string }[] }).kvs?.[0];
  return kv ? Buffer.from(kv.value, 'base64') : undefined;
}
function etcdPut(key: string, value: string): void {
  const r = spawnSync('etcdctl', ['--endpoints', 'https://127.0.0.1:2379', '--cacert', join(PKI, 'etcd', 'ca.crt'),
    '--cert', join(PKI, 'apiserver-etcd-client.crt'), '--key', join(PKI, 'apiserver-etcd-client.key'), 'put', key],
  { input: value, encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' } });
  assert.equal(r.status, 0, r.stderr);
}
/** Every file of every member's data dir (bbolt db, WAL, snapshots). */
function memberFiles(): string[] {
  const out: string[] = [];
  const walk = (d: string) => { for (const f of readdirSync(d)) { const p = join(d, f); if (statSync(p).isDirectory()) walk(p); else out.push(p); } };
  for (const m of ['etcd-1', 'etcd-2', 'etcd-3']) walk(join(STATE, 'etcd', m));
  return out;
}
const auditLines = () => (existsSync(AUDIT_LOG) ? readFileSync(AUDIT_LOG, 'utf8').split('\n').filter(Boolean) : []);

describe('issue 18: encryption at rest, impersonation, kubelet port, audit', () => {
  const ns = uniqueName('e2e-harden');
  before(() => {
    assert.ok(existsSync(CA), 'the cluster is secure (.mk8s/pki)');
    kubectlOk(['create', 'namespace', ns]);
  });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('kubectl apply of a Secret: no byte of its value or last-applied annotation in any etcd member', async () => {
    const value = `v-${randomUUID()}`;
    const label = `l-${randomUUID().slice(0, 8)}`;
    kubectlOk(['apply', '-n', ns, '-f', '-'], { input: `apiVersion: v1\nkind: Secret\nmetadata: {name: applied, labels: {tag: ${label}}}\nstringData: {password: ${value}}\n` });
    assert.equal(Buffer.from(kubectlOk(['get', 'secret', 'applied', '-n', ns, '-o', 'jsonpath={.data.password}']), 'base64').toString(), value);
    const key = `/registry/secrets/${ns}/applied`;
    const needles = [value, Buffer.from(value).toString('base64'), label, 'last-applied-configuration', 'stringData'];
    for (const port of ETCD_PORTS) {
      // Raft applies on every member; wait for this one to have it.
      const raw = await waitFor(() => memberValue(port, key), { timeoutMs: 10_000, intervalMs: 200, what: `member :${port} to hold ${key}` });
      assert.equal(raw.subarray(0, 23).toString(), 'k8s:enc:aesgcm:v1:key1:', `member :${port}`);
      for (const n of needles) assert.ok(!raw.includes(n), `${n} readable through member :${port}`);
    }
    // The members' files (bbolt db, WAL) hold no copy of the value either.
    for (const f of memberFiles()) {
      const bytes = readFileSync(f);
      assert.ok(!bytes.includes(value) && !bytes.includes(Buffer.from(value).toString('base64')), `the value is in ${f}`);
    }
  });

  test('a plaintext Secret from before encryption is served, and encrypted by its next update', async () => {
    const value = `old-${randomUUID()}`;
    const key = `/registry/secrets/${ns}/legacy`;
    etcdPut(key, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'legacy', namespace: ns, uid: randomUUID(), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
      type: 'Opaque', data: { v: Buffer.from(value).toString('base64') } }));
    assert.equal(Buffer.from(kubectlOk(['get', 'secret', 'legacy', '-n', ns, '-o', 'jsonpath={.data.v}']), 'base64').toString(), value);
    kubectlOk(['annotate', 'secret', 'legacy', '-n', ns, 'rotated=yes']);
    for (const port of ETCD_PORTS) {
      const raw = await waitFor(() => { const v = memberValue(port, key); return v && v.subarray(0, 8).toString() === 'k8s:enc:' ? v : undefined; },
        { timeoutMs: 10_000, intervalMs: 200, what: `member :${port} to hold the re-encrypted value` });
      assert.ok(!raw.includes(Buffer.from(value).toString('base64')));
    }
    assert.equal(Buffer.from(kubectlOk(['get', 'secret', 'legacy', '-n', ns, '-o', 'jsonpath={.data.v}']), 'base64').toString(), value);
    // Rewriting every Secret (the rotation procedure's step) works as documented.
    const replaced = spawnSync('bash', ['-c', `kubectl --kubeconfig ${KUBECONFIG} get secrets -n ${ns} -o json | kubectl --kubeconfig ${KUBECONFIG} replace -f -`], { encoding: 'utf8' });
    assert.equal(replaced.status, 0, replaced.stderr);
  });

  test('impersonation: --as is honoured, and refused to those who may not impersonate', () => {
    const canI = (...args: string[]) => kubectl(['auth', 'can-i', ...args]).stdout.trim().split(' ')[0];
    assert.equal(canI('list', 'secrets', '--as=system:serviceaccount:default:default'), 'no');
    assert.equal(canI('list', 'secrets', '--as=someone', '--as-group=system:masters'), 'yes');
    const who = JSON.parse(kubectlOk(['auth', 'whoami', '--as=someone', '-o', 'json'])) as { status: { userInfo: { username: string; groups: string[] } } };
    assert.deepEqual(who.status.userInfo, { username: 'someone', groups: ['system:authenticated'] });
    // A kubelet may impersonate no one.
    // --raw: no discovery first (kubectl cannot map resources when discovery itself is refused).
    const r = kubectl(['--kubeconfig', NODE1, 'get', '--raw', `/api/v1/namespaces/${ns}/pods`, '--as=kubernetes-admin']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /users "kubernetes-admin" is forbidden: User "system:node:node-1" cannot impersonate resource "users" in API group "" at the cluster scope/);
    // The admin acting as a kubelet is held to the Node authorizer.
    const asNode = kubectl(['get', 'secrets', '-A', '--as=system:node:node-1', '--as-group=system:nodes']);
    assert.notEqual(asNode.code, 0);
    assert.match(asNode.stderr, /User "system:node:node-1" cannot list resource "secrets"/);
  });

  test('the kubelet port: anonymous and invalid tokens 401, a ServiceAccount token or another node 403, on every path', async () => {
    const token = kubectlOk(['create', 'token', 'default', '-n', ns]);
    const paths = ['/healthz', '/pods', '/runningpods/', '/containerLogs/default/x/y', '/stats/summary', '/metrics', '/metrics/resource', '/logs/', '/spec/',
      '/configz', '/checkpoint/default/x/y', '/run/default/x/y', '/exec/default/x/y', '/attach/default/x/y', '/portForward/default/x', '/nope'];
    for (const path of paths) {
      for (const method of ['GET', 'POST']) {
        const url = `https://10.240.0.11:10250${path}`;
        assert.equal((await call(url, { method })).code, 401, `anonymous ${method} ${path}`);
        assert.equal((await call(url, { method, token: 'forged.token.value' })).code, 401, `forged token ${method} ${path}`);
        const sa = await call(url, { method, token });
        assert.equal(sa.code, 403, `SA token ${method} ${path}: ${sa.body}`);
        assert.match(sa.body, new RegExp(`Forbidden \\(user=system:serviceaccount:${ns}:default, verb=(get|create), resource=nodes, subresource=`));
        const other = await call(url, { method, cert: join(PKI, 'kubelet-node-2.crt'), key: join(PKI, 'kubelet-node-2.key') });
        assert.equal(other.code, 403, `node-2 ${method} ${path}`);
      }
    }
  });

  test('audit: one ResponseComplete line per request with Audit-Id, watches start, impersonation recorded, no Secret value', async () => {
    const ids = Array.from({ length: 5 }, () => `e2e-${randomUUID()}`);
    for (const id of ids) {
      const r = await call(`https://127.0.0.1:6443/api/v1/namespaces/${ns}/pods`, { ...ADMIN, headers: { 'audit-id': id } });
      assert.equal(r.code, 200);
      assert.equal(r.headers['audit-id'], id);
    }
    const watchId = `e2e-watch-${randomUUID()}`;
    const w = await call(`https://127.0.0.1:6443/api/v1/namespaces/${ns}/configmaps?watch=1&timeoutSeconds=1`, { ...ADMIN, headers: { 'audit-id': watchId } });
    assert.equal(w.code, 200);
    const impId = `e2e-imp-${randomUUID()}`;
    const imp = await call(`https://127.0.0.1:6443/api/v1/namespaces/${ns}/secrets`, { ...ADMIN, headers: { 'audit-id': impId, 'impersonate-user': 'system:serviceaccount:default:default' } });
    assert.equal(imp.code, 403);
    const value = `audited-${randomUUID()}`;
    kubectlOk(['create', 'secret', 'generic', 'audited', '-n', ns, `--from-literal=k=${value}`]);
    type Ev = { auditID: string; stage: string; level: string; verb: string; user: { username: string }; impersonatedUser?: { username: string }; objectRef?: { resource?: string; name?: string; namespace?: string }; responseStatus?: { code: number } };
    const events = await waitFor(() => {
      const evs = auditLines().map((l) => JSON.parse(l) as Ev);
      const mine = evs.filter((e) => [...ids, watchId, impId].includes(e.auditID) || (e.objectRef?.resource === 'secrets' && e.objectRef.name === 'audited' && e.objectRef.namespace === ns));
      return mine.some((e) => e.auditID === impId && e.stage === 'ResponseComplete') && mine.some((e) => e.objectRef?.name === 'audited' && e.stage === 'ResponseComplete') ? mine : undefined;
    }, { timeoutMs: 15_000, intervalMs: 500, what: 'the audit lines of these requests' });
    for (const id of ids) {
      const done = events.filter((e) => e.auditID === id && e.stage === 'ResponseComplete');
      assert.equal(done.length, 1, `one line for ${id}`);
      assert.equal(done[0]!.level, 'Metadata');
      assert.equal(done[0]!.verb, 'list');
      assert.equal(done[0]!.user.username, 'kubernetes-admin');
      assert.equal(done[0]!.responseStatus?.code, 200);
    }
    assert.deepEqual(events.filter((e) => e.auditID === watchId).map((e) => e.stage), ['ResponseStarted', 'ResponseComplete']);
    const i = events.find((e) => e.auditID === impId && e.stage === 'ResponseComplete')!;
    assert.equal(i.user.username, 'kubernetes-admin');
    assert.equal(i.impersonatedUser?.username, 'system:serviceaccount:default:default');
    assert.equal(i.responseStatus?.code, 403);
    const created = events.find((e) => e.objectRef?.name === 'audited' && e.verb === 'create')!;
    assert.equal(created.level, 'Metadata');
    const all = readFileSync(AUDIT_LOG, 'utf8');
    assert.ok(!all.includes(value) && !all.includes(Buffer.from(value).toString('base64')), 'a Secret value is in the audit log');
  });
});
