/**
 * `kubectl port-forward` on the real cluster (`make up`): the real kubectl → apiserver
 * pods/portforward relay → the node's kubelet (/portForward, SPDY/3.1) → the pod's IP on the
 * node's pod network. Both kubectl transports (SPDY in WebSocket, the default; raw SPDY/3.1 with
 * KUBECTL_PORT_FORWARD_WEBSOCKETS=false), concurrent connections, svc/ targets, and a clean exit.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { KUBECONFIG, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-portforward');
const children = new Set<ChildProcess>();

const freePort = () => new Promise<number>((resolve, reject) => {
  const s = createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => { const p = (s.address() as AddressInfo).port; s.close(() => resolve(p)); });
});

/** Starts `kubectl port-forward` and resolves once it listens on a free local port. */
async function portForward(target: string, remotePort: number, env: NodeJS.ProcessEnv = {}) {
  const local = await freePort();
  const child = spawn('kubectl', ['--kubeconfig', KUBECONFIG, '-n', ns, 'port-forward', target, `${local}:${remotePort}`],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
  child.stderr!.on('data', (b: Buffer) => { out += b.toString(); });
  const exited = once(child, 'exit');
  await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`kubectl port-forward exited: ${out}`);
    return out.includes(`Forwarding from 127.0.0.1:${local}`);
  }, { timeoutMs: 60_000, what: `kubectl port-forward ${target}` }).catch((err: Error) => { throw new Error(`${err.message}\n${out}`); });
  return {
    local, output: () => out,
    get: async (path: string) => {
      const r = await fetch(`http://127.0.0.1:${local}${path}`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(30_000) });
      return { status: r.status, body: await r.text() };
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const [code, signal] = await exited as [number | null, NodeJS.Signals | null];
      children.delete(child);
      return { code, signal };
    },
  };
}

before(async () => {
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
  const manifest = `
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: mk8s/testserver:1.0
    imagePullPolicy: IfNotPresent
    ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`;
  await waitFor(() => kubectl(['-n', ns, 'apply', '-f', '-'], { input: manifest }).code === 0, { timeoutMs: 120_000, intervalMs: 1000, what: 'pod web created' });
  await waitFor(() => kubectl(['-n', ns, 'get', 'pod', 'web', '-o', 'jsonpath={.status.phase}']).stdout === 'Running', { timeoutMs: 180_000, what: 'pod web Running' });
});

after(() => {
  for (const c of children) c.kill('SIGKILL');
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

for (const [label, env] of [['SPDY tunnelled in WebSocket', {}], ['raw SPDY/3.1', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }]] as const) {
  test(`port-forward pod/web reaches the pod over ${label}, two connections at once`, async () => {
    const pf = await portForward('pod/web', 8080, env);
    const [a, b] = await Promise.all([pf.get('/hostname'), pf.get('/hostname')]);
    assert.deepEqual([a, b], [{ status: 200, body: 'web' }, { status: 200, body: 'web' }], pf.output());
    const echo = await pf.get('/echo?msg=through-the-tunnel');
    assert.equal(echo.body, 'through-the-tunnel');
    const { code, signal } = await pf.stop();
    // kubectl handles SIGTERM by closing its listeners and exiting.
    assert.ok(code === 0 || signal === 'SIGTERM', `exit ${code} ${signal}: ${pf.output()}`);
    assert.doesNotMatch(pf.output(), /error|lost connection/i);
  });
}

test('port-forward svc/web maps service port 80 to the pod\'s 8080', async () => {
  const pf = await portForward('svc/web', 80);
  assert.deepEqual(await pf.get('/hostname'), { status: 200, body: 'web' });
  await pf.stop();
});

test('a port nothing listens on is reported by kubectl', async () => {
  const pf = await portForward('pod/web', 9, {});
  await assert.rejects(pf.get('/'));
  await waitFor(() => /error forwarding port 9 to pod/.test(pf.output()), { timeoutMs: 30_000, what: 'the forwarding error' });
  await pf.stop();
});
