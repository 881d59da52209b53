/**
 * The TLS edges with real sockets on 127.0.0.1 (no cluster): the secure port reads the front
 * proxy's client certificate and X-Remote-User, refuses a token the apiserver rejects; the kubelet
 * client verifies the kubelet's serving certificate with the CA and sends the bearer token.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@mk8s/api';
import { FakeClientset } from '@mk8s/client/testing';
import { ensureCa, issueCertificate } from '@mk8s/component-base/pki';
import { createMetricsServer, type MetricsServerComponent } from './create-metrics-server.js';
import { httpsKubeletClient } from './scraper.js';
import { kubeletResourceMetrics } from './testing/index.js';

let dir = '';
let ms: MetricsServerComponent;
let kubelet: Server;
let kubeletPort = 0;
const ac = new AbortController();
let caPem = '', proxyCaPem = '', proxy = { certPem: '', keyPem: '' }, port = 0;
const tokens: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk8s-ms-int-'));
  const ca = await ensureCa({ cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') });
  const proxyCa = await ensureCa({ cert: join(dir, 'p.crt'), key: join(dir, 'p.key') }, new Date(), 'front-proxy-ca');
  caPem = ca.certPem; proxyCaPem = proxyCa.certPem;
  proxy = await issueCertificate(proxyCa, { commonName: 'front-proxy-client', usage: 'client' });
  const serving = await issueCertificate(ca, { commonName: 'metrics-server', usage: 'server', ips: ['127.0.0.1'] });
  const kubeletCert = await issueCertificate(ca, { commonName: 'system:node:n1', usage: 'server', ips: ['127.0.0.1'] });
  kubelet = createServer({ cert: kubeletCert.certPem, key: kubeletCert.keyPem }, (req, res) => {
    tokens.push(String(req.headers.authorization ?? ''));
    if (req.url !== '/metrics/resource') { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(kubeletResourceMetrics({ cpuSeconds: 100 + tokens.length, memoryBytes: 1 << 30, timestampMs: Date.now(), containers: [] }));
  });
  await new Promise<void>((r) => kubelet.listen(0, '127.0.0.1', () => r()));
  kubeletPort = (kubelet.address() as { port: number }).port;
  const node: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] } };
  const client = new FakeClientset({ objects: [node] });
  client.prependReactor('create', 'tokenreviews', (a) => ({ handled: true, result: { ...(a.object as object), status: { authenticated: false } } }));
  client.prependReactor('create', 'subjectaccessreviews', (a) => ({ handled: true, result: { ...(a.object as object), status: { allowed: (a.object as { spec: { user: string } }).spec.user === 'proxied-alice' } } }));
  ms = createMetricsServer({
    client, tls: { cert: serving.certPem, key: serving.keyPem }, bindAddress: '127.0.0.1', securePort: 0, resolutionMs: 10_000, kubeletPort,
    kubeletClient: httpsKubeletClient({ ca: caPem, token: () => 'sa-token' }),
    requestHeader: { clientCA: proxyCaPem, allowedNames: ['front-proxy-client'] }, clientCA: caPem,
  });
  void ms.run(ac.signal);
  port = await ms.port;
  await ms.ready;
});
after(async () => {
  ac.abort();
  kubelet.closeAllConnections(); await new Promise((r) => kubelet.close(r));
  await rm(dir, { recursive: true, force: true });
});

const get = (path: string, o: { cert?: { certPem: string; keyPem: string }; headers?: Record<string, string> } = {}) => new Promise<{ code: number; body: string }>((resolve, reject) => {
  const req = request({ host: '127.0.0.1', port, path, ca: caPem, agent: false, ...(o.cert ? { cert: o.cert.certPem, key: o.cert.keyPem } : {}), headers: o.headers ?? {} }, (res) => {
    let body = ''; res.on('data', (c: Buffer) => { body += String(c); }); res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
  });
  req.on('error', reject); req.end();
});

test('the kubelet is scraped over verified TLS with the bearer token', async () => {
  await ms.tick(ac.signal);
  assert.ok(tokens.includes('Bearer sa-token'), JSON.stringify(tokens));
  assert.ok(ms.storage.points().node >= 0);
  // a kubelet whose certificate the CA did not sign is refused
  const other = httpsKubeletClient({ ca: proxyCaPem, token: () => 'sa-token' });
  await assert.rejects(other.getResourceMetrics({ node: 'n1', address: '127.0.0.1', port: kubeletPort }, AbortSignal.timeout(5000)), /certificate|self.signed|unable to verify/i);
});

test('the front proxy identifies the user; health is anonymous; a rejected token is 401', async () => {
  assert.equal((await get('/livez')).code, 200);
  const proxied = await get('/apis/metrics.k8s.io/v1beta1/nodes', { cert: proxy, headers: { 'X-Remote-User': 'proxied-alice', 'X-Remote-Group': 'system:authenticated' } });
  assert.equal(proxied.code, 200, proxied.body);
  assert.equal(JSON.parse(proxied.body).kind, 'NodeMetricsList');
  // without the proxy certificate the header is no identity: anonymous, and denied
  assert.equal((await get('/apis/metrics.k8s.io/v1beta1/nodes', { headers: { 'X-Remote-User': 'proxied-alice' } })).code, 403);
  assert.equal((await get('/apis/metrics.k8s.io/v1beta1/nodes', { headers: { authorization: 'Bearer nope' } })).code, 401);
});
