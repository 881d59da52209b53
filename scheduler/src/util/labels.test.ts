import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LabelSelector } from '@mk8s/api';
import { labelSelectorFromObject } from './labels.js';

for (const tc of [
  { name: 'undefined selects nothing', sel: undefined, labels: { app: 'a' }, want: false },
  { name: '{} selects everything', sel: {}, labels: {}, want: true },
  { name: 'matchLabels', sel: { matchLabels: { app: 'a' } }, labels: { app: 'a', x: 'y' }, want: true },
  { name: 'matchExpressions NotIn', sel: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['a'] }] }, labels: { app: 'a' }, want: false },
  { name: 'an invalid selector selects nothing', sel: { matchExpressions: [{ key: 'app', operator: 'Bogus', values: ['a'] }] }, labels: { app: 'a' }, want: false },
] as { name: string; sel: LabelSelector | undefined; labels: Record<string, string>; want: boolean }[]) {
  test(`labelSelectorFromObject: ${tc.name}`, () => {
    assert.equal(labelSelectorFromObject(tc.sel).matches(tc.labels), tc.want);
    // Memoized by content: a second compile of an equal selector gives the same answer.
    assert.equal(labelSelectorFromObject(tc.sel === undefined ? undefined : structuredClone(tc.sel)).matches(tc.labels), tc.want);
  });
}

test('labelSelectorFromObject compiles equal selectors once', () => {
  const a = labelSelectorFromObject({ matchLabels: { app: 'memo' } });
  assert.equal(labelSelectorFromObject({ matchLabels: { app: 'memo' } }), a);
  assert.notEqual(labelSelectorFromObject({ matchLabels: { app: 'other' } }), a);
});
