import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StorageEvent } from './interfaces.js';
import { WatchQueue } from './watch-queue.js';

const ev = (rv: string): StorageEvent => ({ type: 'ADDED', object: { metadata: { name: rv } }, resourceVersion: rv });

test('progress marks are reported in order with events and collapse when consecutive', async () => {
  const log: string[] = [];
  const q = new WatchQueue({ signal: new AbortController().signal, onProgress: (rv) => log.push(`progress ${rv}`) });
  q.push(ev('1'));
  q.progress('2');
  q.progress('3');
  q.push(ev('4'));
  q.end();
  for await (const e of q) log.push(`event ${e.resourceVersion}`);
  assert.deepEqual(log, ['event 1', 'progress 3', 'event 4']);
});

test('an error is raised after the buffered events were consumed', async () => {
  const q = new WatchQueue({ signal: new AbortController().signal });
  q.push(ev('1'));
  q.fail(new Error('expired'));
  q.push(ev('2'));                                                     // ignored after fail
  const it = q[Symbol.asyncIterator]();
  assert.equal((await it.next()).value?.resourceVersion, '1');
  await assert.rejects(it.next(), /expired/);
  assert.equal((await it.next()).done, true);
});

test('abort ends a waiting consumer and runs close hooks once', async () => {
  const ctl = new AbortController();
  let closed = 0;
  const q = new WatchQueue({ signal: ctl.signal, onClose: () => closed++ });
  q.onClosed(() => closed++);
  const pending = q.next();
  ctl.abort();
  assert.equal((await pending).done, true);
  q.end();
  assert.equal(closed, 2);
  let late = 0;
  q.onClosed(() => late++);
  assert.equal(late, 1);
});

test('a consumer that breaks out closes the queue', async () => {
  let closed = false;
  const q = new WatchQueue({ signal: new AbortController().signal, onClose: () => { closed = true; } });
  q.push(ev('1'));
  q.push(ev('2'));
  for await (const _ of q) break;
  assert.equal(closed, true);
  assert.equal(q.done, true);
});
