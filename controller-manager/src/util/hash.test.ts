import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeHash, fnv32a, safeEncodeString, canonicalJson } from './hash.js';

const enc = (s: string) => new TextEncoder().encode(s);

test('fnv32a matches the reference vectors', () => {
  for (const [input, want] of [['', 0x811c9dc5], ['a', 0xe40c292c], ['foobar', 0xbf9cf968]] as const) {
    assert.equal(fnv32a(enc(input)), want, input);
  }
});

test('safeEncodeString maps digits onto the safe alphabet', () => {
  // '0' is 48: 48 % 27 = 21 → '4'; '9' is 57: 57 % 27 = 3 → 'f'
  assert.equal(safeEncodeString('09'), '4f');
  assert.match(safeEncodeString('1234567890'), /^[bcdfghjklmnpqrstvwxz2456789]+$/);
});

test('computeHash ignores key order and changes with the template and the collision count', () => {
  const a = { metadata: { labels: { app: 'web', tier: 'fe' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
  const b = { spec: { containers: [{ image: 'busybox', name: 'c' }] }, metadata: { labels: { tier: 'fe', app: 'web' } } };
  assert.equal(computeHash(a), computeHash(b));
  assert.notEqual(computeHash(a), computeHash({ ...a, spec: { containers: [{ name: 'c', image: 'nginx' }] } }));
  assert.notEqual(computeHash(a), computeHash(a, 1));
  assert.equal(computeHash(a, 0) === computeHash(a), false, 'a nil count and 0 differ, as upstream');
});

test('canonicalJson drops undefined fields', () => {
  assert.equal(canonicalJson({ b: 1, a: undefined, c: [1, { y: 2, x: 1 }] }), '{"b":1,"c":[1,{"x":1,"y":2}]}');
});
