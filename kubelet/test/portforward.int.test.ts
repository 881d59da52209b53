/**
 * `kubectl port-forward` end to end without Docker: the real kubectl → the apiserver's
 * pods/portforward relay → a kubelet API serving the real port-forward handler, whose dialer
 * points the pod's port at a local HTTP server. Both transports kubectl 1.32 speaks are covered:
 * SPDY tunnelled in WebSocket (the default) and the raw `Upgrade: SPDY/3.1` fallback.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { silentLogger } from '@mk8s/component-base';
import type { Pod } from '@mk8s/api';
import { createPortForwardHandler, type PortForwardHandler } from '../src/portforward.js';

const freePort = () => new Promise<number>((resolve, reject) => {
  const s = createNetServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => { const p = (s.address() as AddressInfo).port; s.close(() => resolve(p)); });
});

describe('kubectl port-forward through the apiserver to the kubelet handler', () => {
  let srv: TestApiServer;
  let kubelet: Server;
  let app: Server;
  let handler: PortForwardHandler;
  let dir: string;
  const upgrades: string[] = [];
  const children = new Set<ChildProcess>();

  before(async () => {
    // The "pod": answers /hostname slowly enough that two requests overlap.
    app = createServer((req, res) => {
      if (req.url === '/hostname') setTimeout(() => res.end('web'), 200);
      else if (req.url === '/big') res.end(Buffer.alloc(3 << 20, 'x'));
      else if (req.url === '/upload') { let n = 0; req.on('data', (c: Buffer) => { n += c.length; }); req.on('end', () => res.end(String(n))); }
      else { res.writeHead(404); res.end(); }
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()));
    const appPort = (app.address() as AddressInfo).port;
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1' }, status: { podIP: '127.0.0.1' } } as Pod;
    handler = createPortForwardHandler({
      logger: silentLogger(),
      findPod: (ns, name) => (ns === 'default' && name === 'web' ? pod : undefined),
      // Port 8080 of the pod is the local app; anything else is refused like a closed port.
      dial: (_p, port) => connect({ host: '127.0.0.1', port: port === 8080 ? appPort : 1 }),
    });
    kubelet = createServer((_req, res) => { res.writeHead(404); res.end(); });
    kubelet.on('upgrade', (req, socket, head) => {
      upgrades.push(`${req.method} ${req.url} ${req.headers['upgrade']}`);
      handler.handleUpgrade(req, socket, head);
    });
    await new Promise<void>((r) => kubelet.listen(0, '127.0.0.1', () => r()));
    const kubeletPort = (kubelet.address() as AddressInfo).port;
    srv = await startTestApiServer({ etcdMembers: 1 });
    dir = await mkdtemp(join(tmpdir(), 'mk8s-portforward-'));
    const send = async (method: string, path: string, body: unknown, type = 'application/json') => {
      const res = await fetch(srv.url + path, { method, headers: { 'content-type': type }, body: JSON.stringify(body) });
      assert.ok(res.status < 300, await res.text());
    };
    await send('POST', '/api/v1/nodes', { metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } } });
    await send('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'web', labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'busybox', ports: [{ containerPort: 8080 }] }] } });
    await send('PATCH', '/api/v1/namespaces/default/pods/web/status', { status: { phase: 'Running' } }, 'application/merge-patch+json');
    await send('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
  });

  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    handler?.close();
    await srv?.stop();
    for (const s of [kubelet, app]) { s?.closeAllConnections(); await new Promise((r) => s?.close(r)); }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Starts kubectl port-forward and resolves once it listens. */
  const portForward = async (target: string, remotePort: number, env: NodeJS.ProcessEnv = {}) => {
    const local = await freePort();
    const child = spawn('kubectl', ['--kubeconfig', srv.kubeconfigPath, '--cache-dir', join(dir, 'cache'), 'port-forward', target, `${local}:${remotePort}`],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
    child.stderr!.on('data', (b: Buffer) => { err += b.toString(); });
    const exited = once(child, 'exit');
    const deadline = Date.now() + 30_000;
    while (!out.includes(`Forwarding from 127.0.0.1:${local}`)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`kubectl port-forward did not start: ${out}${err}`);
      await Promise.race([once(child.stdout!, 'data'), exited]);
    }
    return {
      local, child, stderr: () => err,
      stop: async () => { child.kill('SIGINT'); const [code, signal] = await exited; children.delete(child); return { code, signal }; },
    };
  };

  for (const [label, env, upgrade] of [['WebSocket tunnel', {}, 'websocket'], ['raw SPDY/3.1 fallback', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }, 'SPDY/3.1']] as const) {
    test(`forwards concurrent connections over the ${label}`, async () => {
      upgrades.length = 0;
      const pf = await portForward('pod/web', 8080, env);
      const get = async (path: string) => { const r = await fetch(`http://127.0.0.1:${pf.local}${path}`, { headers: { connection: 'close' } }); return { status: r.status, body: await r.text() }; };
      const [a, b] = await Promise.all([get('/hostname'), get('/hostname')]);
      assert.deepEqual([a, b], [{ status: 200, body: 'web' }, { status: 200, body: 'web' }]);
      const big = await get('/big');
      assert.equal(big.body.length, 3 << 20);
      const up = await fetch(`http://127.0.0.1:${pf.local}/upload`, { method: 'POST', body: Buffer.alloc(5 << 20, 'y'), headers: { connection: 'close' } });
      assert.equal(await up.text(), String(5 << 20));
      assert.ok(upgrades.length > 0 && upgrades.every((u) => u === `${upgrade === 'websocket' ? 'GET' : 'POST'} /portForward/default/web ${upgrade}`), upgrades.join('\n'));
      const { code, signal } = await pf.stop();
      assert.ok(code === 0 || signal === 'SIGINT', `exit ${code} ${signal}: ${pf.stderr()}`);
    });
  }

  test('port-forward svc/web maps the service port to the pod\'s targetPort', async () => {
    const pf = await portForward('svc/web', 80);
    const r = await fetch(`http://127.0.0.1:${pf.local}/hostname`, { headers: { connection: 'close' } });
    assert.equal(await r.text(), 'web');
    await pf.stop();
  });

  test('a refused pod port is reported on the error stream', async () => {
    const pf = await portForward('pod/web', 9999);
    await assert.rejects(fetch(`http://127.0.0.1:${pf.local}/`, { headers: { connection: 'close' } }));
    const deadline = Date.now() + 10_000;
    while (!pf.stderr().includes('error forwarding port 9999 to pod default/web')) {
      assert.ok(Date.now() < deadline, pf.stderr());
      await once(pf.child.stderr!, 'data');
    }
    if (pf.child.exitCode === null) await pf.stop();
  });
});
