import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import type { StorageEvent } from './interfaces.js';
import { encodeWatchEvent, filterWatchEvent } from './filter.js';

const obj = (app: string, rv: string): KubeObject => ({ metadata: { name: 'a', resourceVersion: rv, labels: { app } } });
const web = (o: KubeObject) => o.metadata.labels?.['app'] === 'web';
const mod = (from: string, to: string): StorageEvent => ({ type: 'MODIFIED', object: obj(to, '5'), prevObject: obj(from, '4'), resourceVersion: '5', key: '/registry/pods/a' });

for (const tc of [
  { name: 'keeps an update that still matches', ev: mod('web', 'web'), want: 'MODIFIED web 5' },
  { name: 'turns an update that starts matching into ADDED', ev: mod('db', 'web'), want: 'ADDED web 5' },
  { name: 'turns an update that stops matching into DELETED of the previous content at the new revision', ev: mod('web', 'db'), want: 'DELETED web 5' },
  { name: 'drops an update that never matches', ev: mod('db', 'db'), want: undefined },
  { name: 'drops an ADDED that does not match', ev: { type: 'ADDED', object: obj('db', '3'), resourceVersion: '3' } as StorageEvent, want: undefined },
  { name: 'keeps a DELETED that matches', ev: { type: 'DELETED', object: obj('web', '6'), resourceVersion: '6' } as StorageEvent, want: 'DELETED web 6' },
]) {
  test(tc.name, () => {
    const out = filterWatchEvent(tc.ev, web);
    assert.equal(out && `${out.type} ${out.object.metadata.labels?.['app']} ${out.object.metadata.resourceVersion}`, tc.want);
    if (out) assert.equal(out.key, tc.ev.key);
  });
}

test('converted events are shared between watchers, so they encode once', () => {
  const ev = mod('web', 'db');
  const a = filterWatchEvent(ev, web)!;
  assert.equal(filterWatchEvent(ev, web), a);
  assert.equal(encodeWatchEvent(a), encodeWatchEvent(a));
  assert.deepEqual(JSON.parse(encodeWatchEvent(a)), { type: 'DELETED', object: obj('web', '5') });
});

test('without a predicate every event passes unchanged', () => {
  const ev = mod('db', 'db');
  assert.equal(filterWatchEvent(ev, undefined), ev);
});
