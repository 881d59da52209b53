/**
 * certificates.k8s.io on the launched cluster (issue 14): a user makes a key and a CSR with
 * openssl, `kubectl apply`s the CertificateSigningRequest, `kubectl certificate approve`s it, the
 * controller-manager's csrsigning controller issues the certificate (honouring expirationSeconds),
 * and the certificate authenticates to the apiserver as that user (`kubectl auth whoami`). A denied
 * request is never issued; a node's own kubelet client CSR is auto-approved (csrapproving). The
 * CSRs are deleted afterwards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const NODE1 = join(ROOT, '.mk8s', 'nodes', 'node-1', 'kubeconfig');

describe('CertificateSigningRequests: approve, issue, authenticate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-e2e-csr-'));
  const user = uniqueName('e2e-user');
  const approved = uniqueName('e2e-csr');
  const denied = uniqueName('e2e-csr-denied');
  const kubelet = uniqueName('e2e-csr-kubelet');
  const key = join(dir, 'user.key');
  const csrFile = join(dir, 'user.csr');
  before(() => {
    execFileSync('openssl', ['genrsa', '-out', key, '2048'], { stdio: 'ignore' });
    execFileSync('openssl', ['req', '-new', '-key', key, '-out', csrFile, '-subj', `/CN=${user}/O=e2e-developers`], { stdio: 'ignore' });
  });
  after(() => {
    kubectl(['delete', 'csr', approved, denied, kubelet, '--ignore-not-found']);
    rmSync(dir, { recursive: true, force: true });
  });
  const manifest = (name: string) => JSON.stringify({
    apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
    spec: { request: readFileSync(csrFile).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', expirationSeconds: 3600, usages: ['client auth'] },
  });
  const csr = (name: string) => JSON.parse(kubectlOk(['get', 'csr', name, '-o', 'json'])) as { status?: { certificate?: string; conditions?: { type: string }[] } };

  test('kubectl apply, certificate approve: the signer issues a certificate for the requested hour', async () => {
    assert.match(kubectlOk(['apply', '-f', '-'], { input: manifest(approved) }), /certificatesigningrequest\.certificates\.k8s\.io\/\S+ created/);
    assert.match(kubectlOk(['get', 'csr', approved]), /Pending/);
    assert.match(kubectlOk(['certificate', 'approve', approved]), /approved/);
    const b64 = await waitFor(() => csr(approved).status?.certificate, { timeoutMs: 30_000, what: 'status.certificate' });
    const cert = new X509Certificate(Buffer.from(b64, 'base64').toString());
    assert.match(cert.subject, new RegExp(`CN=${user}`));
    assert.match(cert.subject, /O=e2e-developers/);
    const life = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    assert.ok(Math.abs(life - 3600_000) <= 2000, `certificate lives ${life} ms`);
    assert.match(kubectlOk(['get', 'csr', approved]), new RegExp(`${approved}\\s+\\S+\\s+kubernetes.io/kube-apiserver-client\\s+\\S+\\s+60m\\s+Approved,Issued`));
    writeFileSync(join(dir, 'user.crt'), Buffer.from(b64, 'base64'));
  });

  test('the issued certificate authenticates as the user (kubectl auth whoami)', () => {
    const kc = join(dir, 'kubeconfig');
    copyFileSync(KUBECONFIG, kc);
    const run = (args: string[]) => spawnSync('kubectl', ['--kubeconfig', kc, ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(run(['config', 'set-credentials', user, `--client-certificate=${join(dir, 'user.crt')}`, `--client-key=${key}`, '--embed-certs']).status, 0);
    assert.equal(run(['config', 'set-context', '--current', `--user=${user}`]).status, 0);
    const who = run(['auth', 'whoami', '-o', 'json']);
    assert.equal(who.status, 0, who.stderr);
    const info = (JSON.parse(who.stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    assert.equal(info.username, user);
    assert.ok(info.groups.includes('e2e-developers'), JSON.stringify(info.groups));
    // Authenticated, not authorized: RBAC names the user.
    const pods = run(['get', 'pods', '-n', 'default']);
    assert.notEqual(pods.status, 0);
    assert.match(pods.stderr, new RegExp(`User "${user}" cannot list resource "pods"`));
  });

  test('kubectl certificate deny: never issued', async () => {
    kubectlOk(['apply', '-f', '-'], { input: manifest(denied) });
    assert.match(kubectlOk(['certificate', 'deny', denied]), /denied/);
    await waitFor(() => csr(denied).status?.conditions?.some((c) => c.type === 'Denied'), { what: 'Denied condition' });
    assert.match(kubectlOk(['get', 'csr', denied]), /Denied/);
    assert.equal(csr(denied).status?.certificate, undefined);
  });

  test('a node renewing its client certificate is auto-approved (csrapproving) and issued', { skip: existsSync(NODE1) ? false : 'no node-1 kubeconfig' }, async () => {
    const nodeKey = join(dir, 'node.key'), nodeCsr = join(dir, 'node.csr');
    execFileSync('openssl', ['ecparam', '-genkey', '-name', 'prime256v1', '-noout', '-out', nodeKey]);
    execFileSync('openssl', ['req', '-new', '-key', nodeKey, '-out', nodeCsr, '-subj', '/CN=system:node:node-1/O=system:nodes'], { stdio: 'ignore' });
    const body = JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: kubelet },
      spec: { request: readFileSync(nodeCsr).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
    });
    // Created with the node's own identity, as a kubelet rotating its certificate does.
    const r = spawnSync('kubectl', ['--kubeconfig', NODE1, 'create', '-f', '-'], { input: body, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    const c = await waitFor(() => { const o = csr(kubelet); return o.status?.certificate ? o : undefined; }, { timeoutMs: 30_000, what: 'auto-approved and issued' });
    const approval = (c.status?.conditions ?? []) as { type: string; reason?: string }[];
    assert.ok(approval.some((x) => x.type === 'Approved' && x.reason === 'AutoApproved'), JSON.stringify(approval));
    assert.match(new X509Certificate(Buffer.from(c.status!.certificate!, 'base64').toString()).subject, /CN=system:node:node-1/);
  });
});
