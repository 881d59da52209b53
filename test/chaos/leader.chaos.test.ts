/**
 * T8: the controller-manager's and the scheduler's leader killed -9, and SIGSTOPped for longer than
 * the Lease (15 s), with a standby instance of each (`mkctl chaos standby`: mk8s runs one instance
 * of each, so a second one is started for this test and removed after it).
 *
 * Figures: takeover time (fault → the standby's acquireTime; goal ≤ 17 s: lease 15 s + retry 2 s).
 * Asserted: the Lease changed hands; a ReplicaSet scaled during the fault gets exactly its
 * replicas (every pod created once, none deleted); every pod created during the fault is bound
 * exactly once; the SIGSTOPped old leader, resumed, writes nothing: it steps down and exits
 * (the supervisor restarts it) and no extra pod appears.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Events, Leases, Pods, ReplicaSets, type KubeObject } from '@mk8s/api';
import { adminClient, figure, kubectlOk, mkctl, mkctlAsync, supervised, uniqueName, waitFor, waitForDefaultServiceAccount } from './lib/chaos.js';

const c = adminClient('chaos-t8');
const ns = uniqueName('t8');
const LEASE = { 'controller-manager': 'kube-controller-manager', scheduler: 'kube-scheduler' } as const;
type Comp = keyof typeof LEASE;
type LeaseObj = KubeObject & { spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string; leaseDurationSeconds?: number; leaseTransitions?: number } };

const lease = async (comp: Comp) => (await c.resource(Leases, 'kube-system').get(LEASE[comp])) as LeaseObj;

/** Pod ADDED/DELETED seen by a watch of the namespace from now on. */
function podLog() {
  const ac = new AbortController();
  const added = new Set<string>();
  const deleted: string[] = [];
  void (async () => {
    const list = await c.resource(Pods, ns).list();
    for (const p of list.items) added.add(p.metadata.name);
    try {
      for await (const ev of c.resource(Pods, ns).watch({ resourceVersion: list.metadata.resourceVersion!, signal: ac.signal })) {
        if (ev.type === 'ADDED') added.add((ev.object as KubeObject).metadata.name);
        if (ev.type === 'DELETED') deleted.push((ev.object as KubeObject).metadata.name);
      }
    } catch { /* stopped */ }
  })();
  return { added, deleted, stop: () => ac.abort() };
}

const rsYaml = (name: string, replicas: number) => `apiVersion: apps/v1
kind: ReplicaSet
metadata: { name: ${name}, namespace: ${ns} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{ name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }]
`;

before(async () => {
  for (const comp of ['controller-manager', 'scheduler'] as const) {
    const r = mkctl(['chaos', 'standby', comp], 120_000);
    assert.equal(r.code, 0, r.out);
  }
  kubectlOk(['create', 'namespace', ns]);
  waitForDefaultServiceAccount(ns);
});

after(async () => {
  kubectlOk(['delete', 'namespace', ns, '--wait=false']);
  for (const comp of ['controller-manager', 'scheduler'] as const) mkctl(['chaos', 'standby', comp, '--remove'], 120_000);
});

/** The supervised instance names and restart counts of comp. */
const instances = (comp: Comp) => Object.fromEntries(Object.entries(supervised()).filter(([n]) => n === comp || n === `${comp}-2`).map(([n, r]) => [n, r]));

/** Waits until comp's Lease is held and valid by someone, and every instance of comp is running. */
async function settled(comp: Comp): Promise<LeaseObj> {
  return waitFor(async () => {
    const ins = instances(comp);
    if (Object.keys(ins).length !== 2 || !Object.values(ins).every((r) => r.state === 'running')) return undefined;
    const l = await lease(comp);
    const renew = Date.parse(l.spec?.renewTime ?? '');
    return l.spec?.holderIdentity && renew + (l.spec.leaseDurationSeconds ?? 15) * 1000 > Date.now() ? l : undefined;
  }, { timeoutMs: 120_000, what: `${comp} Lease held, both instances running` });
}

