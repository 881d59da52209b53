import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTrace } from './format-trace.js';

test('formatTrace prints one line per link plus owner and hint for the broken one', () => {
  const text = formatTrace([{ step: 'stored', status: 'ok', evidence: 'pod/x uid=1' }, { step: 'scheduled', status: 'broken', evidence: 'no', owner: 'kube-scheduler', hint: 'look' }]);
  assert.equal(text.split('\n').length, 5);
  assert.match(text, /✗ --:--:--  scheduled  no\n.*owner: kube-scheduler\n.*look at: look/);
});
