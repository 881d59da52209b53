/**
 * The scheduler against a real apiserver (3-member etcd); nodes are registered through the API,
 * no kubelet runs, as upstream's scheduler integration tests do.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PriorityClasses, Pods, type KubeObject } from '@mk8s/api';
import { createClientset, type Clientset } from '@mk8s/client';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { createScheduler, type SchedulerComponent } from '../src/index.js';
import { api, waitFor } from './helpers.js';

const ZONE = 'topology.kubernetes.io/zone';
let server: TestApiServer;
let client: Clientset;
let sched: SchedulerComponent;
const ac = new AbortController();
let running: Promise<void>;

before(async () => {
  server = await startTestApiServer();
  client = createClientset({ server: server.url, qps: 0 });
  sched = createScheduler({ client, healthPort: 0, leaderElect: false });
  running = sched.run(ac.signal);
  await sched.ready;
});
after(async () => {
  ac.abort();
  await running.catch(() => undefined);
  await server?.stop();
});

let seq = 0;
async function scenario(fn: (a: ReturnType<typeof api>, nodes: string[]) => Promise<void>) {
  const ns = `sched-${++seq}`;
  const a = api(client, ns);
  await a.namespace();
  const nodes: string[] = [];
  try { await fn(a, nodes); } finally { await a.cleanup(nodes); }
}

describe('scheduler against the apiserver', () => {
  test('serves healthz and metrics', async () => {
    const port = await sched.healthPort;
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /scheduler_pending_pods\{queue="active"/);
  });

  test('node affinity, nodeSelector, preferred affinity and taints place pods where Kubernetes would', () => scenario(async (a, nodes) => {
    nodes.push('aff-a', 'aff-b', 'aff-c');
    await a.node('aff-a', { labels: { [ZONE]: 'a', gen: '3' } });
    await a.node('aff-b', { labels: { [ZONE]: 'b', gen: '5' } });
    await a.node('aff-c', { labels: { [ZONE]: 'c', gen: '7' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
    await a.pod('in-b', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['b'] }] }] } } } });
    await a.pod('selector-a', { nodeSelector: { [ZONE]: 'a' } });
    await a.pod('gt-4', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] }] } } } });
    await a.pod('prefers-a', { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['a'] }] } }] } } });
    await a.pod('tolerates-c', { nodeSelector: { [ZONE]: 'c' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] });
    assert.equal(await a.boundTo('in-b'), 'aff-b');
    assert.equal(await a.boundTo('selector-a'), 'aff-a');
    assert.equal(await a.boundTo('gt-4'), 'aff-b'); // aff-c has gen 7 but an untolerated taint
    assert.equal(await a.boundTo('prefers-a'), 'aff-a');
    assert.equal(await a.boundTo('tolerates-c'), 'aff-c');
  }));

  test('pod anti-affinity puts one replica per node and explains the fourth', () => scenario(async (a, nodes) => {
    nodes.push('anti-1', 'anti-2', 'anti-3');
    for (const n of nodes) await a.node(n);
    const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'kubernetes.io/hostname' }] } };
    for (let i = 0; i < 4; i++) await a.pod(`db-${i}`, { labels: { app: 'db' }, affinity: anti });
    const placed = await waitFor('three db pods bound', async () => {
      const got = await Promise.all([0, 1, 2, 3].map((i) => a.nodeOf(`db-${i}`)));
      return got.filter(Boolean).length === 3 ? got : undefined;
    });
    assert.equal(new Set(placed.filter(Boolean)).size, 3);
    const pending = `db-${placed.findIndex((n) => !n)}`;
    const ev = await waitFor('FailedScheduling', async () => (await a.events(pending, 'FailedScheduling'))[0]);
    assert.equal(ev.message, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.");
  }));

  test('inter-pod affinity follows the pod it is attracted to', () => scenario(async (a, nodes) => {
    nodes.push('ipa-1', 'ipa-2', 'ipa-3');
    for (const n of nodes) await a.node(n);
    await a.pod('cache', { labels: { app: 'cache' } });
    const cacheNode = await a.boundTo('cache');
    await a.pod('web', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: 'kubernetes.io/hostname' }] } } });
    assert.equal(await a.boundTo('web'), cacheNode);
  }));

  test('topology spread keeps zones within maxSkew, and plain pods spread evenly over three nodes', () => scenario(async (a, nodes) => {
    nodes.push('ts-1', 'ts-2', 'ts-3');
    for (const [i, n] of nodes.entries()) await a.node(n, { labels: { [ZONE]: `z${i}` } });
    const spread = [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'ts' } } }];
    for (let i = 0; i < 6; i++) await a.pod(`ts-${i}`, { labels: { app: 'ts' }, topologySpreadConstraints: spread });
    for (let i = 0; i < 12; i++) await a.pod(`plain-${i}`, { requests: { cpu: '100m', memory: '64Mi' } });
    const count = async (prefix: string, n: number) => {
      const c: Record<string, number> = {};
      for (let i = 0; i < n; i++) { const node = await a.boundTo(`${prefix}-${i}`); c[node] = (c[node] ?? 0) + 1; }
      return c;
    };
    assert.deepEqual(await count('ts', 6), { 'ts-1': 2, 'ts-2': 2, 'ts-3': 2 });
    // The ts pods request nothing, so the plain pods see three equally empty nodes: 4 each.
    assert.deepEqual(await count('plain', 12), { 'ts-1': 4, 'ts-2': 4, 'ts-3': 4 });
  }));

  test('a pod that fits nowhere gets FailedScheduling and is placed as soon as a fitting node appears', () => scenario(async (a, nodes) => {
    const small = { cpu: '1', memory: '2Gi', pods: '10' };
    nodes.push('fit-1', 'fit-2', 'fit-3');
    // As the node lifecycle controller taints an unreachable node; pods get a default toleration
    // for the NoExecute one (DefaultTolerationSeconds), not for NoSchedule.
    await a.node('fit-1', { allocatable: small, taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] });
    await a.node('fit-2', { allocatable: small });
    await a.node('fit-3', { allocatable: small });
    await a.pod('big', { requests: { cpu: '2' } });
    const msg = '0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient cpu. '
      + 'preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.';
    const ev = await waitFor('FailedScheduling', async () => (await a.events('big', 'FailedScheduling'))[0]);
    assert.equal(ev.message, msg);
    assert.equal(ev.type, 'Warning');
    const cond = await waitFor('PodScheduled=False', async () => (await a.get('big')).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'));
    assert.deepEqual([cond.reason, cond.message], ['Unschedulable', msg]);
    const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', server.kubeconfigPath, 'describe', 'pod', 'big', '-n', `sched-${seq}`]);
    assert.match(stdout, /Warning\s+FailedScheduling\s+.*default-scheduler\s+0\/3 nodes are available/);

    nodes.push('fit-4');
    await a.node('fit-4', { allocatable: { cpu: '4', memory: '8Gi', pods: '10' } });
    assert.equal(await a.boundTo('big'), 'fit-4');
  }));

  test('a high-priority pod preempts a lower one and takes its place', () => scenario(async (a, nodes) => {
    const pcs = client.resource(PriorityClasses);
    await pcs.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'it-low' }, value: 10 } as KubeObject);
    await pcs.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'it-high' }, value: 1000 } as KubeObject);
    try {
      nodes.push('pre-1');
      await a.node('pre-1', { allocatable: { cpu: '2', memory: '4Gi', pods: '10' } });
      await a.pod('victim', { priorityClassName: 'it-low', requests: { cpu: '1500m' } });
      assert.equal(await a.boundTo('victim'), 'pre-1');
      await a.pod('vip', { priorityClassName: 'it-high', requests: { cpu: '1' } });
      await waitFor('victim terminating', async () => {
        try { return Boolean((await a.get('victim')).metadata.deletionTimestamp); } catch { return true; }
      });
      assert.equal(await waitFor('nominatedNodeName', async () => (await a.get('vip')).status?.nominatedNodeName), 'pre-1');
      await waitFor('Preempted event', async () => (await a.events('victim', 'Preempted'))[0]);
      await a.forceDelete('victim'); // no kubelet here to finish the graceful deletion
      assert.equal(await a.boundTo('vip'), 'pre-1');
    } finally {
      await pcs.delete('it-low').catch(() => undefined);
      await pcs.delete('it-high').catch(() => undefined);
    }
  }));

  test('two schedulers running at once never bind a pod twice', () => scenario(async (a, nodes) => {
    const second = createScheduler({ client: createClientset({ server: server.url, qps: 0 }), healthPort: -1, leaderElect: false });
    const ac2 = new AbortController();
    const run2 = second.run(ac2.signal);
    try {
      await second.ready;
      nodes.push('two-1', 'two-2', 'two-3');
      for (const n of nodes) await a.node(n);
      const ns = `sched-${seq}`;
      const changes: string[] = [];
      const wac = new AbortController();
      const watching = (async () => {
        const seen = new Map<string, string>();
        for await (const ev of client.resource(Pods, ns).watch({ signal: wac.signal })) {
          const p = ev.object as { metadata: { name: string }; spec?: { nodeName?: string } };
          const prev = seen.get(p.metadata.name);
          const now = p.spec?.nodeName;
          if (prev && now !== prev) changes.push(`${p.metadata.name}: ${prev} -> ${now ?? ''}`);
          if (now) seen.set(p.metadata.name, now);
        }
      })().catch(() => undefined);
      const n = 40;
      for (let i = 0; i < n; i++) await a.pod(`p-${i}`, { requests: { cpu: '10m' } });
      for (let i = 0; i < n; i++) await a.boundTo(`p-${i}`);
      const perPod = await Promise.all(Array.from({ length: n }, async (_, i) => (await a.events(`p-${i}`, 'Scheduled')).length));
      wac.abort();
      await watching;
      assert.deepEqual(changes, []);
      assert.ok(perPod.every((c) => c === 1), `Scheduled events per pod: ${perPod.join(',')}`);
    } finally {
      ac2.abort();
      await run2.catch(() => undefined);
    }
  }));

  test('with leader election only the lease holder schedules, and a standby takes over', () => scenario(async (a, nodes) => {
    const le = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 300, name: `kube-scheduler-it-${seq}` };
    const mk = (id: string) => createScheduler({ client: createClientset({ server: server.url, qps: 0 }), healthPort: -1, identity: id, leaderElection: le, profile: { schedulerName: 'le-scheduler' } });
    const s1 = mk('one'); const s2 = mk('two');
    const ac1 = new AbortController(); const ac2 = new AbortController();
    const r1 = s1.run(ac1.signal).catch(() => undefined); const r2 = s2.run(ac2.signal).catch(() => undefined);
    try {
      nodes.push('le-1');
      await a.node('le-1');
      const leader = await waitFor('a leader', () => (s1.isLeader() ? s1 : s2.isLeader() ? s2 : undefined));
      const standby = leader === s1 ? s2 : s1;
      assert.equal(standby.isLeader(), false);
      await a.pod('first', { schedulerName: 'le-scheduler' });
      await a.boundTo('first');
      (leader === s1 ? ac1 : ac2).abort(); // releases the lease
      await waitFor('standby to lead', () => standby.isLeader());
      await a.pod('second', { schedulerName: 'le-scheduler' });
      assert.equal(await a.boundTo('second'), 'le-1');
    } finally {
      ac1.abort(); ac2.abort();
      await Promise.all([r1, r2]);
    }
  }));
});