for (const comp of ['controller-manager', 'scheduler'] as const) {
  for (const fault of ['kill', 'stop'] as const) {
    test(`T8 ${comp} leader ${fault === 'kill' ? 'kill -9' : 'SIGSTOP 25s'}: the standby takes over, 0 double actions`, { timeout: 300_000 }, async () => {
      const before = await settled(comp);
      const holder0 = before.spec!.holderIdentity!;
      const rs = uniqueName(`rs-${comp === 'scheduler' ? 's' : 'c'}${fault}`);
      kubectlOk(['apply', '-f', '-'], { input: rsYaml(rs, 2) });
      await waitFor(async () => (await c.resource(ReplicaSets, ns).get(rs) as KubeObject & { status?: { readyReplicas?: number } }).status?.readyReplicas === 2 || undefined, { timeoutMs: 120_000, what: `${rs} 2 ready` });
      const log = podLog();
      const restarts0 = Object.fromEntries(Object.entries(instances(comp)).map(([n, r]) => [n, r.restarts]));
      const f = fault === 'kill' ? mkctlAsync(['chaos', 'kill', `${comp}-leader`]) : mkctlAsync(['chaos', 'stop', `${comp}-leader`, '--seconds', '25']);
      // The fault's time: when mkctl reports the signal sent (not when mkctl started: it first reads the Leases and /metrics).
      const t0 = await waitFor(() => (/sent SIG(KILL|STOP) to /.test(f.output()) ? Date.now() : undefined), { timeoutMs: 60_000, intervalMs: 50, what: 'the fault sent' });
      if (fault === 'kill') { const r = await f.done; assert.equal(r.code, 0, r.out); }
      // The action during the fault: 2 more replicas (the controller-manager's work; the scheduler's is binding them).
      kubectlOk(['scale', `replicaset/${rs}`, '-n', ns, '--replicas', '4']);
      const after = await waitFor(async () => { const l = await lease(comp); return l.spec?.holderIdentity && l.spec.holderIdentity !== holder0 ? l : undefined; }, { timeoutMs: 90_000, what: `${comp} Lease taken over` });
      const takeoverS = (Date.parse(after.spec!.acquireTime!) - t0) / 1000;
      figure('T8', `${comp} leader ${fault === 'kill' ? 'kill -9' : 'SIGSTOP'} takeover`, `${takeoverS.toFixed(1)} s`, '≤ 17 s (lease 15 s + retry 2 s)', `transitions ${before.spec?.leaseTransitions ?? 0} -> ${after.spec?.leaseTransitions ?? 0}`);
      await waitFor(async () => (await c.resource(ReplicaSets, ns).get(rs) as KubeObject & { status?: { readyReplicas?: number } }).status?.readyReplicas === 4 || undefined, { timeoutMs: 120_000, what: `${rs} 4 ready` });
      if (fault === 'stop') {
        const r = await f.done;
        assert.equal(r.code, 0, r.out);
        // Resumed, the old leader must step down (and exit: the supervisor restarts it) without writing.
        await waitFor(() => Object.entries(instances(comp)).some(([n, x]) => x.restarts > (restarts0[n] ?? 0)) || undefined, { timeoutMs: 60_000, what: `the resumed old ${comp} leader stepped down and exited` });
      }
      // Let a resumed or restarted old leader act if it were going to.
      await settled(comp);
      await new Promise((r) => setTimeout(r, 5_000));
      log.stop();
      const pods = (await c.resource(Pods, ns).list({ labelSelector: `app=${rs}` })).items as (KubeObject & { spec?: { nodeName?: string } })[];
      // Only this ReplicaSet's pods: the previous test's are still going away.
      const created = [...log.added].filter((n) => n.startsWith(`${rs}-`));
      const deleted = log.deleted.filter((n) => n.startsWith(`${rs}-`));
      figure('T8', `${comp} leader ${fault} double actions`, `${created.length - 4 + deleted.length}`, '0', `pods created ${created.length}, deleted ${deleted.length}`);
      assert.equal(pods.length, 4, 'exactly its replicas');
      assert.equal(created.length, 4, `every pod created once: ${created.join(', ')}`);
      assert.deepEqual(deleted, [], 'no pod deleted');
      assert.ok(pods.every((p) => p.spec?.nodeName), 'every pod bound');
      // Each pod bound exactly once: one Scheduled event each.
      const events = (await c.resource(Events, ns).list()).items as (KubeObject & { reason?: string; involvedObject?: { name?: string }; count?: number })[];
      for (const p of pods) {
        const sched = events.filter((e) => e.reason === 'Scheduled' && e.involvedObject?.name === p.metadata.name).reduce((a, e) => a + (e.count ?? 1), 0);
        assert.equal(sched, 1, `${p.metadata.name} scheduled ${sched} times`);
      }
      kubectlOk(['delete', `replicaset/${rs}`, '-n', ns, '--wait=false']);
    });
  }
}

