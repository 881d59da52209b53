/**
 * API aggregation on the real cluster (issue 19): an HTTPS server started by the test on the host's
 * node-network address (10.240.0.1) stands behind a selector-less Service with hand-written
 * Endpoints; an APIService for aggregated.e2e.example.com/v1 turns Available, kubectl discovers its
 * resource and reads through the apiserver, which passes the caller's identity in X-Remote-User.
 * As an extension apiserver does, the backend trusts only the front-proxy client certificate: it
 * requires a client certificate signed by kube-system/extension-apiserver-authentication's
 * requestheader-client-ca-file with a CN in requestheader-allowed-names.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCa, issueCertificate } from '@mk8s/component-base/pki';
import { kubectl, kubectlAsync, kubectlAsyncOk, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-agg');
const HOST = '10.240.0.1';
const APISERVICE = 'v1.aggregated.e2e.example.com';
let dir = '';
let server: Server | undefined;
const seen: { user: string; groups: string; cn: string; authorized: boolean }[] = [];
let allowedNames: string[] = [];
let me = '';

describe('API aggregation', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mk8s-e2e-agg-'));
    const ca = await ensureCa({ cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') });
    const cert = await issueCertificate(ca, { commonName: 'backend', usage: 'server', dnsNames: [`backend.${ns}.svc`] });
    // What the apiserver publishes for extension apiservers (upstream's ClientCARegistrationHook).
    const cm = JSON.parse(await kubectlAsyncOk(['get', 'configmap', '-n', 'kube-system', 'extension-apiserver-authentication', '-o', 'json'])) as { data: Record<string, string> };
    assert.ok(cm.data['client-ca-file']?.includes('BEGIN CERTIFICATE'), 'client-ca-file published');
    const requestHeaderCA = cm.data['requestheader-client-ca-file'];
    assert.ok(requestHeaderCA?.includes('BEGIN CERTIFICATE'), 'requestheader-client-ca-file published');
    allowedNames = JSON.parse(cm.data['requestheader-allowed-names']!) as string[];
    assert.deepEqual(allowedNames, ['front-proxy-client']);
    assert.deepEqual(JSON.parse(cm.data['requestheader-username-headers']!), ['X-Remote-User']);
    assert.deepEqual(JSON.parse(cm.data['requestheader-group-headers']!), ['X-Remote-Group']);
    assert.deepEqual(JSON.parse(cm.data['requestheader-extra-headers-prefix']!), ['X-Remote-Extra-']);
    me = (JSON.parse(await kubectlAsyncOk(['auth', 'whoami', '-o', 'json'])) as { status: { userInfo: { username: string } } }).status.userInfo.username;
    // The TLS layer refuses any client without a certificate of the requestheader CA.
    server = createServer({ cert: cert.certPem, key: cert.keyPem, ca: requestHeaderCA, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const sock = req.socket as TLSSocket;
      seen.push({
        user: String(req.headers['x-remote-user'] ?? ''), groups: String(req.headers['x-remote-group'] ?? ''),
        cn: String(sock.getPeerCertificate().subject?.CN ?? ''), authorized: sock.authorized,
      });
      res.setHeader('content-type', 'application/json');
      if (req.url?.split('?')[0] === '/apis/aggregated.e2e.example.com/v1') {
        return res.end(JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'aggregated.e2e.example.com/v1', resources: [{ name: 'gadgets', singularName: 'gadget', namespaced: false, kind: 'Gadget', verbs: ['get', 'list'] }] }));
      }
      if (req.url?.split('?')[0] === '/apis/aggregated.e2e.example.com/v1/gadgets') {
        return res.end(JSON.stringify({ kind: 'GadgetList', apiVersion: 'aggregated.e2e.example.com/v1', metadata: {}, items: [{ apiVersion: 'aggregated.e2e.example.com/v1', kind: 'Gadget', metadata: { name: 'from-the-backend', creationTimestamp: new Date().toISOString() } }] }));
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
    });
    await new Promise<void>((r) => server!.listen(0, HOST, () => r()));
    const port = (server.address() as { port: number }).port;
    kubectlOk(['create', 'namespace', ns]);
    await kubectlAsyncOk(['apply', '-f', '-'], { input: `
apiVersion: v1
kind: Service
metadata: { name: backend, namespace: ${ns} }
spec: { ports: [{ port: 443, targetPort: ${port} }] }
---
apiVersion: v1
kind: Endpoints
metadata: { name: backend, namespace: ${ns} }
subsets: [{ addresses: [{ ip: ${HOST} }], ports: [{ port: ${port} }] }]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: { name: ${APISERVICE} }
spec:
  group: aggregated.e2e.example.com
  version: v1
  service: { namespace: ${ns}, name: backend, port: 443 }
  caBundle: ${Buffer.from(ca.certPem).toString('base64')}
  groupPriorityMinimum: 1000
  versionPriority: 15
` });
  });
  after(async () => {
    kubectl(['delete', 'apiservice', APISERVICE, '--ignore-not-found']);
    kubectl(['delete', 'namespace', ns, '--wait=false']);
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    rmSync(dir, { recursive: true, force: true });
  });

  test('the APIService becomes Available and its group answers through the apiserver', async () => {
    // kubectl runs asynchronously: the backend (in this process) must answer meanwhile.
    await kubectlAsyncOk(['wait', '--for=condition=Available', '--timeout=60s', `apiservice/${APISERVICE}`]);
    assert.match(await kubectlAsyncOk(['api-resources', '--api-group=aggregated.e2e.example.com']), /^gadgets\s+aggregated\.e2e\.example\.com\/v1\s+false\s+Gadget$/m);
    const out = await waitFor(async () => { const r = await kubectlAsync(['get', 'gadgets.aggregated.e2e.example.com', '-o', 'name']); return r.code === 0 ? r.stdout : undefined; }, { timeoutMs: 30_000, what: 'gadgets through the apiserver' });
    assert.match(out, /gadget.aggregated.e2e.example.com\/from-the-backend/);
    assert.ok(seen.length > 0);
    for (const r of seen) {
      assert.ok(r.authorized, 'front-proxy client certificate verified against requestheader-client-ca-file');
      assert.ok(allowedNames.includes(r.cn), `client CN ${r.cn} in requestheader-allowed-names`);
    }
    // Discovery/availability checks run as the apiserver itself; the gadgets read runs as the kubectl user.
    assert.ok(seen.some((r) => r.user === me), `the backend saw the kubectl user ${me}: ${seen.map((r) => r.user).join(',')}`);
    assert.ok(seen.some((r) => r.user === me && r.groups.includes('system:authenticated')), JSON.stringify(seen));
  });

  test('deleting the APIService stops serving its group', async () => {
    await kubectlAsyncOk(['delete', 'apiservice', APISERVICE]);
    await waitFor(async () => (await kubectlAsync(['get', '--raw', '/apis/aggregated.e2e.example.com/v1/gadgets'])).code !== 0, { timeoutMs: 30_000, what: 'the group gone' });
  });
});
