/**
 * Storage: claim → Bound → pod Running p50/p99 for a pod with a claim of the default class
 * (`standard`: local-path, WaitForFirstConsumer) ÷ the same pod with an emptyDir, measured in
 * the same run in alternating rounds (BENCH_ROUNDS, default 9). Then a burst (BENCH_BURST, default
 * 100) of claims with one pod each, created at once: time until every claim is Bound and every pod
 * Running ÷ the same burst of emptyDir pods until Running. t0 is the claim's create call (the pod's
 * follows at once); "Bound"/"Running" are stamped when a watch delivers them. Prints figures;
 * asserts nothing.
 *
 * Run (cluster from `make up`): node --conditions=@mk8s/source --import tsx bench/storage/run.ts
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createClientset } from '@mk8s/client';
import { Namespaces, PersistentVolumeClaims, PersistentVolumes, Pods, ServiceAccounts, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import { fmt, printHeader, printRow, summarize } from '../lib.js';

const ROOT = join(import.meta.dirname, '..', '..');
const client = createClientset({ kubeconfig: process.env['KUBECONFIG'] ?? join(ROOT, '.mk8s', 'kubeconfig'), userAgent: 'bench-storage', qps: 0 });
const ns = `bench-storage-${Date.now().toString(36)}`;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 9);
const BURST = Number(process.env['BENCH_BURST'] ?? 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Obj = KubeObject & { status?: { phase?: string; containerStatuses?: { state?: { running?: unknown } }[] }; spec?: { volumeName?: string } };

/** Stamps (performance.now) the first time a watch on the namespace delivers an object matching done(). */
class Stamps {
  readonly at = new Map<string, number>();
  private readonly ac = new AbortController();
  private rv = '';
  constructor(private readonly r: ResourceDescriptor, private readonly done: (o: Obj) => boolean) {}
  async start(): Promise<void> { this.rv = (await client.resource<Obj>(this.r, ns).list()).metadata?.resourceVersion ?? ''; void this.loop(); }
  stop(): void { this.ac.abort(); }
  private async loop(): Promise<void> {
    while (!this.ac.signal.aborted) {
      try {
        for await (const ev of client.resource<Obj>(this.r, ns).watch({ resourceVersion: this.rv, signal: this.ac.signal })) {
          const now = performance.now();
          if (ev.object.metadata.resourceVersion) this.rv = ev.object.metadata.resourceVersion;
          if (ev.type !== 'DELETED' && !this.at.has(ev.object.metadata.name) && this.done(ev.object)) this.at.set(ev.object.metadata.name, now);
        }
      } catch {
        if (this.ac.signal.aborted) return;
        await sleep(100);
      }
    }
  }
  async wait(names: string[], timeoutMs = 600_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (names.some((n) => !this.at.has(n))) {
      if (Date.now() > deadline) throw new Error(`${this.r.resource}: only ${names.filter((n) => this.at.has(n)).length}/${names.length} done in time`);
      await sleep(20);
    }
  }
}

const running = new Stamps(Pods, (p) => p.status?.phase === 'Running' && !!p.status.containerStatuses?.length && p.status.containerStatuses.every((c) => c.state?.running));
const bound = new Stamps(PersistentVolumeClaims, (c) => c.status?.phase === 'Bound');

const pod = (name: string, volume: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns },
  spec: {
    automountServiceAccountToken: false, terminationGracePeriodSeconds: 0,
    containers: [{ name: 'c', image: 'busybox:latest', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', ...volume }],
  },
});
const claim = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } } });

/** Creates n pods (with a claim each, or an emptyDir) at once; per-pod ms from its first create to Running (and Bound). */
async function burst(prefix: string, n: number, withClaim: boolean): Promise<{ runMs: number[]; boundMs: number[]; allRunningMs: number; allBoundMs: number }> {
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const t0 = new Map<string, number>();
  const start = performance.now();
  await Promise.all(names.map(async (name) => {
    t0.set(name, performance.now());
    if (withClaim) await client.resource(PersistentVolumeClaims, ns).create(claim(name));
    await client.resource(Pods, ns).create(pod(name, withClaim ? { persistentVolumeClaim: { claimName: name } } : { emptyDir: {} }));
  }));
  await running.wait(names);
  if (withClaim) await bound.wait(names);
  const runMs = names.map((x) => running.at.get(x)! - t0.get(x)!);
  const boundMs = withClaim ? names.map((x) => bound.at.get(x)! - t0.get(x)!) : [];
  return { runMs, boundMs, allRunningMs: Math.max(...names.map((x) => running.at.get(x)!)) - start, allBoundMs: withClaim ? Math.max(...names.map((x) => bound.at.get(x)!)) - start : 0 };
}

/** The PVs bound to the claims of names (read before the claims go). */
async function volumesOf(names: string[]): Promise<string[]> {
  const items = (await client.resource<Obj>(PersistentVolumeClaims, ns).list()).items;
  return items.filter((c) => names.includes(c.metadata.name)).map((c) => c.spec?.volumeName ?? '').filter(Boolean);
}

