import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CumulativeSum } from './cumulative-sum.js';

test('CumulativeSum stays monotonic as members come, grow, restart and go', () => {
  const s = new CumulativeSum();
  const steps: { members: [string, number][]; want: number }[] = [
    { members: [['a', 10], ['b', 5]], want: 15 },
    { members: [['a', 12], ['b', 9]], want: 21 },
    { members: [['a', 14]], want: 23 },                   // b gone: its 9 stays in the total
    { members: [['a', 14], ['c', 1]], want: 24 },         // c new: counted from its first value
    { members: [['a', 2], ['c', 1]], want: 26 },          // a restarted from 0: its 14 is kept
    { members: [], want: 26 },
  ];
  for (const st of steps) assert.equal(s.update(new Map(st.members)), st.want, JSON.stringify(st.members));
});
