import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resourceVersionCaughtUp } from './helpers.js';

test('resourceVersionCaughtUp: etcd revisions compared exactly as upstream assume caches do; others by equality only', () => {
  const table: Array<[string | undefined, string, boolean]> = [
    ['10', '10', true],
    ['11', '10', true],
    ['9', '10', false],
    // Past 2^53 a float comparison says equal; BigInt does not.
    ['9007199254740993', '9007199254740992', true],
    ['9007199254740992', '9007199254740993', false],
    // Not decimal integers: opaque, equality only.
    ['abc', 'abc', true],
    ['abd', 'abc', false],
    ['010', '9', false],
    ['1e3', '999', false],
    [undefined, '5', false],
    ['', '5', false],
  ];
  for (const [cached, written, want] of table) assert.equal(resourceVersionCaughtUp(cached, written), want, `${cached} vs ${written}`);
});
