/**
 * Leader failover: two controller-manager processes (the real binary) on one apiserver; the
 * leader is SIGKILLed (no lease release), the standby takes over within the lease duration, and
 * no pod is created twice.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { Leases, Pods, ReplicaSets, type Lease, type ReplicaSet } from '@mk8s/api';
import { createClientset, type Clientset } from '@mk8s/client';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import type { Obj } from '../src/util/meta.js';
import { createNamespace, waitFor, type PodObj } from './helpers.js';

const root = process.env['MK8S_ROOT'] ?? new URL('../..', import.meta.url).pathname;
const LEASE_MS = 3000;
let server: TestApiServer;
let client: Clientset;
const procs: ChildProcess[] = [];

interface Cm { proc: ChildProcess; log: string[]; leading(): boolean }
function startCm(): Cm {
  const proc = spawn(process.execPath, [
    '--conditions=@mk8s/source', '--import', 'tsx', 'controller-manager/src/main.ts',
    '--kubeconfig', server.kubeconfigPath, '--health-port', '0', '--controllers', 'replicaset,deployment,garbagecollector',
    '--leader-elect-lease-duration', `${LEASE_MS}ms`, '--leader-elect-renew-deadline', '2s', '--leader-elect-retry-period', '250ms',
  ], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(proc);
  const log: string[] = [];
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => log.push(...d.split('\n').filter(Boolean)));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => log.push(...d.split('\n').filter(Boolean)));
  return { proc, log, leading: () => log.some((l) => l.includes('"Started leading"')) };
}

before(async () => {
  server = await startTestApiServer();
  client = createClientset({ server: server.url, qps: 0 });
});
after(async () => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  await server?.stop();
});

test('the standby takes over within the lease duration after the leader is killed, without double creates', async () => {
  const a = startCm();
  await waitFor('a leads', () => a.leading(), 30_000);
  const b = startCm();
  await waitFor('b is up and standing by', () => b.log.some((l) => l.includes('Synced controller-manager caches')), 30_000);
  assert.equal(b.leading(), false);

  const ns = 'failover';
  await createNamespace(client, ns);
  const created = new Set<string>();
  let maxLive = 0;
  const live = new Map<string, boolean>();
  const watchAc = new AbortController();
  const watching = (async () => {
    for await (const ev of client.resource<PodObj>(Pods, ns).watch({ signal: watchAc.signal })) {
      if (ev.type === 'ADDED') created.add(ev.object.metadata.uid ?? ev.object.metadata.name);
      if (ev.type === 'DELETED') live.delete(ev.object.metadata.name); else live.set(ev.object.metadata.name, true);
      maxLive = Math.max(maxLive, live.size);
    }
  })().catch(() => undefined);

  const rss = client.resource<Obj<ReplicaSet>>(ReplicaSets, ns);
  await rss.create({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 5, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } } as Obj<ReplicaSet>);
  await waitFor('5 pods', async () => (await client.resource<PodObj>(Pods, ns).list()).items.length === 5);

  a.proc.kill('SIGKILL');
  const killedAt = Date.now();
  await rss.patch('web', 'merge', { spec: { replicas: 12 } });
  await waitFor('b leads', () => b.leading(), LEASE_MS * 4);
  const tookOver = Date.now() - killedAt;
  await waitFor('12 pods', async () => (await client.resource<PodObj>(Pods, ns).list()).items.length === 12 && (await rss.get('web')).status?.replicas === 12);
  const lease = await client.resource<Obj<Lease>>(Leases, 'kube-system').get('kube-controller-manager');
  assert.ok(lease.spec?.holderIdentity);
  watchAc.abort();
  await watching;
  assert.equal(created.size, 12, 'each pod created once');
  assert.equal(maxLive, 12);
  // acquiring waits for the lease to expire (LEASE_MS after the last renewal) plus a retry period
  assert.ok(tookOver < LEASE_MS * 2, `took over after ${tookOver} ms`);
});
