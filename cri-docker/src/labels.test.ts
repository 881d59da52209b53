import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromDockerLabels, parseDockerTime, toDockerLabels, NODE_LABEL } from './labels.js';

test('labels and annotations round-trip through Docker labels without internal ones', () => {
  const d = toDockerLabels({ app: 'web' }, { 'kubernetes.io/config.seen': 'x' }, { [NODE_LABEL]: 'n1' });
  assert.deepEqual(d, { app: 'web', 'annotation.kubernetes.io/config.seen': 'x', [NODE_LABEL]: 'n1' });
  assert.deepEqual(fromDockerLabels(d), { labels: { app: 'web' }, annotations: { 'kubernetes.io/config.seen': 'x' } });
});

test('parseDockerTime keeps nanoseconds and maps the zero time to 0', () => {
  assert.equal(parseDockerTime('0001-01-01T00:00:00Z'), 0);
  assert.equal(parseDockerTime(''), 0);
  const ns = parseDockerTime('2026-11-30T08:26:28.633123456Z');
  assert.equal(Math.floor(ns / 1e6), Date.parse('2026-11-30T08:26:28.633Z'));
  assert.ok(Math.abs((ns % 1e6) - 123456) < 1000);
});
