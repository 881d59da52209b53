import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@mk8s/component-base/testing';
import type { TraceGathered } from '@mk8s/api/trace';
import { LiveChain, watchPlan, type ChainState, type ChainWatchEvent, type LiveChainOptions } from './live-chain';

const POD = '/api/v1/namespaces/ns/pods/web';
const SELF = '/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dweb';

/**
 * The apiserver as a table of paths; lists carry a resourceVersion; pod/web may be absent. With
 * a Service, the pod is Running and Ready behind Service web (10.96.0.20), whose slice has its IP.
 */
function fakeApi(o: { withService?: boolean } = {}) {
  const asked: string[] = [];
  const list = (path: string): unknown[] => {
    if (path === '/api/v1/nodes') return [{ metadata: { name: 'n1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }];
    if (!o.withService) return [];
    if (path === '/api/v1/namespaces/ns/services') return [{ metadata: { name: 'web', namespace: 'ns' }, spec: { selector: { app: 'web' }, clusterIP: '10.96.0.20' } }];
    if (path === '/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices') return [{ metadata: { name: 'web-x', labels: { 'kubernetes.io/service-name': 'web' } }, endpoints: [{ addresses: ['10.244.0.5'], conditions: { ready: true } }] }];
    return [];
  };
  const api = {
    asked, rv: 10, podExists: true, image: 'mk8s/test-server',
    async get(path: string): Promise<unknown> {
      asked.push(path);
      if (path === POD) {
        if (!api.podExists) throw Object.assign(new Error('pods "web" not found'), { code: 404, reason: 'NotFound' });
        const status = o.withService
          ? { phase: 'Running', podIP: '10.244.0.5', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'c', image: api.image, imageID: 'docker://sha', ready: true, restartCount: 0, state: { running: { startedAt: '2026-11-30T09:00:00Z' } } }] }
          : {};
        return { metadata: { name: 'web', namespace: 'ns', uid: 'p', labels: { app: 'web' }, resourceVersion: String(api.rv) }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: api.image }] }, status };
      }
      return { metadata: { resourceVersion: String(api.rv) }, items: list(path) };
    },
  };
  return api;
}

/** Watches as channels the test pushes events into. */
function fakeWatch() {
  const open: { path: string; rv: string; push: (e: ChainWatchEvent) => void; end: () => void; signal: AbortSignal; closed: boolean }[] = [];
  const watch = (path: string, rv: string, signal: AbortSignal): AsyncIterable<ChainWatchEvent> => {
    const queue: (ChainWatchEvent | null)[] = [];
    let wake: (() => void) | undefined;
    const w = { path, rv, signal, closed: false, push: (e: ChainWatchEvent) => { queue.push(e); wake?.(); }, end: () => { w.closed = true; queue.push(null); wake?.(); } };
    open.push(w);
    signal.addEventListener('abort', () => w.end(), { once: true });
    return (async function* () {
      for (;;) {
        while (!queue.length) await new Promise<void>((r) => { wake = r; });
        const e = queue.shift()!;
        if (e === null) return;
        yield e;
      }
    })();
  };
  const live = () => open.filter((w) => !w.signal.aborted && !w.closed);
  return { watch, open, live };
}

const settle = async () => { for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r)); };

function setup(o: { maxWatches?: number; podExists?: boolean; withService?: boolean; decorate?: LiveChainOptions['decorate'] } = {}) {
  const api = fakeApi({ withService: o.withService ?? false });
  api.podExists = o.podExists ?? true;
  const w = fakeWatch();
  const clock = new FakeClock(0);
  const states: ChainState[] = [];
  const lc = new LiveChain({ get: api.get, watch: w.watch, target: { kind: 'Pod', namespace: 'ns', name: 'web' }, onChange: (s) => states.push(s), clock, throttleMs: 400, resyncMs: 10_000, retryMs: 1000, ...(o.maxWatches ? { maxWatches: o.maxWatches } : {}), ...(o.decorate ? { decorate: o.decorate } : {}) });
  const ac = new AbortController();
  const done = lc.run(ac.signal);
  return { api, w, clock, states, lc, ac, done };
}

test('gathers at once, then watches the target, pods, events and endpoint slices from the lists\' resourceVersions', async () => {
  const { api, w, states, ac, done } = setup();
  await settle();
  assert.equal(states.length, 1);
  assert.equal(api.asked[0], POD);
  assert.deepEqual(states[0]!.links?.map((l) => l.step).slice(0, 3), ['stored', 'scheduled', 'node']);
  assert.deepEqual(w.live().map((x) => `${x.path}@${x.rv}`), [
    `${SELF}@10`, '/api/v1/namespaces/ns/pods@10', '/api/v1/namespaces/ns/events@10', '/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices@10',
  ]);
  ac.abort(); await done;
  assert.equal(w.live().length, 0, 'abort closes every watch');
});

