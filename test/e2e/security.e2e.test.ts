/**
 * The launched cluster is secure end to end: the apiserver answers anonymous requests with 401
 * (public health paths aside), each component's kubeconfig carries its own identity and gets
 * exactly its permissions (kubectl auth can-i, NodeRestriction), kubelets serve HTTPS only to
 * authorized clients while pods/log still works through the apiserver, and Secrets sit in etcd
 * (reachable only with etcd's client certificates) as ciphertext.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const STATE = join(ROOT, '.mk8s');
const PKI = join(STATE, 'pki');
const CA = join(PKI, 'ca.crt');
const NODE1 = join(STATE, 'nodes', 'node-1', 'kubeconfig');

interface Reply { code: number; body: string }

/** One HTTPS GET, like curl --cacert ca.crt [--cert c --key k]. */
function get(url: string, o: { ca?: string; cert?: string; key?: string; insecure?: boolean } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const r = request(url, {
      ...(o.ca ? { ca: readFileSync(o.ca) } : {}), ...(o.cert ? { cert: readFileSync(o.cert), key: readFileSync(o.key!) } : {}),
      rejectUnauthorized: !o.insecure, timeout: 10_000,
    }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    });
    r.on('timeout', () => r.destroy(new Error('timeout')));
    r.on('error', reject);
    r.end();
  });
}

const as = (kubeconfig: string, args: string[]) => kubectl(['--kubeconfig', kubeconfig, ...args]);
/** kubectl auth can-i's answer: 'yes' or 'no' (a denial may carry the authorizer's reason after it). */
const canI = (kubeconfig: string, args: string[]) => as(kubeconfig, ['auth', 'can-i', ...args]).stdout.trim().split(' ')[0];

