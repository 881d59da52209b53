import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveFenceposts, scaledValue } from './intstr.js';

test('resolveFenceposts follows Kubernetes rounding', () => {
  const cases: { surge: number | string; unavail: number | string; desired: number; want: { surge: number; unavailable: number } }[] = [
    { surge: '25%', unavail: '25%', desired: 10, want: { surge: 3, unavailable: 2 } },
    { surge: '25%', unavail: '25%', desired: 4, want: { surge: 1, unavailable: 1 } },
    { surge: '25%', unavail: '25%', desired: 1, want: { surge: 1, unavailable: 0 } },
    { surge: 0, unavail: 0, desired: 5, want: { surge: 0, unavailable: 1 } },
    { surge: '0%', unavail: '0%', desired: 5, want: { surge: 0, unavailable: 1 } },
    { surge: '10%', unavail: '10%', desired: 3, want: { surge: 1, unavailable: 0 } },
    { surge: 2, unavail: 1, desired: 3, want: { surge: 2, unavailable: 1 } },
    { surge: '50%', unavail: '1%', desired: 0, want: { surge: 0, unavailable: 1 } },
    { surge: '100%', unavail: '0%', desired: 3, want: { surge: 3, unavailable: 0 } },
  ];
  for (const tc of cases) assert.deepEqual(resolveFenceposts(tc.surge, tc.unavail, tc.desired), tc.want, JSON.stringify(tc));
});

test('scaledValue rejects non-percent strings', () => {
  assert.equal(scaledValue('3', 10, true), 3);
  assert.throws(() => scaledValue('abc', 10, true), /invalid value/);
});
