import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, rfc3339 } from './meta.js';

test('parseDuration understands Go durations', () => {
  for (const [s, ms] of [['50s', 50_000], ['1m30s', 90_000], ['300ms', 300], ['1h', 3_600_000], ['5', 5000], ['1.5s', 1500]] as const) {
    assert.equal(parseDuration(s), ms, s);
  }
  assert.throws(() => parseDuration('5x'));
  assert.throws(() => parseDuration(''));
});

test('rfc3339 prints second precision', () => {
  assert.equal(rfc3339(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), '2024-01-02T03:04:05Z');
});