describe('security of the launched cluster', () => {
  const ns = uniqueName('e2e-sec');
  // The local cluster is always secure: an insecure one is a failure, not a reason to skip.
  test('the cluster has its PKI and an HTTPS admin kubeconfig', () => {
    assert.ok(existsSync(CA), `no cluster CA at ${CA}`);
    assert.match(readFileSync(KUBECONFIG, 'utf8'), /server: https:\/\//, `${KUBECONFIG} is not an HTTPS kubeconfig`);
  });
  before(() => { kubectlOk(['create', 'namespace', ns]); });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('anonymous: 401 for resources, 200 for /healthz; a forged client cert is no identity', async () => {
    const pods = await get('https://127.0.0.1:6443/api/v1/pods', { ca: CA });
    assert.equal(pods.code, 401);
    assert.equal(JSON.parse(pods.body).reason, 'Unauthorized');
    assert.equal((await get('https://127.0.0.1:6443/healthz', { ca: CA })).code, 200);
    // The certificate of another CA (etcd's client) does not authenticate to the apiserver.
    assert.equal((await get('https://127.0.0.1:6443/api/v1/pods', { ca: CA, cert: join(PKI, 'apiserver-etcd-client.crt'), key: join(PKI, 'apiserver-etcd-client.key') })).code, 401);
    // Plain HTTP is gone.
    const plain = spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-m', '5', 'http://127.0.0.1:6443/api/v1/pods'], { encoding: 'utf8' });
    assert.notEqual(plain.stdout, '200');
  });

  test('each component identity gets its own permissions (kubectl auth can-i)', () => {
    assert.equal(canI(KUBECONFIG, ['create', 'clusterrolebindings']), 'yes');
    const cm = join(STATE, 'kubeconfigs', 'controller-manager.kubeconfig');
    const sched = join(STATE, 'kubeconfigs', 'scheduler.kubeconfig');
    const proxy = join(STATE, 'nodes', 'node-1', 'kube-proxy.kubeconfig');
    assert.equal(canI(cm, ['create', 'pods', '-n', ns]), 'yes');
    assert.equal(canI(sched, ['create', 'pods', '--subresource=binding', '-n', ns]), 'yes');
    assert.equal(canI(sched, ['delete', 'nodes']), 'no');
    assert.equal(canI(proxy, ['list', 'endpointslices.discovery.k8s.io', '-A']), 'yes');
    assert.equal(canI(proxy, ['create', 'pods', '-n', ns]), 'no');
    assert.equal(canI(NODE1, ['list', 'secrets', '-A']), 'no');
    assert.equal(canI(NODE1, ['create', 'clusterrolebindings']), 'no');
  });

  test("a kubelet renews its own Lease with its certificate, and cannot modify another Node (403)", async () => {
    const first = kubectlOk(['get', 'lease', 'node-1', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
    await waitFor(() => kubectlOk(['get', 'lease', 'node-1', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']) !== first,
      { timeoutMs: 60_000, intervalMs: 1000, what: 'node-1 to renew its Lease' });
    const r = as(NODE1, ['label', 'node', 'node-2', 'e2e-sec=forged', '--overwrite']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Forbidden/);
    assert.match(r.stderr, /node "node-1" is not allowed to modify node "node-2"/);
    assert.equal(kubectlOk(['get', 'node', 'node-2', '-o', 'jsonpath={.metadata.labels.e2e-sec}']), '');
  });

  test('the kubelet API on :10250 is HTTPS: anonymous 401, another node 403, the apiserver allowed', async () => {
    const kubelet = 'https://10.240.0.11:10250/pods';
    const anon = await get(kubelet, { ca: CA });
    assert.equal(anon.code, 401);
    const other = await get(kubelet, { ca: CA, cert: join(PKI, 'kubelet-node-2.crt'), key: join(PKI, 'kubelet-node-2.key') });
    assert.equal(other.code, 403);
    assert.match(other.body, /Forbidden \(user=system:node:node-2, verb=get, resource=nodes, subresource=proxy\)/);
    const api = await get(kubelet, { ca: CA, cert: join(PKI, 'apiserver-kubelet-client.crt'), key: join(PKI, 'apiserver-kubelet-client.key') });
    assert.equal(api.code, 200);
    assert.equal(JSON.parse(api.body).kind, 'PodList');
  });

  test('pods/log goes to the kubelet over TLS; container paths cannot escape the pod', async () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], { input: `apiVersion: v1
kind: Pod
metadata: {name: talker}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: busybox, imagePullPolicy: IfNotPresent, command: [sh, -c, 'echo secure-hello; sleep 3600']}
` });
    await waitFor(() => kubectl(['logs', '-n', ns, 'talker']).stdout.includes('secure-hello'), { timeoutMs: 120_000, intervalMs: 1000, what: 'kubectl logs through the kubelet' });
    for (const c of ['../../etc/passwd', '..%2F..%2Fetc', 'app/../../x']) {
      const r = kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/pods/talker/log?container=${encodeURIComponent(c)}`]);
      assert.notEqual(r.code, 0, c);
      assert.match(r.stderr, /is not valid for pod talker|BadRequest|not found/i, c);
      assert.doesNotMatch(r.stdout, /root:/);
    }
  });

  test('etcd needs its client certificate, and a Secret is ciphertext there', () => {
    const value = `mk8s-plaintext-canary-${Date.now()}`;
    kubectlOk(['create', 'secret', 'generic', 'canary', '-n', ns, `--from-literal=k=${value}`]);
    assert.equal(Buffer.from(kubectlOk(['get', 'secret', 'canary', '-n', ns, '-o', 'jsonpath={.data.k}']), 'base64').toString(), value);
    const etcdctl = (extra: string[]) => spawnSync('etcdctl', ['--endpoints', 'https://127.0.0.1:2379', '--cacert', join(PKI, 'etcd', 'ca.crt'), ...extra,
      '--command-timeout', '10s', 'get', `/registry/secrets/${ns}/canary`], { encoding: 'latin1', env: { ...process.env, ETCDCTL_API: '3' } });
    const raw = etcdctl(['--cert', join(PKI, 'apiserver-etcd-client.crt'), '--key', join(PKI, 'apiserver-etcd-client.key')]);
    assert.equal(raw.status, 0, raw.stderr);
    assert.match(raw.stdout, /k8s:enc:aesgcm:v1:key1:/);
    assert.ok(!raw.stdout.includes(value), 'the value is not in etcd in clear');
    assert.ok(!raw.stdout.includes(Buffer.from(value).toString('base64')), 'nor base64-encoded');
    // Without a client certificate, or with one of the cluster CA (a kubelet's), etcd refuses.
    assert.notEqual(etcdctl([]).status, 0);
    assert.notEqual(etcdctl(['--cert', join(PKI, 'kubelet-node-1.crt'), '--key', join(PKI, 'kubelet-node-1.key')]).status, 0);
  });
});
