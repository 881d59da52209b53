import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hunks, lineDiff } from './line-diff';

test('lineDiff marks kept, removed and added lines', () => {
  const d = lineDiff('a\nb\nc\nd', 'a\nc\nx\nd');
  assert.deepEqual(d.map((l) => l.op + l.text), [' a', '-b', ' c', '+x', ' d']);
});

test('lineDiff of equal texts changes nothing', () => {
  assert.ok(lineDiff('a\nb', 'a\nb').every((l) => l.op === ' '));
});

test('hunks keeps context around changes only', () => {
  const a = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
  const b = a.replace('l10', 'L10');
  const h = hunks(lineDiff(a, b), 1);
  assert.deepEqual(h.map((l) => l.op + l.text), ['…', ' l9', '-l10', '+L10', ' l11', '…']);
});
