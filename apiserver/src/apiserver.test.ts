import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDurationMs } from './apiserver.js';

test('parseDurationMs reads Go durations for flags such as --etcd-compaction-interval', () => {
  assert.equal(parseDurationMs('5m'), 300_000);
  assert.equal(parseDurationMs('1h30m'), 5_400_000);
  assert.equal(parseDurationMs('1.5s'), 1500);
  assert.equal(parseDurationMs('250ms'), 250);
  assert.equal(parseDurationMs('0'), 0);
  assert.equal(parseDurationMs('0s'), 0);
  assert.throws(() => parseDurationMs('5'), /invalid duration/);
  assert.throws(() => parseDurationMs('5x'), /invalid duration/);
});
