import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate, createPrivateKey, createPublicKey, createSign, createVerify } from 'node:crypto';
import { ensurePki, subjectOf } from './pki.js';

test('ensurePki makes a CA, the apiserver cert with SANs, identities and the SA key pair; idempotent', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mk8s-pki-'));
  try {
    const p = await ensurePki(dir, { nodes: ['node-1'], nodeIPs: { 'node-1': ['10.240.0.2'] } });
    const ca = new X509Certificate(await readFile(p.ca.cert, 'utf8'));
    assert.equal(ca.ca, true);
    const api = new X509Certificate(await readFile(p.apiserver.cert, 'utf8'));
    assert.ok(api.verify(ca.publicKey), 'apiserver cert signed by the CA');
    for (const san of ['DNS:kubernetes.default.svc.cluster.local', 'DNS:kubernetes', 'IP Address:127.0.0.1', 'IP Address:10.96.0.1', 'IP Address:10.240.0.1']) {
      assert.ok(api.subjectAltName?.includes(san), `${san} in ${api.subjectAltName}`);
    }
    assert.ok(api.checkIP('10.96.0.1'));
    assert.ok(api.checkHost('kubernetes.default.svc'));
    const expect: [string, string, string[]][] = [
      [p.admin.cert, 'kubernetes-admin', ['system:masters']],
      [p.controllerManager.cert, 'system:kube-controller-manager', []],
      [p.scheduler.cert, 'system:kube-scheduler', []],
      [p.kubeProxy.cert, 'system:kube-proxy', []],
      [p.kubelets['node-1']!.client.cert, 'system:node:node-1', ['system:nodes']],
    ];
    for (const [path, cn, orgs] of expect) {
      const pemText = await readFile(path, 'utf8');
      assert.deepEqual(subjectOf(pemText), { commonName: cn, organizations: orgs });
      assert.ok(new X509Certificate(pemText).verify(ca.publicKey));
    }
    const serving = new X509Certificate(await readFile(p.kubelets['node-1']!.serving.cert, 'utf8'));
    assert.ok(serving.checkIP('10.240.0.2'));
    // Key matches cert.
    const adminKey = createPrivateKey(await readFile(p.admin.key, 'utf8'));
    const sig = createSign('sha256').update('x').sign(adminKey);
    assert.ok(createVerify('sha256').update('x').verify(new X509Certificate(await readFile(p.admin.cert, 'utf8')).publicKey, sig));
    assert.equal((await stat(p.admin.key)).mode & 0o777, 0o600);
    // SA key pair is RSA and matches.
    const saKey = createPrivateKey(await readFile(p.serviceAccount.key, 'utf8'));
    assert.equal(saKey.asymmetricKeyType, 'rsa');
    const saSig = createSign('sha256').update('y').sign(saKey);
    assert.ok(createVerify('sha256').update('y').verify(createPublicKey(await readFile(p.serviceAccount.pub, 'utf8')), saSig));

    // etcd has its own CA: its certs chain to it, and no cluster identity does.
    const etcdCa = new X509Certificate(await readFile(p.etcd.ca.cert, 'utf8'));
    assert.ok(etcdCa.ca && etcdCa.subject.includes('mk8s-etcd-ca'));
    for (const c of [p.etcd.server.cert, p.etcd.peer.cert, p.apiserverEtcdClient.cert]) {
      const x = new X509Certificate(await readFile(c, 'utf8'));
      assert.ok(x.verify(etcdCa.publicKey), `${c} signed by the etcd CA`);
      assert.ok(!x.verify(ca.publicKey));
    }
    assert.ok(new X509Certificate(await readFile(p.etcd.server.cert, 'utf8')).checkIP('127.0.0.1'));
    assert.deepEqual(subjectOf(await readFile(p.apiserverEtcdClient.cert, 'utf8')).commonName, 'kube-apiserver-etcd-client');
    assert.ok(!new X509Certificate(await readFile(p.admin.cert, 'utf8')).verify(etcdCa.publicKey));

    // The front-proxy CA (kubeadm's front-proxy-ca) signs only the aggregator's front-proxy-client.
    const fpCa = new X509Certificate(await readFile(p.frontProxy.ca.cert, 'utf8'));
    assert.ok(fpCa.ca && fpCa.subject.includes('front-proxy-ca'));
    const fpClient = await readFile(p.frontProxy.client.cert, 'utf8');
    assert.ok(new X509Certificate(fpClient).verify(fpCa.publicKey));
    assert.ok(!new X509Certificate(fpClient).verify(ca.publicKey));
    assert.deepEqual(subjectOf(fpClient), { commonName: 'front-proxy-client', organizations: [] });
    assert.ok(!new X509Certificate(await readFile(p.admin.cert, 'utf8')).verify(fpCa.publicKey));

    // Idempotent: a second run keeps every file; a new node only adds its own.
    const before = await readFile(p.apiserver.cert, 'utf8');
    const caBefore = await readFile(p.ca.cert, 'utf8');
    const p2 = await ensurePki(dir, { nodes: ['node-1', 'node-2'] });
    assert.equal(await readFile(p2.apiserver.cert, 'utf8'), before);
    assert.equal(await readFile(p2.ca.cert, 'utf8'), caBefore);
    const n2 = new X509Certificate(await readFile(p2.kubelets['node-2']!.client.cert, 'utf8'));
    assert.ok(n2.verify(ca.publicKey), 'new node cert signed by the kept CA');

    // A serving address asked for later (more apiservers) re-issues only the apiserver certificate, by the same CA.
    const p3 = await ensurePki(dir, { nodes: ['node-1', 'node-2'], apiserverIPs: ['10.240.0.3'] });
    const api3 = new X509Certificate(await readFile(p3.apiserver.cert, 'utf8'));
    assert.ok(api3.checkIP('10.240.0.3') && api3.checkIP('127.0.0.1') && api3.verify(ca.publicKey));
    assert.equal(await readFile(p3.ca.cert, 'utf8'), caBefore);
    const again = await readFile(p3.apiserver.cert, 'utf8');
    await ensurePki(dir, { nodes: ['node-1', 'node-2'], apiserverIPs: ['10.240.0.3'] });
    assert.equal(await readFile(p3.apiserver.cert, 'utf8'), again, 'kept once it has every address');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
