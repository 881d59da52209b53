import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CertificateSigningRequests } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { CsrApprovingController } from './approver.js';
import type { Csr } from './decisions.js';

const dir = mkdtempSync(join(tmpdir(), 'csrapproving-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function request(subject: string): string {
  const k = join(dir, `${Math.random()}.key`);
  execFileSync('openssl', ['ecparam', '-genkey', '-name', 'prime256v1', '-noout', '-out', k]);
  execFileSync('openssl', ['req', '-new', '-key', k, '-out', `${k}.csr`, '-subj', subject]);
  return readFileSync(`${k}.csr`).toString('base64');
}
const NODE = request('/CN=system:node:n1/O=system:nodes');

const csr = (username: string, signerName = 'kubernetes.io/kube-apiserver-client-kubelet', req = NODE): Csr => ({
  apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'a' },
  spec: { request: req, signerName, usages: ['digital signature', 'client auth'], username, groups: ['system:nodes'] },
});

const cases: { name: string; obj: Csr; allow: string[]; want: string | undefined; sars: number }[] = [
  { name: 'a node renewing its own client certificate (selfnodeclient)', obj: csr('system:node:n1'), allow: ['selfnodeclient'], want: 'Auto approving self kubelet client certificate after SubjectAccessReview.', sars: 1 },
  { name: 'a bootstrap requestor (nodeclient)', obj: csr('system:bootstrap:abc'), allow: ['nodeclient'], want: 'Auto approving kubelet client certificate after SubjectAccessReview.', sars: 1 },
  { name: 'no permission: left pending', obj: csr('system:node:n1'), allow: [], want: undefined, sars: 2 },
  { name: 'other signers are not auto-approved', obj: csr('system:node:n1', 'kubernetes.io/kube-apiserver-client'), allow: ['selfnodeclient', 'nodeclient'], want: undefined, sars: 0 },
  { name: 'not a kubelet client CSR', obj: csr('alice', undefined, request('/CN=alice/O=dev')), allow: ['selfnodeclient', 'nodeclient'], want: undefined, sars: 0 },
];
for (const tc of cases) {
  test(`csrapproving: ${tc.name}`, async () => {
    const f = newControllerFixture();
    f.client.prependReactor('create', 'subjectaccessreviews', (a) => {
      const sub = (a.object as { spec: { resourceAttributes: { subresource: string } } }).spec.resourceAttributes.subresource;
      return { handled: true, result: { ...(a.object as object), status: { allowed: tc.allow.includes(sub) } } };
    });
    f.build((ctx) => new CsrApprovingController(ctx));
    f.seed(tc.obj as never);
    await f.reconcile('a');
    const writes = f.actions({ writesOnly: true });
    assert.equal(writes.filter((w) => w === 'create subjectaccessreviews').length, tc.sars);
    const got = await f.client.resource<Csr>(CertificateSigningRequests).get('a');
    const approved = got.status?.conditions?.find((c) => c.type === 'Approved');
    assert.equal(approved?.message, tc.want);
    if (tc.want) { assert.equal(approved?.reason, 'AutoApproved'); assert.ok(writes.includes('patch certificatesigningrequests/approval')); }
  });
}

test('csrapproving: a request that does not parse is an error (retried with backoff), as upstream', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new CsrApprovingController(ctx));
  f.seed(csr('system:node:n1', undefined, Buffer.from('not a PEM certificate request').toString('base64')) as never);
  await assert.rejects(f.reconcile('a'), /^Error: unable to parse csr "a": /);
  assert.deepEqual(f.actions({ writesOnly: true }), [], 'no SubjectAccessReview, no approval');
});
