/**
 * T3, compaction (issue 21). A client holds resourceVersion rv0; more than the watch cache's
 * window of events is written (1000 per resource by default, as upstream's smallest), then
 * `mkctl etcd compact` compacts etcd at the current revision. Then:
 * - a watch from rv0 gets an ERROR event with a Status 410, reason Expired (upstream's Cacher:
 *   "too old resource version");
 * - a continue token taken before the compaction gets 410 Expired (etcd's "required revision has
 *   been compacted"); a list at rv0 with resourceVersionMatch=Exact is printed, not asserted
 *   (mk8s does not implement resourceVersionMatch yet);
 * - client/'s shared informer, whose watch was held (a client partitioned from the apiserver
 *   meanwhile: its stream is cut and nothing reaches it) resumes from rv0, gets the 410, relists
 *   by itself and converges on the server's state.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, ConfigMaps, Namespaces, type KubeObject, type ResourceDescriptor, type WatchEvent } from '@mk8s/api';
import { createSharedInformer, type Clientset, type ResourceClient } from '@mk8s/client';
import { adminClient, figure, kubectl, mkctl, uniqueName, waitFor } from './lib/chaos.js';

type Cm = KubeObject & { data?: Record<string, string> };
const ns = uniqueName('chaos-compact');
const client = adminClient('chaos-t3');
const cms = () => client.resource<Cm>(ConfigMaps, ns);
const rvOf = (o: KubeObject) => Number(o.metadata.resourceVersion);

/**
 * A clientset whose watches can be held: while held, an open stream is cut and the iterator
 * delivers nothing until released (then it ends, as a dropped connection does). Lists and watch
 * errors are recorded. Everything else is the real client.
 */
function holdableClient(inner: Clientset) {
  let held: { promise: Promise<void>; release: () => void } | undefined;
  let cut: AbortController | undefined;
  const rec = { lists: 0, watchErrors: [] as { code: number; reason: string }[] };
  const wrap = <T extends KubeObject>(rc: ResourceClient<T>): ResourceClient<T> => ({
    ...rc,
    get: rc.get.bind(rc), create: rc.create.bind(rc), update: rc.update.bind(rc), updateStatus: rc.updateStatus.bind(rc), patch: rc.patch.bind(rc),
    delete: rc.delete.bind(rc), createSubresource: rc.createSubresource.bind(rc), getSubresource: rc.getSubresource.bind(rc), updateSubresource: rc.updateSubresource.bind(rc),
    list: (o) => { rec.lists++; return rc.list(o); },
    watch: (o = {}) => ({
      async *[Symbol.asyncIterator]() {
        const mine = new AbortController();
        cut = mine;
        const outer = o.signal;
        const onOuter = () => mine.abort();
        outer?.addEventListener('abort', onOuter, { once: true });
        try {
          for await (const ev of rc.watch({ ...o, signal: mine.signal }) as AsyncIterable<WatchEvent<T>>) {
            if (held) break;
            yield ev;
          }
        } catch (err) {
          if (err instanceof ApiError) rec.watchErrors.push({ code: err.code, reason: String(err.reason) });
          throw err;
        } finally { outer?.removeEventListener('abort', onOuter); }
        if (held && !outer?.aborted) await held.promise;
      },
    }),
  });
  return {
    rec,
    client: { resource: <T extends KubeObject>(r: ResourceDescriptor<unknown>, n?: string) => wrap(inner.resource<T>(r, n)) } as Clientset,
    hold() { let release!: () => void; held = { promise: new Promise<void>((r) => { release = r; }), release }; cut?.abort(); },
    release() { const h = held; held = undefined; h?.release(); },
  };
}

before(async () => { await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }); });
after(async () => { await client.resource(Namespaces).delete(ns).catch(() => undefined); });