test('events re-gather, throttled: a burst inside the window costs one gather', async () => {
  const { api, w, clock, states, ac, done } = setup();
  await settle();
  clock.step(1000);
  api.rv = 11; api.image = 'mk8s/other';
  const pods = w.live().find((x) => x.path === '/api/v1/namespaces/ns/pods')!;
  pods.push({ type: 'MODIFIED', object: { metadata: { resourceVersion: '11' } } });
  await settle();
  assert.equal(states.length, 2, 'the first event after a quiet spell gathers at once');
  for (let i = 12; i < 20; i++) pods.push({ type: 'MODIFIED', object: { metadata: { resourceVersion: String(i) } } });
  await settle();
  assert.equal(states.length, 2, 'within the throttle window: no gather yet');
  clock.step(400); await settle();
  assert.equal(states.length, 3, 'one gather for the whole burst');
  pods.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '30' } } });
  clock.step(1000); await settle();
  assert.equal(states.length, 3, 'a bookmark is not a change');
  assert.equal(w.live().length, 4, 'watches stay open across gathers');
  ac.abort(); await done;
});

test('a compacted watch (410) resumes from a fresh gather\'s resourceVersion', async () => {
  const { api, w, clock, states, ac, done } = setup();
  await settle();
  clock.step(1000);
  api.rv = 50;
  w.live().find((x) => x.path === '/api/v1/namespaces/ns/events')!.push({ type: 'ERROR', object: { code: 410 } });
  await settle();
  assert.equal(states.length, 2);
  const reopened = w.open.filter((x) => x.path === '/api/v1/namespaces/ns/events');
  assert.deepEqual(reopened.map((x) => x.rv), ['10', '50']);
  ac.abort(); await done;
});

test('a missing target shows the error and watches the target alone until it appears', async () => {
  const { api, w, clock, states, ac, done } = setup({ podExists: false });
  await settle();
  assert.equal((states[0]!.error as { reason?: string }).reason, 'NotFound');
  assert.equal(states[0]!.links, undefined);
  assert.deepEqual(w.live().map((x) => x.path), [SELF]);
  clock.step(1000);
  api.podExists = true;
  w.live()[0]!.push({ type: 'ADDED', object: { metadata: { resourceVersion: '12' } } });
  await settle();
  assert.equal(states.at(-1)!.error, undefined);
  assert.ok(states.at(-1)!.links?.length);
  assert.equal(w.live().length, 4);
  ac.abort(); await done;
});

test('a watch that fails is reopened after the retry delay; the resync gathers without events', async () => {
  const { w, clock, states, ac, done } = setup({ maxWatches: 1 });
  await settle();
  assert.deepEqual(w.live().map((x) => x.path), [SELF], 'maxWatches bounds the streams');
  w.live()[0]!.end();
  await settle();
  assert.equal(w.live().length, 0);
  clock.step(1000); await settle();
  assert.equal(w.live().length, 1, 'reopened');
  clock.step(9000); await settle();
  assert.equal(states.length, 2, 'resync after 10 s');
  ac.abort(); await done;
});

test('an async decorate is awaited: the rules it adds are in the links onChange gets; its rejection is the gather\'s error', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  let fail = false;
  const decorate = async (g: TraceGathered) => {
    await gate;
    if (fail) throw new Error('proxy rules unreadable');
    if (g.kind === 'chain') g.input.proxy = { n1: [{ node: 'n1', present: true, endpoints: 1, detail: 'ns/web → KUBE-SVC-ABC with 1 endpoints' }] };
  };
  const { w, clock, states, ac, done } = setup({ withService: true, decorate });
  await settle();
  assert.equal(states.length, 0, 'nothing is shown before the decorate resolves');
  release(); await settle();
  assert.equal(states.length, 1);
  const proxy = states[0]!.links?.find((l) => l.step === 'kube-proxy');
  assert.equal(proxy?.status, 'ok');
  assert.match(proxy!.evidence, /KUBE-SVC rules on n1 \(1 endpoints\)/);
  fail = true;
  clock.step(1000);
  w.live().find((x) => x.path === '/api/v1/namespaces/ns/pods')!.push({ type: 'MODIFIED', object: { metadata: { resourceVersion: '11' } } });
  await settle();
  assert.equal(states.length, 2);
  assert.match(String(states[1]!.error), /proxy rules unreadable/);
  assert.equal(states[1]!.links, states[0]!.links, 'the last good links stay shown');
  ac.abort(); await done;
});

test('watchPlan: the target, then pods, events, endpoint slices', () => {
  const sources = [SELF, '/apis/apps/v1/namespaces/ns/replicasets', '/api/v1/namespaces/ns/pods', '/api/v1/nodes', '/api/v1/namespaces/ns/events', '/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices', '/api/v1/namespaces/ns/configmaps'];
  assert.deepEqual(watchPlan(sources, 5), [SELF, '/api/v1/namespaces/ns/pods', '/api/v1/namespaces/ns/events', '/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices', '/apis/apps/v1/namespaces/ns/replicasets']);
  assert.deepEqual(watchPlan(['/apis/batch/v1/namespaces/ns/jobs?fieldSelector=metadata.name%3Dpi', '/api/v1/namespaces/ns/events?fieldSelector=involvedObject.name%3Dpi', '/api/v1/namespaces/ns/pods'], 4).length, 3);
});
