import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nonNegativeNumber } from './flags.js';

for (const tc of [
  { name: 'seconds', v: '120', want: 120 },
  { name: 'a fraction', v: '0.5', want: 0.5 },
  { name: 'zero', v: '0', want: 0 },
  { name: 'an integer revision', v: '4711', integer: true, want: 4711 },
]) test(`nonNegativeNumber accepts ${tc.name}`, () => assert.equal(nonNegativeNumber('--x', tc.v, { integer: !!tc.integer }), tc.want));

for (const tc of [
  { name: 'a duration string', v: '2m' },
  { name: 'empty', v: '' },
  { name: 'negative', v: '-1' },
  { name: 'infinite', v: 'Infinity' },
  { name: 'a fractional revision', v: '1.5', integer: true },
]) test(`nonNegativeNumber rejects ${tc.name} in one line`, () => {
  assert.throws(() => nonNegativeNumber('--timeout', tc.v, { integer: !!tc.integer }), (err: Error) => err.message.startsWith(`invalid --timeout "${tc.v}"`) && !err.message.includes('\n'));
});
