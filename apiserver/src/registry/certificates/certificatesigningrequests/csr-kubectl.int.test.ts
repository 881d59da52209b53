/**
 * CertificateSigningRequests with the real kubectl against the apiserver on real etcd, RBAC on:
 * `kubectl apply` of a CSR records the requestor, `kubectl get csr` prints upstream's columns,
 * `kubectl certificate approve|deny` (a protobuf PUT to /approval) sets the condition, the
 * `approve` verb on signers is enforced, invalid requests answer upstream's 422, and a /status
 * write can set the certificate once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki, issueCertificate, loadCa, parseCertificateRequest, signCertificateRequest } from '@mk8s/component-base/pki';
import { kubeconfig, startTestApiServer, type TestApiServer, kubectlRunner } from '../../../testing/index.js';

describe('certificatesigningrequests with kubectl', () => {
  let srv: TestApiServer;
  let dir: string;
  let csrPem: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mk8s-csr-'));
    const pki = await ensurePki(join(dir, 'pki'), { nodes: [] });
    srv = await startTestApiServer({
      etcdMembers: 1,
      tls: { certFile: pki.apiserver.cert, keyFile: pki.apiserver.key, clientCAFile: pki.ca.cert },
      security: { clientCAFile: pki.ca.cert, authorizationModes: ['RBAC'] },
    });
    const ca = await loadCa(pki.ca);
    // bob may create and read CSRs but holds no approve verb on any signer.
    const bob = await issueCertificate(ca, { commonName: 'bob', usage: 'client' });
    await writeFile(join(dir, 'bob.crt'), bob.certPem);
    await writeFile(join(dir, 'bob.key'), bob.keyPem);
    const kc = (cert: string, key: string) => kubeconfig(srv.url).replace('user: {}', `user: {client-certificate: ${cert}, client-key: ${key}}`)
      .replace(`server: ${srv.url}`, `server: ${srv.url}\n    certificate-authority: ${pki.ca.cert}`);
    await writeFile(join(dir, 'kubeconfig'), kc(pki.admin.cert, pki.admin.key));
    await writeFile(join(dir, 'bob.kubeconfig'), kc(join(dir, 'bob.crt'), join(dir, 'bob.key')));
    execFileSync('openssl', ['genrsa', '-out', join(dir, 'alice.key'), '2048'], { stdio: 'ignore' });
    execFileSync('openssl', ['req', '-new', '-key', join(dir, 'alice.key'), '-out', join(dir, 'alice.csr'), '-subj', '/CN=alice/O=dev'], { stdio: 'ignore' });
    csrPem = await readFile(join(dir, 'alice.csr'), 'utf8');
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const { kubectl, ok } = kubectlRunner({ kubeconfig: () => join(dir, 'kubeconfig'), cacheDir: () => join(dir, 'cache') });
  const asBob = kubectlRunner({ kubeconfig: () => join(dir, 'bob.kubeconfig'), cacheDir: () => join(dir, 'cache-bob') });
  const manifest = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({
    apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', expirationSeconds: 86400, usages: ['client auth'], ...extra },
  });
  const apply = async (name: string, extra: Record<string, unknown> = {}, runner = kubectl) => {
    const f = join(dir, `${name}.json`);
    await writeFile(f, manifest(name, extra));
    return runner('apply', '-f', f);
  };
  const get = async (name: string) => JSON.parse(await ok('get', 'csr', name, '-o', 'json')) as Record<string, any>;

  test('kubectl apply records the requestor; get csr prints upstream columns', async () => {
    const r = await apply('alice');
    assert.equal(r.code, 0, r.stderr);
    const csr = await get('alice');
    assert.equal(csr['spec']['username'], 'kubernetes-admin');
    assert.ok((csr['spec']['groups'] as string[]).includes('system:masters'));
    assert.equal(csr['status'], undefined);
    const table = await ok('get', 'csr', 'alice');
    assert.match(table, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION\n/);
    assert.match(table, /alice\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+kubernetes-admin\s+24h\s+Pending/);
  });

  test('invalid requests answer 422 as upstream', async () => {
    const r = await apply('bad', { request: Buffer.from('not a csr').toString('base64'), signerName: 'nodomain', usages: ['client auth', 'bogus'], expirationSeconds: 60 });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.request: Invalid value: \[\]byte\{0x6e, 0x6f.*\}: PEM block type must be CERTIFICATE REQUEST/);
    assert.match(r.stderr, /spec\.usages\[1\]: Unsupported value: "bogus"/);
    assert.match(r.stderr, /spec\.signerName: Invalid value: "nodomain": must be a fully qualified domain and path of the form 'example\.com\/signer-name'/);
    assert.match(r.stderr, /spec\.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds \(10 minutes\)/);
  });

  test('certificate approve without the approve verb on the signer is forbidden', async () => {
    const r = await asBob.kubectl('certificate', 'approve', 'alice');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /forbidden/i);
  });

  test('kubectl certificate approve sets the Approved condition through /approval', async () => {
    const r = await kubectl('certificate', 'approve', 'alice', '-v=8');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /certificatesigningrequest\.certificates\.k8s\.io\/alice approved/);
    // kubectl's typed clientset sends the /approval PUT as protobuf (certificates.proto decodes it).
    assert.match(r.stderr, /PUT https:\/\/\S+\/apis\/certificates\.k8s\.io\/v1\/certificatesigningrequests\/alice\/approval/);
    assert.match(r.stderr, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
    const c = (await get('alice'))['status']['conditions'] as Record<string, string>[];
    assert.equal(c.length, 1);
    assert.equal(c[0]!['type'], 'Approved');
    assert.equal(c[0]!['status'], 'True');
    assert.equal(c[0]!['reason'], 'KubectlApprove');
    assert.match(c[0]!['lastUpdateTime']!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(await ok('get', 'csr', 'alice'), /alice\s+.*\s+Approved\n/);
    // deny after approve: Approved and Denied are mutually exclusive.
    const d = await kubectl('certificate', 'deny', 'alice', '--force');
    assert.notEqual(d.code, 0);
  });

  test('kubectl certificate deny', async () => {
    assert.equal((await apply('other')).code, 0);
    assert.match(await ok('certificate', 'deny', 'other'), /denied/);
    assert.match(await ok('get', 'csr', 'other'), /other\s+.*\s+Denied\n/);
  });

  test('/status sets the certificate once; the main resource cannot', async () => {
    const pki = join(dir, 'pki');
    const ca = await loadCa({ cert: join(pki, 'ca.crt'), key: join(pki, 'ca.key') });
    const cert = await signCertificateRequest(ca, parseCertificateRequest(csrPem), { usages: ['client auth'], durationMs: 3600_000 });
    const csr = await get('alice');
    csr['status']['certificate'] = Buffer.from(cert).toString('base64');
    const f = join(dir, 'status.json');
    await writeFile(f, JSON.stringify(csr));
    const viaMain = await kubectl('replace', '-f', f);
    assert.equal(viaMain.code, 0, viaMain.stderr); // status is ignored on the main resource
    const fresh = await get('alice');
    assert.equal(fresh['status']['certificate'], undefined);
    fresh['status']['certificate'] = Buffer.from(cert).toString('base64');
    await writeFile(f, JSON.stringify(fresh));
    const viaStatus = await kubectl('replace', '--subresource=status', '-f', f);
    assert.equal(viaStatus.code, 0, viaStatus.stderr);
    assert.match(await ok('get', 'csr', 'alice'), /Approved,Issued/);
    const again = await get('alice');
    again['status']['certificate'] = Buffer.from(cert + cert).toString('base64');
    await writeFile(f, JSON.stringify(again));
    const r = await kubectl('replace', '--subresource=status', '-f', f);
    assert.match(r.stderr, /status\.certificate: Forbidden: updates may not modify existing certificate content/);
  });

  test('field selector spec.signerName', async () => {
    assert.match(await ok('get', 'csr', '--field-selector=spec.signerName=kubernetes.io/kube-apiserver-client', '-o', 'name'), /alice/);
    assert.equal((await ok('get', 'csr', '--field-selector=spec.signerName=example.com/x', '-o', 'name')).trim(), '');
  });
});
