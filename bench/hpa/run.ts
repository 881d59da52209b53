/**
 * bench/hpa: the HorizontalPodAutoscaler controller's reconcile cost per HPA, against a real
 * apiserver (own process) on a 3-member etcd, as a ratio to the raw floor measured in the same run.
 *
 * BENCH_HPAS (200) HPAs, each over its own Deployment with 2 Running/Ready pods (100m cpu request);
 * metrics come from a FakeMetricsClient (no metrics-server here): the cost measured is the
 * controller's own (informer reads, scale GET, calculation, status write, scale write).
 * - steady sync (metrics at target: no rescale, no status change): reconcile of every HPA, 5 in
 *   flight (the controller's workers) ÷ floor: GET /scale of every Deployment by a plain client,
 *   5 in flight — the one API call a steady sync cannot avoid.           goal ≥ 0.8 of the floor
 * - rescale sync (metrics at 2× target): reconcile of every HPA (scale patch + status write + event)
 *   ÷ floor: GET /scale + PATCH /scale + PUT /status per HPA by a plain client, 5 in flight.
 *                                                                         goal ≥ 0.7 of the floor
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Deployments, HorizontalPodAutoscalers, Namespaces, Pods, type KubeObject } from '@mk8s/api';
import { createClientset, createEventRecorder, newInformerFactory } from '@mk8s/client';
import { realClock, silentLogger } from '@mk8s/component-base';
import { startEtcdCluster } from '@mk8s/apiserver/testing';
import { FakeMetricsClient, HorizontalController, type PodMetricsInfo } from '@mk8s/controller-manager';
import { fmt, printHeader, printRow, runConcurrent } from '../lib.js';

const HPAS = Number(process.env['BENCH_HPAS'] ?? 200);
const IN_FLIGHT = 5;
const ROOT = process.env['MK8S_ROOT'] ?? new URL('../..', import.meta.url).pathname;
const NS = 'hpa';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
  });
}

async function startApiServer(etcd: string[]): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'apiserver/src/main.ts'),
    '--etcd-servers', etcd.join(','), '--port', String(port), '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'], cwd: ROOT });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try { if ((await fetch(`${url}/readyz`)).ok) return { url, proc }; } catch { /* not yet */ }
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error('apiserver did not become ready');
    await new Promise((r) => setTimeout(r, 200));
  }
}

const name = (i: number) => `d-${i}`;

async function main(): Promise<void> {
  const etcd = await startEtcdCluster({ members: 3 });
  const api = await startApiServer(etcd.endpoints);
  const client = createClientset({ server: api.url, qps: 0 });
  const ac = new AbortController();
  try {
    await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const started = new Date(Date.now() - 3_600_000).toISOString();
    await runConcurrent(HPAS, 16, async (i) => {
      const labels = { app: name(i) };
      await client.resource(Deployments, NS).create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: name(i) },
        spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } } as KubeObject);
      for (const p of [0, 1]) {
        const pod = await client.resource(Pods, NS).create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${name(i)}-${p}`, labels },
          spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }] } } as KubeObject);
        await client.resource(Pods, NS).updateStatus({ ...pod, status: { phase: 'Running', startTime: started, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: started }] } } as KubeObject);
      }
      await client.resource(HorizontalPodAutoscalers, NS).create({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: name(i) },
        spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: name(i) }, minReplicas: 1, maxReplicas: 100,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] } } as KubeObject);
    });

    const metrics = new FakeMetricsClient();
    const setUsage = (milli: number) => {
      const m: PodMetricsInfo = new Map();
      for (let i = 0; i < HPAS; i++) for (const p of [0, 1]) m.set(`${name(i)}-${p}`, { value: milli, timestampMs: Date.now(), windowMs: 15_000 });
      metrics.resources.set('cpu', m);
    };
    const cmClient = createClientset({ server: api.url, qps: 0 });
    const informers = newInformerFactory({ client: cmClient, logger: silentLogger() });
    const recorder = createEventRecorder({ client: cmClient, component: 'horizontal-pod-autoscaler' });
    const c = new HorizontalController({ client: cmClient, informers, logger: silentLogger(), clock: realClock, recorder }, { metrics });
    informers.start(ac.signal);
    await informers.waitForCacheSync(ac.signal);
    const keys = Array.from({ length: HPAS }, (_, i) => `${NS}/${name(i)}`);
    const reconcileAll = () => runConcurrent(HPAS, IN_FLIGHT, async (i) => { await c.reconcile(keys[i]!, ac.signal); });

    // Warm-up pass: first status write of every HPA (conditions), metrics at target.
    setUsage(50);
    await reconcileAll();
    await new Promise((r) => setTimeout(r, 1000)); // let the informer catch our status writes
    const steady = await reconcileAll();
    const scaleFloor = await runConcurrent(HPAS, IN_FLIGHT, async (i) => { await client.resource(Deployments, NS).getSubresource(name(i), 'scale'); });

    setUsage(100);
    const rescale = await reconcileAll();
    const d0 = await client.resource<KubeObject & { spec: { replicas: number } }>(Deployments, NS).get(name(0));
    const writeFloor = await runConcurrent(HPAS, IN_FLIGHT, async (i) => {
      const d = client.resource(Deployments, NS);
      const s = await d.getSubresource(name(i), 'scale') as { spec: { replicas: number } };
      await d.patch(name(i), 'merge', { spec: { replicas: s.spec.replicas + 1 } }, { subresource: 'scale' });
      const h = await client.resource(HorizontalPodAutoscalers, NS).get(name(i));
      await client.resource(HorizontalPodAutoscalers, NS).updateStatus({ ...h, status: { ...(h['status'] as object), desiredReplicas: 9 } } as KubeObject);
    });

    const per = (ms: number) => ms / HPAS;
    printHeader(`hpa: reconcile cost per HPA, ${HPAS} HPAs, ${IN_FLIGHT} in flight`);
    printRow('steady sync ms/HPA (no write)', fmt(per(steady.elapsedMs)), fmt(per(scaleFloor.elapsedMs)), fmt(scaleFloor.elapsedMs / steady.elapsedMs), '≥ 0.8');
    printRow('rescale sync ms/HPA (scale+status)', fmt(per(rescale.elapsedMs)), fmt(per(writeFloor.elapsedMs)), fmt(writeFloor.elapsedMs / rescale.elapsedMs), '≥ 0.7');
    console.log(`(check: ${name(0)} rescaled from 2 to ${d0.spec.replicas} replicas by the controller; metrics calls ${metrics.calls})`);
  } finally {
    ac.abort();
    api.proc.kill('SIGTERM');
    await etcd.stop();
  }
}

main().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