test('T3: a watch resumed from a compacted resourceVersion gets 410 Expired; the informer relists and converges', { timeout: 420_000 }, async () => {
  const WRITES = 1100, KEYS = 8;
  for (let i = 0; i < KEYS; i++) await cms().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `k${i}`, namespace: ns }, data: { v: '0' } });
  const h = holdableClient(client);
  const informer = createSharedInformer<Cm>({ client: h.client, resource: ConfigMaps, namespace: ns, initialBackoffMs: 200 });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  try {
    await informer.whenSynced();
    await waitFor(() => informer.lister.list(ns).filter((c) => /^k\d+$/.test(c.metadata.name)).length === KEYS, { timeoutMs: 30_000, what: 'the informer has every key' });
    h.hold();
    const listsBefore = h.rec.lists;
    const page1 = JSON.parse(kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/configmaps?limit=2`]).stdout) as { metadata: { continue?: string; resourceVersion: string } };
    const rv0 = Number(page1.metadata.resourceVersion);
    assert.ok(page1.metadata.continue, 'a continue token');

    // More events than the watch cache keeps, so rv0 is gone from it as well as from etcd.
    let n = 0;
    const t0 = Date.now();
    await Promise.all(Array.from({ length: KEYS }, async (_, k) => {
      let cur = await cms().get(`k${k}`);
      while (n < WRITES) { n++; cur = await cms().update({ ...cur, data: { v: String(Number(cur.data?.['v']) + 1) } }); }
    }));
    const writeS = (Date.now() - t0) / 1000;
    const c = mkctl(['etcd', 'compact']);
    assert.equal(c.code, 0, c.out);
    const compactedAt = Number(/revision (\d+)/.exec(c.out)?.[1]);

    // A watch from rv0: an ERROR event carrying Status 410 Expired.
    let watchErr: unknown;
    try {
      for await (const ev of cms().watch({ resourceVersion: String(rv0), signal: AbortSignal.timeout(20_000) })) { void ev; }
    } catch (err) { watchErr = err; }
    assert.ok(watchErr instanceof ApiError, `watch from ${rv0}: ${String(watchErr)}`);
    assert.equal(watchErr.code, 410);
    assert.equal(watchErr.reason, 'Expired');

    // etcd itself: an exact list at rv0 and a continue token from before the compaction.
    const exact = kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/configmaps?resourceVersion=${rv0}&resourceVersionMatch=Exact`]);
    // Not asserted: mk8s does not implement resourceVersionMatch yet (it answers the current state;
    // upstream reads etcd at that revision, 410 once compacted). Printed in the figure.
    const exactAnswer = exact.code === 0 ? `current state (resourceVersionMatch=Exact not implemented; upstream 410)` : /Expired/.test(exact.stderr) ? 'Expired' : exact.stderr.trim();
    const cont = kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/configmaps?limit=2&continue=${encodeURIComponent(page1.metadata.continue!)}`]);
    assert.notEqual(cont.code, 0, cont.stdout);
    assert.match(cont.stderr, /Expired|410|too old/i, cont.stderr);

    // The informer, released, resumes from its old resourceVersion: 410, then a relist by itself.
    const t1 = Date.now();
    h.release();
    const want = async () => new Map((await cms().list()).items.map((x) => [x.metadata.name, rvOf(x)]));
    await waitFor(async () => {
      const w = await want();
      const have = informer.lister.list(ns);
      return have.length === w.size && have.every((x) => w.get(x.metadata.name) === rvOf(x));
    }, { timeoutMs: 60_000, what: 'the informer converged on the server state' });
    const convergeS = (Date.now() - t1) / 1000;
    const expired = h.rec.watchErrors.filter((e) => e.code === 410 && e.reason === 'Expired').length;
    figure('T3', 'watch from a compacted resourceVersion', `${watchErr.code} ${watchErr.reason}`, '410 Expired',
      `continue token from before: ${/Expired/.test(cont.stderr) ? '410 Expired' : cont.stderr.trim()} (goal 410 Expired); exact list at rv0: ${exactAnswer}; compacted at ${compactedAt}, rv0 ${rv0}; ${WRITES} writes in ${writeS.toFixed(1)}s`);
    figure('T3', 'informer after 410', `relisted ${h.rec.lists - listsBefore} time(s), converged in ${convergeS.toFixed(1)}s`, 'relists by itself and converges', `410s seen by the informer ${expired}`);
    assert.ok(expired >= 1, 'the informer saw 410 Expired');
    assert.ok(h.rec.lists > listsBefore, 'the informer relisted');
  } finally {
    h.release();
    stop.abort();
    await running;
  }
});
