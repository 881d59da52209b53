import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isBadRequest } from './errors.js';
import { parseQuantity, parseCpuMillis, parseBytes, canonicalQuantity, formatCpuMillis, formatBytes, compareQuantities, isValidQuantity, ERR_FORMAT_WRONG, ERR_SUFFIX } from './quantity.js';

describe('parse', () => {
  const cases: { in: string | number; value: number; millis: number; bytes: number }[] = [
    { in: '100m', value: 0.1, millis: 100, bytes: 1 },
    { in: '1.5', value: 1.5, millis: 1500, bytes: 2 },
    { in: '1', value: 1, millis: 1000, bytes: 1 },
    { in: 2, value: 2, millis: 2000, bytes: 2 },
    { in: 0.25, value: 0.25, millis: 250, bytes: 1 },
    { in: '128Mi', value: 134217728, millis: 134217728000, bytes: 134217728 },
    { in: '1Ki', value: 1024, millis: 1024000, bytes: 1024 },
    { in: '1G', value: 1e9, millis: 1e12, bytes: 1e9 },
    { in: '1e3', value: 1000, millis: 1e6, bytes: 1000 },
    { in: '1E3', value: 1000, millis: 1e6, bytes: 1000 },
    { in: '5k', value: 5000, millis: 5e6, bytes: 5000 },
    { in: '0', value: 0, millis: 0, bytes: 0 },
    { in: '1n', value: 1e-9, millis: 1, bytes: 1 },
    { in: '-1', value: -1, millis: -1000, bytes: -1 },
    { in: '.5', value: 0.5, millis: 500, bytes: 1 },
    { in: '0.1m', value: 0.0001, millis: 1, bytes: 1 },
  ];
  for (const tc of cases) {
    test(`${tc.in}`, () => {
      assert.ok(Math.abs(parseQuantity(tc.in) - tc.value) < 1e-12 * Math.max(1, tc.value));
      assert.equal(parseCpuMillis(tc.in), tc.millis);
      assert.equal(parseBytes(tc.in), tc.bytes);
    });
  }
  const bad = [
    { in: '', msg: ERR_FORMAT_WRONG }, { in: 'abc', msg: ERR_FORMAT_WRONG }, { in: '1 Gi', msg: ERR_FORMAT_WRONG },
    { in: '1Gb', msg: ERR_FORMAT_WRONG }, { in: '1mm', msg: ERR_SUFFIX }, { in: '1KiB', msg: ERR_FORMAT_WRONG }, { in: '.', msg: ERR_FORMAT_WRONG },
  ];
  for (const tc of bad) {
    test(`${JSON.stringify(tc.in)} is invalid`, () => {
      assert.throws(() => parseQuantity(tc.in), (e: unknown) => isBadRequest(e) && (e as Error).message === tc.msg);
      assert.equal(isValidQuantity(tc.in), false);
    });
  }
});

describe('canonical form', () => {
  const cases = [
    ['0.5', '500m'], ['1000m', '1'], ['100m', '100m'], ['1.5', '1500m'], ['2000', '2k'], ['1500', '1500'],
    ['128Mi', '128Mi'], ['2048Ki', '2Mi'], ['1536Mi', '1536Mi'], ['1Gi', '1Gi'], ['512', '512'], ['0.5Ki', '512'],
    // Expected values below were checked against kubectl 1.32 (`kubectl set resources --local`).
    ['1e3', '1e3'], ['1E3', '1E3'], ['1e-3', '1e-3'], ['12e5', '1200e3'], ['1e20', '100e18'], ['2.5e3', '2500'], ['7.5e-1', '750e-3'],
    ['1.5Gi', '1536Mi'], ['1024Mi', '1Gi'], ['1025Ki', '1025Ki'], ['3000000Ki', '3000000Ki'], ['1.1n', '2n'], ['0.000000001', '1n'],
    ['01', '01'], ['0100m', '0100m'], ['+1', '+1'], ['1e+3', '1e+3'], ['-0', '0'], ['0.50', '500m'], ['100.0m', '100m'], ['9Ki', '9Ki'], ['0Ki', '0'], ['1.0Ki', '1Ki'], ['5e-9', '5e-9'], ['1G', '1G'], ['0', '0'], ['0.1m', '100u'], ['0.0001m', '100n'], ['1.0', '1'], [1, '1'], [0.5, '500m'],
  ] as const;
  for (const [input, want] of cases) test(`${input} → ${want}`, () => assert.equal(canonicalQuantity(input), want));
  test('format helpers', () => {
    assert.equal(formatCpuMillis(1500), '1500m');
    assert.equal(formatCpuMillis(2000), '2');
    assert.equal(formatBytes(134217728), '128Mi');
    assert.equal(formatBytes(1000), '1k');
    assert.equal(formatBytes(1e9, 'DecimalSI'), '1G');
  });
  test('compare', () => {
    assert.equal(compareQuantities('1', '1000m'), 0);
    assert.equal(compareQuantities('1Gi', '1G'), 1);
    assert.equal(compareQuantities('100m', '0.2'), -1);
  });
});
