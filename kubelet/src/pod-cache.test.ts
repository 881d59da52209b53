import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PodCache } from './pod-cache.js';
import type { PodRuntimeState } from './status.js';

const st = (n: number): PodRuntimeState => ({ sandboxes: [], containers: [], ...(n ? { sandboxStatus: { id: `s${n}` } as never } : {}) });

test('getNewerThan waits until a relist newer than the given time set the pod or updated the time', async () => {
  const c = new PodCache();
  let got: unknown;
  const p = c.getNewerThan('a', 0).then((v) => { got = v; });
  await Promise.resolve();
  assert.equal(got, undefined, 'no relist yet: nothing is known');
  c.updateTime(100);
  await p;
  assert.deepEqual(got, { state: { sandboxes: [], containers: [] }, at: 100 }, 'absent from a complete relist: nothing in the runtime');
  c.set('a', st(1), 200);
  assert.equal((await c.getNewerThan('a', 150)).at, 200);
  // A sync that ended at 250 waits for the next relist, even one that did not touch the pod.
  let later: unknown;
  const q = c.getNewerThan('a', 250).then((v) => { later = v; });
  c.set('b', st(2), 260);
  await Promise.resolve();
  assert.equal(later, undefined, 'another pod being set says nothing of this one');
  c.updateTime(260);
  await q;
  assert.deepEqual(later, { state: st(1), at: 260 });
});

test('getNewerThan rejects when its signal aborts; delete forgets the pod', async () => {
  const c = new PodCache();
  const ac = new AbortController();
  const p = c.getNewerThan('a', 0, ac.signal);
  ac.abort(new Error('stop'));
  await assert.rejects(p, /stop/);
  c.set('a', st(1), 10);
  c.delete('a');
  assert.deepEqual(c.get('a').state, { sandboxes: [], containers: [] });
});
