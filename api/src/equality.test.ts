import { test } from 'node:test';
import assert from 'node:assert/strict';
import { semanticEqual } from './equality.js';

const cases: { name: string; a: unknown; b: unknown; want: boolean }[] = [
  { name: 'identical', a: { a: 1 }, b: { a: 1 }, want: true },
  { name: 'absent vs empty list', a: { a: [] }, b: {}, want: true },
  { name: 'null vs empty map', a: { a: null }, b: { a: {} }, want: true },
  { name: 'different scalar', a: { a: 1 }, b: { a: 2 }, want: false },
  { name: 'quantities by value', a: { resources: { limits: { cpu: '1' } } }, b: { resources: { limits: { cpu: '1000m' } } }, want: true },
  { name: 'quantities differ', a: { requests: { memory: '1Gi' } }, b: { requests: { memory: '1G' } }, want: false },
  { name: 'strings outside quantity maps are literal', a: { image: '1' }, b: { image: '1000m' }, want: false },
  { name: 'timestamps by second', a: { t: '2026-01-01T00:00:00Z' }, b: { t: '2026-01-01T00:00:00.500Z' }, want: true },
  { name: 'list order matters', a: [1, 2], b: [2, 1], want: false },
];
for (const tc of cases) test(tc.name, () => assert.equal(semanticEqual(tc.a, tc.b), tc.want));
