import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { CertificateSigningRequests } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { ensureCa, parseCertificateRequest } from '@mk8s/component-base/pki';
import { CsrSigningController } from './signer.js';
import { certificateDurationMs, readyToSign, signerRejects, type Csr } from './decisions.js';

const dir = mkdtempSync(join(tmpdir(), 'csrsigning-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ca = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
await ensureCa(ca);

/** A PEM CSR made by openssl (EC key), base64 as the API carries it. */
function request(subject: string, san?: string): string {
  const k = join(dir, `${Math.random()}.key`), r = `${k}.csr`;
  execFileSync('openssl', ['ecparam', '-genkey', '-name', 'prime256v1', '-noout', '-out', k]);
  execFileSync('openssl', ['req', '-new', '-key', k, '-out', r, '-subj', subject, ...(san ? ['-addext', `subjectAltName=${san}`] : [])]);
  return readFileSync(r).toString('base64');
}
const ALICE = request('/CN=alice/O=dev');
const NODE = request('/CN=system:node:n1/O=system:nodes');
const SERVING = request('/CN=system:node:n1/O=system:nodes', 'DNS:n1,IP:10.240.0.2');

const csr = (name: string, req: string, signerName: string, usages: string[], conditions: Csr['status'] = { conditions: [{ type: 'Approved', status: 'True' }] }, expirationSeconds?: number): Csr => ({
  apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
  spec: { request: req, signerName, usages, ...(expirationSeconds ? { expirationSeconds } : {}) },
  ...(conditions ? { status: conditions } : {}),
});

const cases: { name: string; obj: Csr; want: 'issued' | 'failed' | 'none'; failure?: RegExp }[] = [
  { name: 'signs an approved kube-apiserver-client request', obj: csr('a', ALICE, 'kubernetes.io/kube-apiserver-client', ['client auth'], undefined, 3600), want: 'issued' },
  { name: 'leaves a pending request alone', obj: csr('a', ALICE, 'kubernetes.io/kube-apiserver-client', ['client auth'], { conditions: [] }), want: 'none' },
  { name: 'leaves a denied request alone', obj: csr('a', ALICE, 'kubernetes.io/kube-apiserver-client', ['client auth'], { conditions: [{ type: 'Denied', status: 'True' }] }), want: 'none' },
  { name: 'leaves other signers alone', obj: csr('a', ALICE, 'example.com/mine', ['client auth']), want: 'none' },
  { name: 'fails a server-auth usage on the client signer', obj: csr('a', ALICE, 'kubernetes.io/kube-apiserver-client', ['server auth']), want: 'failed', failure: /invalid usage for client certificate/ },
  { name: 'signs a kubelet client request', obj: csr('a', NODE, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth']), want: 'issued' },
  { name: 'fails a kubelet client request outside system:nodes', obj: csr('a', ALICE, 'kubernetes.io/kube-apiserver-client-kubelet', ['client auth']), want: 'failed', failure: /subject organization is not system:nodes/ },
  { name: 'signs a kubelet serving request with SANs', obj: csr('a', SERVING, 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth']), want: 'issued' },
  { name: 'fails a kubelet serving request without SANs', obj: csr('a', NODE, 'kubernetes.io/kubelet-serving', ['server auth']), want: 'failed', failure: /DNS or IP subjectAltName is required/ },
];
for (const tc of cases) {
  test(`csrsigning: ${tc.name}`, async () => {
    const f = newControllerFixture();
    f.build((ctx) => new CsrSigningController(ctx, { certFile: ca.cert, keyFile: ca.key }));
    f.seed(tc.obj as never);
    await f.reconcile('a');
    const writes = f.actions({ writesOnly: true });
    if (tc.want === 'none') { assert.deepEqual(writes, []); return; }
    assert.deepEqual(writes, ['update certificatesigningrequests/status']);
    const got = await f.client.resource<Csr>(CertificateSigningRequests).get('a');
    if (tc.want === 'failed') {
      const failed = got.status?.conditions?.find((c) => c.type === 'Failed');
      assert.equal(failed?.reason, 'SignerValidationFailure');
      assert.match(failed?.message ?? '', tc.failure!);
      assert.equal(got.status?.certificate, undefined);
      return;
    }
    const cert = new X509Certificate(Buffer.from(got.status!.certificate!, 'base64').toString());
    assert.ok(cert.verify(new X509Certificate(readFileSync(ca.cert)).publicKey));
    const subject = parseCertificateRequest(Buffer.from(tc.obj.spec!.request!, 'base64')).commonName;
    assert.match(cert.subject, new RegExp(`CN=${subject}`));
    const lifeMs = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    if (tc.obj.spec?.expirationSeconds) assert.ok(Math.abs(lifeMs - tc.obj.spec.expirationSeconds * 1000) <= 1000, `life ${lifeMs}`);
  });
}

test('certificateDurationMs honours expirationSeconds up to the maximum', () => {
  assert.equal(certificateDurationMs(undefined, 1000_000), 1000_000);
  assert.equal(certificateDurationMs(3600, 365 * 86400_000), 3600_000);
  assert.equal(certificateDurationMs(10 * 365 * 86400, 365 * 86400_000), 365 * 86400_000);
});

test('readyToSign and signerRejects', () => {
  assert.equal(readyToSign(csr('a', ALICE, 'x/y', [], { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'Y2VydA==' })), false);
  assert.equal(readyToSign(csr('a', ALICE, 'x/y', [], { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }] })), false);
  const node = parseCertificateRequest(Buffer.from(NODE, 'base64'));
  assert.equal(signerRejects('kubernetes.io/kube-apiserver-client-kubelet', node, ['client auth', 'key encipherment']), 'usages did not match [digital signature client auth]');
});