/**
 * Deletes the pods and claims of a round and waits until the pods are gone (their containers too)
 * and the claims' PVs are deleted (the provisioner's helper pods have removed the directories), so
 * no round runs beside the previous one's clean-up. Returns ms until the PVs were gone.
 */
async function cleanup(names: string[]): Promise<number> {
  const pvs = await volumesOf(names);
  const start = performance.now();
  await Promise.all(names.map((n) => client.resource(Pods, ns).delete(n, { gracePeriodSeconds: 0 }).catch(() => undefined)));
  await Promise.all(names.map((n) => client.resource(PersistentVolumeClaims, ns).delete(n).catch(() => undefined)));
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    const left = (await client.resource(Pods, ns).list()).items.length + (await client.resource(PersistentVolumeClaims, ns).list()).items.length
      + (pvs.length ? (await client.resource<Obj>(PersistentVolumes).list()).items.filter((v) => pvs.includes(v.metadata.name)).length : 0);
    if (left === 0) return performance.now() - start;
    await sleep(100);
  }
  throw new Error(`clean-up of ${names.length} pods/claims/volumes not done in 300 s`);
}

async function main(): Promise<void> {
  await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (let i = 0; i < 150; i++) { try { await client.resource(ServiceAccounts, ns).get('default'); break; } catch { await sleep(200); } }
  await running.start(); await bound.start();
  const load0 = loadavg()[0]!;
  // Warm-up: one of each (images, first provisioning on each node).
  await burst('warm-c', 2, true); await burst('warm-e', 2, false);
  await cleanup(['warm-c-0', 'warm-c-1', 'warm-e-0', 'warm-e-1']);
  const claimRun: number[] = [], claimBound: number[] = [], emptyRun: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? [true, false] : [false, true];
    for (const withClaim of order) {
      const name = `${withClaim ? 'c' : 'e'}${r}`;
      const res = await burst(name, 1, withClaim);
      if (withClaim) { claimRun.push(res.runMs[0]!); claimBound.push(res.boundMs[0]!); } else emptyRun.push(res.runMs[0]!);
      await cleanup([`${name}-0`]);
    }
  }
  const c = summarize(claimRun), b = summarize(claimBound), e = summarize(emptyRun);
  printHeader(`storage: ${ROUNDS} rounds, one pod with a claim (default class) vs one with an emptyDir (load ${fmt(load0, 1)} → ${fmt(loadavg()[0]!, 1)})`);
  printRow('claim → pod Running p50 (ms)', fmt(c.p50, 0), fmt(e.p50, 0), `${fmt(c.p50 / e.p50)}x`, '≤ 1.3×');
  printRow('claim → pod Running p99 (ms)', fmt(c.p99, 0), fmt(e.p99, 0), `${fmt(c.p99 / e.p99)}x`, '≤ 1.3×');
  printRow('  of which claim → Bound p50 (ms)', fmt(b.p50, 0), '-', '', '(diagnostic)');
  if (BURST > 0) {
    const cb = await burst('bc', BURST, true);
    const deleteMs = await cleanup(Array.from({ length: BURST }, (_, i) => `bc-${i}`));
    const eb = await burst('be', BURST, false);
    await cleanup(Array.from({ length: BURST }, (_, i) => `be-${i}`));
    printHeader(`storage: ${BURST} claims (one pod each) at once vs ${BURST} emptyDir pods at once (load now ${fmt(loadavg()[0]!, 1)})`);
    printRow(`all ${BURST} claims Bound (ms)`, fmt(cb.allBoundMs, 0), '-', '', '(reported)');
    printRow(`all ${BURST} pods Running (ms)`, fmt(cb.allRunningMs, 0), fmt(eb.allRunningMs, 0), `${fmt(cb.allRunningMs / eb.allRunningMs)}x`, '(reported)');
    printRow('per-pod Running p50 (ms)', fmt(summarize(cb.runMs).p50, 0), fmt(summarize(eb.runMs).p50, 0), `${fmt(summarize(cb.runMs).p50 / summarize(eb.runMs).p50)}x`, '(reported)');
    printRow('per-pod Running p99 (ms)', fmt(summarize(cb.runMs).p99, 0), fmt(summarize(eb.runMs).p99, 0), `${fmt(summarize(cb.runMs).p99 / summarize(eb.runMs).p99)}x`, '(reported)');
    printRow('per-claim Bound p99 (ms)', fmt(summarize(cb.boundMs).p99, 0), '-', '', '(reported)');
    printRow(`delete ${BURST} pods + claims → PVs and directories gone (ms)`, fmt(deleteMs, 0), '-', '', '(reported)');
  }
  running.stop(); bound.stop();
  await client.resource(Namespaces).delete(ns).catch(() => undefined);
}

main().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
