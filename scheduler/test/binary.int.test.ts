/** The scheduler binary as `mkctl cluster up` runs it: flags, leader election Lease, /healthz, binding. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Leases, type Lease } from '@mk8s/api';
import { createClientset, type Clientset } from '@mk8s/client';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { api, waitFor } from './helpers.js';

const ROOT = process.env['MK8S_ROOT'] ?? new URL('../..', import.meta.url).pathname;
let server: TestApiServer;
let client: Clientset;
let proc: ChildProcess | undefined;
let stderr = '';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
  });
}

before(async () => {
  server = await startTestApiServer();
  client = createClientset({ server: server.url, qps: 0 });
});
after(async () => {
  if (proc && proc.exitCode === null) {
    proc.kill('SIGTERM');
    await new Promise((r) => proc!.once('exit', r));
  }
  await server?.stop();
});

test('the binary takes the kube-scheduler Lease, serves /healthz and /metrics, and binds pods', async () => {
  const port = await freePort();
  proc = spawn(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'scheduler/src/main.ts'),
    '--kubeconfig', server.kubeconfigPath, '--health-port', String(port), '--log-level', 'warn'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  proc.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  await waitFor('healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30_000);
  const lease = await waitFor('the Lease', async () => (await client.resource(Leases, 'kube-system').get('kube-scheduler')) as unknown as Lease);
  assert.ok(lease.spec?.holderIdentity, 'holderIdentity set');

  const a = api(client, 'bin');
  await a.namespace();
  await a.node('bin-node');
  await a.pod('p', { requests: { cpu: '100m' } });
  assert.equal(await a.boundTo('p'), 'bin-node');
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  assert.match(metrics, /scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"[^}]*\} 1/);

  proc.kill('SIGTERM');
  const code = await new Promise((r) => proc!.once('exit', r));
  assert.equal(code, 0, stderr);
  // A clean stop releases the lease for a successor.
  const released = (await client.resource(Leases, 'kube-system').get('kube-scheduler')) as unknown as Lease;
  assert.equal(released.spec?.holderIdentity ?? '', '');
});
