/**
 * T10: node loss, on the 3-node cluster of `make chaos`, through `mkctl chaos node-down|partition`.
 *
 * - 2 of 3 nodes down at once (every process SIGSTOPped, left down): each goes NotReady (Ready
 *   Unknown) after the node-monitor-grace-period (mk8s: 50 s, upstream 1.32's default), gets the
 *   node.kubernetes.io/unreachable NoExecute taint, its pods (tolerationSeconds 30) are evicted
 *   once the toleration has run out and replaced on the node left. Upstream's zone rule with 2 of 3
 *   not ready is Normal (PartialDisruption needs more than 2 not ready), so evictions go on, paced
 *   by the eviction rate limiter (--node-eviction-rate 0.1: one node tainted per 10 s).
 * - All 3 down (FullDisruption: every zone has no ready node): the controller stops evicting (no
 *   NoExecute taint stays, no pod deleted) however long it lasts; everything comes back.
 * - A partition (the node's netns cut off from the control plane for 100 s): the same eviction and
 *   replacement, then the node Ready again and the evicted pods gone from it.
 * Figures: times since the fault (printed); asserted: the taint, the toleration respected (no
 * eviction before tolerationSeconds), replacements elsewhere, the rate limiter's spacing, and 0
 * evictions in full disruption.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Deployments, Events, Nodes, Pods, type KubeObject } from '@mk8s/api';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, adminClient, figure, kubectlOk, mkctl, mkctlAsync, uniqueName, waitFor, waitForDefaultServiceAccount } from './lib/chaos.js';

/** `mkctl chaos ... --watch` in the background, stopped (SIGINT) by the test once it has seen what it waits for. */
function watchAsync(args: string[]): { stop: () => Promise<string> } {
  const child = spawn(process.execPath, [join(ROOT, 'mkctl/dist/main.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MK8S_ROOT: ROOT } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const closed = new Promise<void>((r) => child.on('close', () => r()));
  return { stop: async () => { if (child.exitCode === null) child.kill('SIGINT'); await closed; return out; } };
}

const c = adminClient('chaos-t10');
const ns = uniqueName('t10');
const TOLERATION_S = 30;
const UNREACHABLE = 'node.kubernetes.io/unreachable';

type NodeObj = KubeObject & { spec?: { taints?: { key: string; effect: string; timeAdded?: string }[] }; status?: { conditions?: { type: string; status: string }[] } };
type PodObj = KubeObject & { spec?: { nodeName?: string }; status?: { phase?: string } };

const nodes = async () => (await c.resource(Nodes).list()).items as NodeObj[];
const ready = (n: NodeObj) => n.status?.conditions?.find((x) => x.type === 'Ready')?.status;
const noExecute = (n: NodeObj) => (n.spec?.taints ?? []).find((t) => t.key === UNREACHABLE && t.effect === 'NoExecute');
const pods = async (app: string) => (await c.resource(Pods, ns).list({ labelSelector: `app=${app}` })).items as PodObj[];

const deployment = (name: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: ${ns} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      terminationGracePeriodSeconds: 1
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: { matchLabels: { app: ${name} } } }]
      tolerations:
        - { key: ${UNREACHABLE}, operator: Exists, effect: NoExecute, tolerationSeconds: ${TOLERATION_S} }
        - { key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: ${TOLERATION_S} }
      containers: [{ name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }]
`;

async function available(name: string, replicas: number, timeoutMs = 180_000): Promise<void> {
  await waitFor(async () => {
    const d = await c.resource(Deployments, ns).get(name) as KubeObject & { status?: { availableReplicas?: number; updatedReplicas?: number } };
    return (d.status?.availableReplicas ?? 0) >= replicas || undefined;
  }, { timeoutMs, what: `${name} ${replicas} available` });
}

/** Waits until every node is Ready with no unreachable/not-ready taint (after a test's node-up). */
async function allHealthy(): Promise<void> {
  await waitFor(async () => (await nodes()).every((n) => ready(n) === 'True' && !(n.spec?.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/not-ready') || t.key === UNREACHABLE)) || undefined,
    { timeoutMs: 180_000, what: 'every node Ready and untainted' });
}

before(() => {
  kubectlOk(['create', 'namespace', ns]);
  waitForDefaultServiceAccount(ns);
});

after(async () => {
  mkctl(['chaos', 'heal']);
  kubectlOk(['delete', 'namespace', ns, '--wait=false']);
});

test('T10 2 of 3 nodes down: NotReady, unreachable NoExecute taint, eviction after tolerationSeconds, replacements on the node left, rate-limited', { timeout: 600_000 }, async () => {
  const all = (await nodes()).map((n) => n.metadata.name).sort();
  assert.equal(all.length, 3, 'make chaos runs 3 nodes');
  await allHealthy();
  kubectlOk(['apply', '-f', '-'], { input: deployment('web', 3) });
  await available('web', 3);
  const placed = await pods('web');
  const byNode = new Map<string, number>();
  for (const p of placed) byNode.set(p.spec!.nodeName!, (byNode.get(p.spec!.nodeName!) ?? 0) + 1);
  const victims = [...all].sort((a, b) => (byNode.get(b) ?? 0) - (byNode.get(a) ?? 0) || a.localeCompare(b)).slice(0, 2).sort();
  const survivor = all.find((n) => !victims.includes(n))!;
  const onVictims = placed.filter((p) => victims.includes(p.spec!.nodeName!)).map((p) => p.metadata.name);
  assert.ok(onVictims.length > 0, 'some pods run on the nodes taken down');

  const t0 = Date.now();
  const since = (ms: number) => `${((ms - t0) / 1000).toFixed(1)} s`;
  const r1 = mkctl(['chaos', 'node-down', victims[0]!]);
  assert.equal(r1.code, 0, r1.out);
  const watch = watchAsync(['chaos', 'node-down', victims[1]!, '--watch', '--timeout', '400']);
  try {
    const notReadyAt: Record<string, number> = {};
    await waitFor(async () => {
      for (const n of await nodes()) if (victims.includes(n.metadata.name) && ready(n) !== 'True' && !notReadyAt[n.metadata.name]) notReadyAt[n.metadata.name] = Date.now();
      return victims.every((v) => notReadyAt[v]) || undefined;
    }, { timeoutMs: 180_000, intervalMs: 500, what: 'both nodes NotReady' });
    for (const v of victims) figure('T10', `${v} NotReady after`, since(notReadyAt[v]!), '≈ node-monitor-grace-period 50 s (+ up to 10 s lease renew interval, 5 s monitor period)');
    const tainted = await waitFor(async () => { const ns2 = (await nodes()).filter((n) => victims.includes(n.metadata.name) && noExecute(n)); return ns2.length === 2 ? ns2 : undefined; }, { timeoutMs: 120_000, intervalMs: 500, what: 'both nodes tainted unreachable:NoExecute' });
    const added = tainted.map((n) => Date.parse(noExecute(n)!.timeAdded!)).sort((a, b) => a - b);
    figure('T10', 'unreachable NoExecute taints added after', `${since(added[0]!)}, ${since(added[1]!)}`, 'right after NotReady, 10 s apart (eviction rate 0.1 nodes/s)');
    assert.ok(added[1]! - added[0]! >= 9_000, `the second taint ${added[1]! - added[0]!} ms after the first: the zone's eviction rate limiter paces them (1 per 10 s)`);
    assert.equal((await nodes()).find((n) => n.metadata.name === survivor)!.spec?.taints?.some((t) => t.effect === 'NoExecute') ?? false, false, `${survivor} is not tainted`);

    // Evictions: every pod of the lost nodes deleted, none before its toleration ran out.
    await waitFor(async () => {
      const ps = await pods('web');
      return onVictims.every((name) => { const p = ps.find((x) => x.metadata.name === name); return !p || p.metadata.deletionTimestamp; }) || undefined;
    }, { timeoutMs: 120_000, intervalMs: 500, what: 'pods of the lost nodes evicted' });
    const evs = ((await c.resource(Events, ns).list()).items as (KubeObject & { reason?: string; involvedObject?: { name?: string }; firstTimestamp?: string })[]).filter((e) => e.reason === 'TaintManagerEviction');
    for (const name of onVictims) {
      const ev = evs.find((e) => e.involvedObject?.name === name);
      assert.ok(ev, `a TaintManagerEviction event for ${name}`);
      const node = placed.find((p) => p.metadata.name === name)!.spec!.nodeName!;
      const taintAt = Date.parse(noExecute(tainted.find((n) => n.metadata.name === node)!)!.timeAdded!);
      const after = (Date.parse(ev.firstTimestamp!) - taintAt) / 1000;
      figure('T10', `${name} evicted after the taint`, `${after.toFixed(0)} s`, `${TOLERATION_S} s (tolerationSeconds)`);
      assert.ok(after >= TOLERATION_S - 1, `${name} evicted ${after} s after the taint: not before its tolerationSeconds ${TOLERATION_S}`);
    }
    // Replacements elsewhere: 3 available, every live pod on the node left.
    await available('web', 3);
    const live = (await pods('web')).filter((p) => !p.metadata.deletionTimestamp);
    figure('T10', 'replacements available after', since(Date.now()), 'after eviction + scheduling + start', `on ${[...new Set(live.map((p) => p.spec?.nodeName))].join(', ')}`);
    assert.equal(live.length, 3);
    assert.ok(live.every((p) => p.spec?.nodeName === survivor), `replacements on ${survivor}: ${live.map((p) => p.spec?.nodeName).join(', ')}`);
  } finally {
    // What `node-down --watch` printed meanwhile (kube-system pods keep the default 300 s toleration, so it is stopped here).
    console.log((await watch.stop()).split('\n').filter((l) => !/ pod kube-system\//.test(l)).slice(0, 120).map((l) => `  watch| ${l}`).join('\n'));
    for (const v of victims) mkctl(['chaos', 'node-up', v]);
  }
  await allHealthy();
  figure('T10', 'nodes Ready again after node-up', since(Date.now()), 'kubelets resume and post status');
  // The evicted pods go once their kubelet is back (it kills their containers and the deletion completes).
  await waitFor(async () => (await pods('web')).every((p) => !p.metadata.deletionTimestamp) || undefined, { timeoutMs: 180_000, what: 'evicted pods gone' });
  kubectlOk(['delete', 'deployment/web', '-n', ns]);
});

test('T10 all 3 nodes down (FullDisruption): no NoExecute taint, 0 evictions; everything comes back', { timeout: 600_000 }, async () => {
  await allHealthy();
  kubectlOk(['apply', '-f', '-'], { input: deployment('full', 2) });
  await available('full', 2);
  const before = new Set((await c.resource(Pods).list()).items.filter((p) => !p.metadata.deletionTimestamp).map((p) => `${p.metadata.namespace}/${p.metadata.name}`));
  const all = (await nodes()).map((n) => n.metadata.name).sort();
  const t0 = Date.now();
  try {
    for (const n of all) { const r = mkctl(['chaos', 'node-down', n]); assert.equal(r.code, 0, r.out); }
    const allDownAt = await waitFor(async () => (await nodes()).every((n) => ready(n) !== 'True') ? Date.now() : undefined, { timeoutMs: 180_000, intervalMs: 500, what: 'all nodes NotReady' });
    figure('T10', 'all 3 nodes NotReady after', `${((allDownAt - t0) / 1000).toFixed(1)} s`, '≈ 50 s');
    // Longer than the toleration + the rate limiter's pacing: a Normal zone would have evicted by now.
    const holdUntil = allDownAt + (TOLERATION_S + 20) * 1000;
    let evicted: string[] = [];
    let taintedSeen = 0;
    while (Date.now() < holdUntil) {
      await new Promise((r) => setTimeout(r, 2_000));
      const ps = (await c.resource(Pods).list()).items;
      evicted = ps.filter((p) => p.metadata.deletionTimestamp && before.has(`${p.metadata.namespace}/${p.metadata.name}`)).map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
      taintedSeen = (await nodes()).filter((n) => noExecute(n)).length;
      if (evicted.length) break;
    }
    figure('T10', 'evictions in full disruption (all 3 nodes down)', evicted.length, '0', `NoExecute-tainted nodes at the end: ${taintedSeen}`);
    assert.deepEqual(evicted, [], 'no pod evicted while every node is down');
    assert.equal(taintedSeen, 0, 'no NoExecute taint stays in full disruption');
  } finally {
    for (const n of all) mkctl(['chaos', 'node-up', n]);
  }
  await allHealthy();
  await available('full', 2);
  const gone = (await c.resource(Pods).list()).items.filter((p) => before.has(`${p.metadata.namespace}/${p.metadata.name}`));
  assert.equal(gone.length, before.size, 'every pod of before the outage is still there');
  figure('T10', 'full-disruption recovery (node-up → all Ready, workloads available)', `${((Date.now() - t0) / 1000).toFixed(1)} s since the fault`, 'converged');
  kubectlOk(['delete', 'deployment/full', '-n', ns]);
});

test('T10 partition: a node cut off from the control plane for 100 s: NotReady, eviction, replacement; healed, it is Ready again', { timeout: 600_000 }, async () => {
  await allHealthy();
  kubectlOk(['apply', '-f', '-'], { input: deployment('part', 3) });
  await available('part', 3);
  const placed = await pods('part');
  const victim = placed[0]!.spec!.nodeName!;
  const onVictim = placed.filter((p) => p.spec?.nodeName === victim).map((p) => p.metadata.name);
  const t0 = Date.now();
  const since = (ms: number) => `${((ms - t0) / 1000).toFixed(1)} s`;
  const part = mkctlAsync(['chaos', 'partition', victim, '--for', '100s']);
  try {
    const notReadyAt = await waitFor(async () => (await nodes()).some((n) => n.metadata.name === victim && ready(n) !== 'True') ? Date.now() : undefined, { timeoutMs: 150_000, intervalMs: 500, what: `${victim} NotReady` });
    figure('T10', `partition: ${victim} NotReady after`, since(notReadyAt), '≈ 50 s');
    await waitFor(async () => { const ps = await pods('part'); return onVictim.every((name) => { const p = ps.find((x) => x.metadata.name === name); return !p || p.metadata.deletionTimestamp; }) || undefined; }, { timeoutMs: 120_000, intervalMs: 500, what: 'its pods evicted' });
    figure('T10', `partition: ${victim}'s pods evicted after`, since(Date.now()), `≈ NotReady + ${TOLERATION_S} s`);
    await available('part', 3);
    const live = (await pods('part')).filter((p) => !p.metadata.deletionTimestamp);
    assert.ok(live.every((p) => p.spec?.nodeName !== victim), 'replacements on other nodes');
    const r = await part.done;
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /healed partition/);
  } finally {
    mkctl(['chaos', 'node-up', victim]);
  }
  await allHealthy();
  figure('T10', `partition healed: ${victim} Ready again after`, since(Date.now()), 'a kubelet heartbeat after 100 s');
  await waitFor(async () => (await pods('part')).every((p) => !p.metadata.deletionTimestamp) || undefined, { timeoutMs: 180_000, what: 'evicted pods gone' });
  kubectlOk(['delete', 'deployment/part', '-n', ns]);
});
