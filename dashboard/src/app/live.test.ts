import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ListWatch } from './live';
import type { ApiFetch, KubeObject } from './api';

const pod = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
const lines = (...evs: unknown[]) => evs.map((e) => JSON.stringify(e)).join('\n') + '\n';

/** A fake apiserver: answers calls in order from a script; records the URLs asked. */
function fakeApi(script: ((url: string) => Response)[]) {
  const urls: string[] = [];
  let reached!: () => void;
  /** Resolves when the script is used up and the next call waits (then the test aborts). */
  const exhausted = new Promise<void>((r) => { reached = r; });
  const api: ApiFetch = async (path, init) => {
    urls.push(path);
    const next = script.shift();
    if (!next) {
      reached();
      return new Promise<Response>((_, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    }
    return next(path);
  };
  return { api, urls, exhausted };
}
const json = (body: unknown, status = 200) => () => new Response(JSON.stringify(body), { status });
const stream = (text: string) => () => new Response(text, { status: 200 });

test('lists, then watches from the list resourceVersion and applies events', async () => {
  const ac = new AbortController();
  const f = fakeApi([
    json({ items: [pod('a', '5')], metadata: { resourceVersion: '10' } }),
    stream(lines({ type: 'ADDED', object: pod('b', '11') }, { type: 'DELETED', object: pod('a', '12') })),
  ]);
  let changes = 0;
  const lw = new ListWatch<KubeObject>(f.api, { path: '/api/v1/pods' }, () => { changes++; });
  const done = lw.run(ac.signal);
  await f.exhausted; ac.abort(); await done;
  assert.deepEqual([...lw.state().items.keys()], ['default/b']);
  assert.match(f.urls[1]!, /watch=1&resourceVersion=10/);
  // The stream ended: the watch resumes from the last event's resourceVersion, without a relist.
  assert.match(f.urls[2]!, /watch=1&resourceVersion=12/);
  assert.ok(changes >= 3);
});

test('a 410 Gone during the watch makes it relist', async () => {
  const ac = new AbortController();
  const f = fakeApi([
    json({ items: [pod('a', '5')], metadata: { resourceVersion: '10' } }),
    stream(lines({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } })),
    json({ items: [pod('c', '30')], metadata: { resourceVersion: '30' } }),
  ]);
  const lw = new ListWatch<KubeObject>(f.api, { path: '/api/v1/pods' }, () => {});
  const done = lw.run(ac.signal);
  await f.exhausted; ac.abort(); await done;
  assert.equal(f.urls[2], '/api/v1/pods?');
  assert.deepEqual([...lw.state().items.keys()], ['default/c']);
  assert.match(f.urls[3]!, /resourceVersion=30/);
});

test('a 403 list is kept as the Forbidden error', async () => {
  const ac = new AbortController();
  const f = fakeApi([json({ kind: 'Status', code: 403, reason: 'Forbidden', message: 'pods is forbidden: User "x" cannot list resource "pods"' }, 403)]);
  const lw = new ListWatch<KubeObject>(f.api, { path: '/api/v1/pods' }, () => ac.abort());
  await lw.run(ac.signal); // the error is reported (changed), the test aborts the retry wait
  assert.equal(lw.state().error?.code, 403);
  assert.equal(lw.state().error?.reason, 'Forbidden');
  assert.equal(lw.state().synced, false);
});

test('table mode keys rows by their object metadata', async () => {
  const ac = new AbortController();
  const row = (name: string, status: string, rv: string) => ({ cells: [name, status], object: { metadata: { name, namespace: 'ns', resourceVersion: rv } } });
  const f = fakeApi([
    json({ kind: 'Table', columnDefinitions: [{ name: 'Name' }, { name: 'Status' }], rows: [row('a', 'Pending', '1')], metadata: { resourceVersion: '2' } }),
    stream(lines({ type: 'MODIFIED', object: { kind: 'Table', columnDefinitions: [], rows: [row('a', 'Running', '3')] } })),
  ]);
  const lw = new ListWatch<{ cells: unknown[] }>(f.api, { path: '/api/v1/pods', table: true }, () => {});
  const done = lw.run(ac.signal);
  await f.exhausted; ac.abort(); await done;
  assert.deepEqual(lw.state().items.get('ns/a')?.cells, ['a', 'Running']);
  assert.equal(lw.state().columns.length, 2);
});
