import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makePod } from '../../testing/wrappers.js';
import { PrioritySort } from './priority-sort.js';

const q = (priority: number, timestamp: number) => ({ pod: makePod('p', { priority }), timestamp, attempts: 0, initialAttemptTimestamp: undefined, unschedulablePlugins: new Set<string>() });
for (const tc of [
  { name: 'higher priority first', a: q(100, 2), b: q(10, 1), want: true },
  { name: 'lower priority later', a: q(10, 1), b: q(100, 2), want: false },
  { name: 'equal priority: earlier first', a: q(5, 1), b: q(5, 2), want: true },
  { name: 'equal priority and time: not less', a: q(5, 1), b: q(5, 1), want: false },
]) test(tc.name, () => assert.equal(new PrioritySort().less(tc.a, tc.b), tc.want));
