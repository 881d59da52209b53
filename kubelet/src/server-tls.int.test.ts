/**
 * The kubelet API over HTTPS with the cluster PKI: every path and method walked (anonymous, a forged token and a
 * certificate of another CA 401; a node certificate and a ServiceAccount token without permission 403),
 * the apiserver's kubelet-client identity allowed, another node's identity 403 (through the
 * authorizer, as the SubjectAccessReview would answer), and log/exec paths that try to leave the
 * pod's containers refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { newRegistry, silentLogger } from '@mk8s/component-base';
import { ensureCa, ensurePki, issueCertificate, type PkiPaths } from '@mk8s/component-base/pki';
import { FakeRuntimeService } from '@mk8s/proto/testing';
import type { Pod } from '@mk8s/api';
import { serveKubelet } from './server.js';
import { newKubeletMetrics } from './metrics.js';
import { requestAttributes, type KubeletRequestAttributes, type KubeletUser } from './server-auth.js';

interface Creds { cert?: string; key?: string }

describe('kubelet API over TLS', () => {
  let dir: string;
  let pki: PkiPaths;
  let ca: string;
  let srv: Awaited<ReturnType<typeof serveKubelet>>;
  const registry = newRegistry();
  const asked: [KubeletUser, KubeletRequestAttributes][] = [];
  const creds: Record<string, Creds> = {};

  const get = (path: string, who: Creds & { token?: string }, method = 'GET'): Promise<{ code: number; body: string }> => new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port: srv.port, path, method, ca, ...(who.cert ? { cert: who.cert, key: who.key } : {}),
      ...(who.token ? { headers: { authorization: `Bearer ${who.token}` } } : {}) }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    });
    r.on('error', reject);
    r.end();
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mk8s-kubelet-tls-'));
    pki = await ensurePki(join(dir, 'pki'), { nodes: ['node-1', 'node-2'], nodeIPs: { 'node-1': ['127.0.0.1'] } });
    ca = await readFile(pki.ca.cert, 'utf8');
    const read = async (p: { cert: string; key: string }) => ({ cert: await readFile(p.cert, 'utf8'), key: await readFile(p.key, 'utf8') });
    creds['apiserver'] = await read(pki.apiserverKubeletClient);
    creds['node-2'] = await read(pki.kubelets['node-2']!.client);
    // A certificate with a trusted-looking name from a CA the kubelet does not trust.
    const rogue = await ensureCa({ cert: join(dir, 'rogue.crt'), key: join(dir, 'rogue.key') });
    const forged = await issueCertificate(rogue, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usage: 'client' });
    creds['rogue'] = { cert: forged.certPem, key: forged.keyPem };

    const rt = new FakeRuntimeService();
    const sbCfg = { metadata: { name: 'web', namespace: 'default', uid: 'u1', attempt: 0 }, labels: { 'io.kubernetes.pod.uid': 'u1' } };
    const sb = await rt.runPodSandbox(sbCfg);
    const id = await rt.createContainer(sb, { metadata: { name: 'app', attempt: 0 }, image: { image: 'busybox:latest' },
      labels: { 'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.container.name': 'app' } }, sbCfg);
    await rt.startContainer(id);
    rt.appendLog(id, 'stdout', 'hello from app\n');
    const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'busybox' }] } } as Pod;
    const serving = await read(pki.kubelets['node-1']!.serving);
    rt.sandboxNetwork.set(sb, { rxBytes: 1234, txBytes: 567 });
    newKubeletMetrics(registry, 'node-1').observeRelist({ startMs: 0, durationMs: 12, sandboxes: await rt.listPodSandbox(), containers: await rt.listContainers() });
    srv = await serveKubelet({
      port: 0, host: '127.0.0.1', runtime: rt, logger: silentLogger(), nodeName: 'node-1',
      pods: () => [pod],
      podRuntime: async (uid) => ({ sandboxes: [], containers: uid === 'u1' ? [await rt.containerStatus(id)] : [] }),
      registry,
      tls: { cert: serving.cert, key: serving.key, clientCA: ca },
      auth: {
        // What the apiserver's SubjectAccessReview answers: system:masters may, a node may not proxy to another node.
        authorize: async (user, attrs) => { asked.push([user, attrs]); return { allowed: user.groups.includes('system:masters') }; },
        // What the apiserver's TokenReview answers: one ServiceAccount token is valid.
        authenticateToken: async (token) => (token === 'sa-token' ? { name: 'system:serviceaccount:default:reader', groups: ['system:serviceaccounts', 'system:authenticated'] } : undefined),
      },
    });
  });
  after(async () => { await srv?.close(); await rm(dir, { recursive: true, force: true }); });

  test('anonymous requests get 401 on every path, /healthz included', async () => {
    for (const path of ['/healthz', '/pods', '/containerLogs/default/web/app', '/stats/summary']) {
      const r = await get(path, {});
      assert.equal(r.code, 401, path);
      assert.equal(JSON.parse(r.body).reason, 'Unauthorized');
    }
  });

  // Every path the kubelet serves (and some it does not), with every method: no caller without an
  // identity gets past 401, none without the SubjectAccessReview's yes past 403.
  const PATHS = ['/healthz', '/healthz/ping', '/pods', '/pods/', '/runningpods/', '/containerLogs/default/web/app', '/stats', '/stats/summary',
    '/metrics', '/metrics/resource', '/metrics/cadvisor', '/metrics/probes', '/logs/', '/logs/syslog', '/spec/', '/configz', '/debug/pprof/',
    '/checkpoint/default/web/app', '/run/default/web/app', '/exec/default/web/app', '/attach/default/web/app', '/portForward/default/web', '/no-such-path', '/'];
  const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  test('every path × method: anonymous and invalid tokens 401, valid identities without permission 403 (with the upstream subresource)', async () => {
    let checked = 0;
    for (const path of PATHS) {
      for (const method of METHODS) {
        for (const who of [{}, { token: 'forged-token' }, creds['rogue']!]) {
          const r = await get(path, who, method);
          assert.equal(r.code, 401, `${method} ${path} as ${JSON.stringify(Object.keys(who))}: ${r.body}`);
          assert.equal(JSON.parse(r.body).reason, 'Unauthorized');
        }
        for (const [who, name] of [[creds['node-2']!, 'system:node:node-2'], [{ token: 'sa-token' }, 'system:serviceaccount:default:reader']] as const) {
          const n = asked.length;
          const r = await get(path, who, method);
          assert.equal(r.code, 403, `${method} ${path} as ${name}: ${r.body}`);
          const sub = requestAttributes('node-1', method, path).subresource;
          assert.equal(JSON.parse(r.body).message, `Forbidden (user=${name}, verb=${requestAttributes('node-1', method, path).verb}, resource=nodes, subresource=${sub})`);
          assert.equal(asked.length, n + 1, 'the authorizer was asked');
          checked++;
        }
      }
    }
    assert.equal(checked, PATHS.length * METHODS.length * 2);
    // The subresources of upstream's mapping all occur.
    assert.deepEqual([...new Set(PATHS.map((p) => requestAttributes('node-1', 'GET', p).subresource))].sort(), ['checkpoint', 'log', 'metrics', 'proxy', 'spec', 'stats']);
  });

  test('/metrics and /metrics/cadvisor answer an identity allowed nodes/metrics, with the kubelet and cAdvisor series', async () => {
    const m = await get('/metrics', creds['apiserver']!);
    assert.equal(m.code, 200);
    assert.deepEqual(asked.at(-1)![1], { verb: 'get', resource: 'nodes', subresource: 'metrics', name: 'node-1' });
    assert.match(m.body, /^kubelet_running_pods 1$/m);
    assert.match(m.body, /^kubelet_running_containers\{container_state="running"\} 1$/m);
    assert.match(m.body, /^kubelet_pleg_relist_duration_seconds_count 1$/m);
    assert.match(m.body, /^process_resident_memory_bytes /m);
    const c = await get('/metrics/cadvisor', creds['apiserver']!);
    assert.equal(c.code, 200);
    assert.match(c.body, /^container_cpu_usage_seconds_total\{container="app",id="\/[^"]+",image="busybox",name="[^"]+",namespace="default",pod="web"\} \d/m);
    assert.match(c.body, /^container_memory_working_set_bytes\{container="app",.*pod="web"\} \d+$/m);
    assert.match(c.body, /^container_network_receive_bytes_total\{container="",.*namespace="default",pod="web",interface="eth0"\} 1234$/m);
    assert.match(c.body, /^container_network_transmit_bytes_total\{container="",.*interface="eth0"\} 567$/m);
  });

  test('an identity the authorizer allows gets through (/healthz is authorized too, as nodes/proxy)', async () => {
    const r = await get('/healthz', creds['apiserver']!);
    assert.equal(r.code, 200);
    assert.deepEqual(asked.at(-1)![1], { verb: 'get', resource: 'nodes', subresource: 'proxy', name: 'node-1' });
  });

  test('a certificate from another CA is not an identity (401)', async () => {
    assert.equal((await get('/pods', creds['rogue']!)).code, 401);
  });

  test("the apiserver's kubelet-client certificate reads logs", async () => {
    const r = await get('/containerLogs/default/web/app', creds['apiserver']!);
    assert.equal(r.code, 200);
    assert.equal(r.body, 'hello from app\n');
    const [user, attrs] = asked.at(-1)!;
    assert.deepEqual(user, { name: 'kube-apiserver-kubelet-client', groups: ['system:masters'] });
    assert.deepEqual(attrs, { verb: 'get', resource: 'nodes', subresource: 'proxy', name: 'node-1' });
  });

  test("another node's certificate is forbidden, in the kubelet's words", async () => {
    const r = await get('/stats/summary', creds['node-2']!);
    assert.equal(r.code, 403);
    assert.equal(JSON.parse(r.body).message, 'Forbidden (user=system:node:node-2, verb=get, resource=nodes, subresource=stats)');
  });

  test('log paths cannot leave the pod\'s containers', async () => {
    for (const path of ['/containerLogs/default/web/..%2F..%2Fetc%2Fpasswd', '/containerLogs/default/web/../../etc/passwd',
      '/containerLogs/default/..%2Fweb/app', '/containerLogs/kube-system/web/app', '/containerLogs/default/web/app/..%2F..', '/logs/../etc/passwd']) {
      const r = await get(path, creds['apiserver']!);
      assert.ok(r.code === 400 || r.code === 404, `${path}: ${r.code} ${r.body}`);
      assert.ok(!r.body.includes('root:'), path);
    }
  });

  test('exec upgrades are authenticated and authorized before any routing', async () => {
    const open = (path: string, who: Creds) => new Promise<number>((resolve) => {
      const ws = new WebSocket(`wss://127.0.0.1:${srv.port}${path}`, ['v5.channel.k8s.io'], { ca, ...(who.cert ? { cert: who.cert, key: who.key } : {}) });
      ws.on('open', () => { ws.close(); resolve(101); });
      ws.on('unexpected-response', (_req, res) => { res.resume(); resolve(res.statusCode ?? 0); });
      ws.on('error', () => resolve(-1));
    });
    assert.equal(await open('/exec/default/web/app?command=id&stdout=1', {}), 401);
    for (const path of ['/attach/default/web/app?stdout=1', '/portForward/default/web?ports=80', '/exec/default/web/app?command=id']) {
      assert.equal(await open(path, {}), 401, path);
      assert.equal(await open(path, creds['rogue']!), 401, path);
      assert.equal(await open(path, creds['node-2']!), 403, path);
    }
    assert.equal(await open('/exec/default/web/app?command=id&stdout=1', creds['node-2']!), 403);
    assert.equal(await open('/exec/default/web/..%2F..%2Fapp?command=id&stdout=1', creds['apiserver']!), 400);
    assert.equal(await open('/exec/default/web/app?command=id&stdout=1', creds['apiserver']!), 101);
  });
});
