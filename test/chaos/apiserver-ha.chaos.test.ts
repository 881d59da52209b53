/**
 * T7 (issue 21): an apiserver killed -9 under load, with 3 apiservers behind the balancer
 * (`mkctl cluster up --apiservers 3`; `make chaos` brings its cluster up so). Each apiserver in
 * turn is killed while writers create ConfigMaps and watchers watch them, so that every
 * watcher's connection is cut at least once wherever the balancer placed it.
 *
 * Goals (asserted): every create a client retried is stored (0 lost); every watcher resumes from
 * its last resourceVersion and sees each created object exactly once (0 duplicate, 0 missing, 0
 * out of order, counted by resourceVersion); kubectl (a fresh connection per run) never fails; the
 * `kubernetes` Service lists every apiserver again once healed. Times are printed, not asserted.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, isAlreadyExists, isResourceExpired, type KubeObject, type WatchEvent } from '@mk8s/api';
import { kubectlAsync } from '../e2e/lib/cluster.js';
import { adminClient, apiserverNames, figure, kubectl, kubectlOk, mkctl, mkctlAsync, supervised, uniqueName, waitFor, waitForDefaultServiceAccount } from './lib/chaos.js';

const ns = uniqueName('chaos-ha');
const WRITERS = 4;
const WATCHERS = 6;

before(() => {
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
  waitForDefaultServiceAccount(ns);
});
after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

/** The addresses of the `kubernetes` Service's Endpoints. */
function kubernetesEndpoints(): string[] {
  return kubectlOk(['get', 'endpoints', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.subsets[*].addresses[*].ip}']).trim().split(/\s+/).filter(Boolean).sort();
}

/** haproxy's view of one apiserver, from `mkctl cluster status` ("... in haproxy: UP"). */
function balancerState(name: string): string | undefined {
  return new RegExp(`^${name} .* in haproxy: (.+)$`, 'm').exec(mkctl(['cluster', 'status'], 60_000).out)?.[1]?.trim();
}

interface Watcher { seen: Map<string, string[]>; rvs: number[]; resumes: number; relists: number; outOfOrder: number; done: Promise<void> }

/** Watches ConfigMaps of ns from rv0 and resumes from the last resourceVersion after every cut (its own connection). */
function startWatcher(i: number, rv0: string, signal: AbortSignal): Watcher {
  const cms = adminClient(`chaos-ha-watch-${i}`).resource<KubeObject>(ConfigMaps, ns);
  const w: Watcher = { seen: new Map(), rvs: [], resumes: -1, relists: 0, outOfOrder: 0, done: Promise.resolve() };
  let rv = rv0;
  w.done = (async () => {
    while (!signal.aborted) {
      w.resumes++;
      try {
        for await (const ev of cms.watch({ resourceVersion: rv, allowWatchBookmarks: true, signal }) as AsyncIterable<WatchEvent<KubeObject>>) {
          const r = ev.object.metadata.resourceVersion ?? '';
          if (ev.type !== 'BOOKMARK' && ev.type !== 'ERROR') {
            const n = Number(r);
            if (w.rvs.length && n <= w.rvs[w.rvs.length - 1]!) w.outOfOrder++;
            w.rvs.push(n);
            const name = ev.object.metadata.name;
            w.seen.set(name, [...(w.seen.get(name) ?? []), `${ev.type}@${r}`]);
          }
          if (r) rv = r;
        }
      } catch (err) {
        if (signal.aborted) break;
        // 410: the resourceVersion was compacted away; a real client relists (counted: the goal is none here).
        if (isResourceExpired(err)) { w.relists++; rv = (await cms.list().catch(() => ({ metadata: { resourceVersion: rv } }))).metadata.resourceVersion ?? rv; }
      }
      if (!signal.aborted) await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return w;
}

test('T7: an apiserver killed -9 under load loses no retried request; watches resume with 0 duplicates', { timeout: 900_000 }, async () => {
  const names = apiserverNames();
  assert.ok(names.length >= 2, `T7 needs 2+ apiservers behind the balancer (mkctl cluster up --apiservers 3); this cluster runs ${names.join(', ') || 'none'}`);
  await waitFor(() => kubernetesEndpoints().length === names.length, { timeoutMs: 60_000, what: `the kubernetes Service listing ${names.length} apiservers` });
  const endpointsBefore = kubernetesEndpoints();

  const stop = new AbortController();
  const rv0 = (await adminClient('chaos-ha-list').resource<KubeObject>(ConfigMaps, ns).list()).metadata.resourceVersion ?? '0';
  const watchers = Array.from({ length: WATCHERS }, (_, i) => startWatcher(i, rv0, stop.signal));

  // Writers: each its own client (connection); a failed create is retried until the server answers.
  const acked: string[] = [];
  let retries = 0, lostResponses = 0, lastAck = Date.now(), maxStallMs = 0, writing = true;
  const writers = Array.from({ length: WRITERS }, async (_, wi) => {
    const cms = adminClient(`chaos-ha-write-${wi}`).resource<KubeObject>(ConfigMaps, ns);
    for (let i = 0; writing; i++) {
      const name = `w${wi}-${i}`;
      for (let attempt = 0; ; attempt++) {
        try {
          await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { i: String(i) } } as KubeObject);
          break;
        } catch (err) {
          // The first attempt was applied but its answer lost with the connection: the retry finds it.
          if (attempt > 0 && isAlreadyExists(err)) { lostResponses++; break; }
          retries++;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      acked.push(name);
      const now = Date.now(); maxStallMs = Math.max(maxStallMs, now - lastAck); lastAck = now;
    }
  });
  // kubectl as a user runs it: a new connection each time, no retry of its own.
  let kubectlRuns = 0, kubectlFailures = 0, probing = true;
  const kubectlFailuresSeen: string[] = [];
  const prober = (async () => {
    while (probing) {
      const r = await kubectlAsync(['get', 'configmaps', '-n', ns, '--request-timeout=20s', '-o', 'name']);
      kubectlRuns++;
      if (r.code !== 0) { kubectlFailures++; kubectlFailuresSeen.push(r.stderr.trim().split('\n')[0] ?? ''); }
      await new Promise((res) => setTimeout(res, 1000));
    }
  })();

  try {
    await waitFor(() => acked.length >= 20, { timeoutMs: 60_000, what: 'writes before the first kill' });
    const heal: string[] = [];
    for (const name of names) {
      const restarts0 = supervised()[name]?.restarts ?? 0;
      const t0 = Date.now();
      // In the background: a spawnSync would stall this process's writers and watchers meanwhile.
      const r = await mkctlAsync(['chaos', 'kill', name]).done;
      assert.equal(r.code, 0, r.out);
      await waitFor(() => { const s = supervised()[name]; return s?.state === 'running' && s.restarts > restarts0; }, { timeoutMs: 120_000, what: `${name} restarted by the supervisor` });
      await waitFor(() => balancerState(name) === 'UP', { timeoutMs: 120_000, intervalMs: 1000, what: `${name} UP in the balancer again` });
      heal.push(`${name} ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      const mark = acked.length;
      await waitFor(() => acked.length >= mark + 10, { timeoutMs: 60_000, what: `writes after ${name} is back` });
    }
    writing = false;
    await Promise.all(writers);
    probing = false;
    await prober;

    // Every watcher catches up with every acknowledged create.
    await waitFor(() => watchers.every((w) => acked.every((n) => w.seen.has(n))), { timeoutMs: 120_000, what: 'every watcher to see every create' });
    stop.abort();
    await Promise.all(watchers.map((w) => w.done));

    const stored = new Set((await adminClient('chaos-ha-list').resource<KubeObject>(ConfigMaps, ns).list()).items.map((c) => c.metadata.name));
    const lost = acked.filter((n) => !stored.has(n));
    const dup = watchers.reduce((s, w) => s + (w.rvs.length - new Set(w.rvs).size), 0);
    const missing = watchers.reduce((s, w) => s + acked.filter((n) => !w.seen.has(n)).length, 0);
    const outOfOrder = watchers.reduce((s, w) => s + w.outOfOrder, 0);
    const resumes = watchers.map((w) => w.resumes);
    const relists = watchers.reduce((s, w) => s + w.relists, 0);
    await waitFor(() => kubernetesEndpoints().length === names.length, { timeoutMs: 60_000, what: 'the kubernetes Service listing every apiserver again' });
    const endpointsAfter = kubernetesEndpoints();

    figure('T7', `apiserver kill -9 (${names.length} apiservers, each in turn): retried creates lost`, lost.length, '0', `${acked.length} creates, ${retries} retried attempts, ${lostResponses} answers lost with the connection (found on retry)`);
    figure('T7', 'watch events duplicated (by resourceVersion)', dup, '0', `${WATCHERS} watchers, missing ${missing} (goal 0), out of order ${outOfOrder} (goal 0), relists ${relists} (goal 0)`);
    figure('T7', 'watch resumes per watcher', resumes.join(','), `>= 1 each (every connection cut once)`);
    figure('T7', 'kubectl failures during the kills', `${kubectlFailures} of ${kubectlRuns}`, '0', kubectlFailuresSeen.slice(0, 2).join(' | '));
    figure('T7', 'killed apiserver back in the balancer', heal.join(', '), undefined, `longest create stall ${(maxStallMs / 1000).toFixed(2)}s`);
    figure('T7', 'kubernetes Service endpoints', `${endpointsAfter.join(',')} after; ${endpointsBefore.join(',')} before`, `all ${names.length}`);

    assert.deepEqual(lost, [], 'acknowledged creates lost');
    assert.equal(dup, 0, 'duplicate watch events');
    assert.equal(missing, 0, 'watch events missing');
    assert.equal(outOfOrder, 0, 'watch events out of order');
    assert.equal(relists, 0, 'relists (a resume from a fresh resourceVersion should never be 410)');
    assert.ok(resumes.every((n) => n >= 1), `every watcher resumed after its apiserver was killed: ${resumes.join(',')}`);
    assert.equal(kubectlFailures, 0, `kubectl failed: ${kubectlFailuresSeen.join(' | ')}`);
    assert.deepEqual(endpointsAfter, endpointsBefore);
  } finally {
    writing = false; probing = false; stop.abort();
    await Promise.allSettled([...writers, prober, ...watchers.map((w) => w.done)]);
  }
});
