/**
 * RestClientset over real TLS: the CA from the kubeconfig is enforced, a client certificate is
 * presented, insecure-skip-tls-verify is honoured. Uses a local https server and openssl certs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Namespaces } from '@mk8s/api';
import { createClientset, loadKubeConfig } from '@mk8s/client';

let dir: string;
let server: Server;
let url: string;
const pem = (f: string) => readFileSync(join(dir, f), 'utf8');
const b64 = (f: string) => Buffer.from(pem(f)).toString('base64');

function openssl(...args: string[]): void { execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' }); }
function makeCa(name: string): void {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '1', '-subj', `/CN=${name}`);
}
function makeCert(name: string, ca: string, ext: string): void {
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}/O=system:masters`);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`);
}

function kubeconfig(cluster: string, user: string): string {
  const p = join(dir, `kc-${Math.random().toString(36).slice(2)}`);
  writeFileSync(p, `apiVersion: v1
kind: Config
current-context: c
clusters:
- name: c
  cluster:
    server: ${url}
${cluster}
users:
- name: u
  user:
${user}
contexts:
- name: c
  context: { cluster: c, user: u }
`);
  return p;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'mk8s-client-tls-'));
  makeCa('ca');
  makeCa('other-ca');
  makeCert('server', 'ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  makeCert('admin', 'ca', 'extendedKeyUsage=clientAuth\n');
  server = createServer({ key: pem('server.key'), cert: pem('server.crt'), ca: pem('ca.crt'), requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    const authorized = (req.socket as TLSSocket).authorized;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', annotations: { cn: peer?.subject?.CN ?? '', authorized: String(authorized), auth: req.headers.authorization ?? '' } } }));
  });
  return new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => { url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`; resolve(); }));
});
after(() => {
  server?.close();
  server?.closeAllConnections();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('RestClientset TLS', () => {
  test('verifies the server with the kubeconfig CA and presents the client certificate', async () => {
    const kc = kubeconfig(`    certificate-authority: ca.crt`, `    client-certificate-data: ${b64('admin.crt')}\n    client-key-data: ${b64('admin.key')}`);
    const c = createClientset({ kubeconfig: kc });
    const ns = await c.resource(Namespaces).get('default');
    assert.equal(ns.metadata.annotations?.['cn'], 'admin');
    assert.equal(ns.metadata.annotations?.['authorized'], 'true');
    await c.close();
  });

  test('sends a bearer token from the kubeconfig', async () => {
    const kc = kubeconfig(`    certificate-authority-data: ${b64('ca.crt')}`, `    token: secret-token`);
    const c = createClientset({ kubeconfig: loadKubeConfig(kc) });
    const ns = await c.resource(Namespaces).get('default');
    assert.equal(ns.metadata.annotations?.['auth'], 'Bearer secret-token');
    assert.equal(ns.metadata.annotations?.['cn'], '');
    await c.close();
  });

  const rejected = [
    { name: 'rejects a server not signed by the configured CA', cluster: `    certificate-authority: other-ca.crt` },
    { name: 'rejects a server when no CA is configured (system roots only)', cluster: `    insecure-skip-tls-verify: false` },
  ];
  for (const tc of rejected) {
    test(tc.name, async () => {
      const c = createClientset({ kubeconfig: kubeconfig(tc.cluster, '    {}') });
      await assert.rejects(c.resource(Namespaces).get('default'), (e: Error & { code?: string; cause?: { code?: string } }) =>
        /certificate|self.signed|unable to verify/i.test(`${e.message} ${e.code ?? ''} ${e.cause?.code ?? ''}`));
      await c.close();
    });
  }

  test('insecure-skip-tls-verify skips server verification', async () => {
    const c = createClientset({ kubeconfig: kubeconfig(`    insecure-skip-tls-verify: true`, '    {}') });
    assert.equal((await c.resource(Namespaces).get('default')).metadata.name, 'default');
    await c.close();
  });
});
