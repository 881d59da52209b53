import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CidrSet } from './cidrset.js';

test('cidrset hands out distinct /24s of 10.244.0.0/16 and skips occupied ones', () => {
  const s = new CidrSet('10.244.0.0/16', 24);
  assert.equal(s.occupy('10.244.1.0/24'), true);
  assert.equal(s.occupy('10.245.0.0/24'), false, 'outside the cluster CIDR');
  assert.equal(s.occupy('10.244.2.0/25'), false, 'wrong mask');
  assert.equal(s.allocateNext(), '10.244.0.0/24');
  assert.equal(s.allocateNext(), '10.244.2.0/24');
  const seen = new Set(['10.244.0.0/24', '10.244.1.0/24', '10.244.2.0/24']);
  for (let i = 3; i < 256; i++) {
    const c = s.allocateNext();
    assert.ok(c && !seen.has(c), `${c} is new`);
    seen.add(c);
  }
  assert.equal(s.allocateNext(), undefined, 'exhausted');
  s.release('10.244.7.0/24');
  assert.equal(s.allocateNext(), '10.244.7.0/24');
});

test('cidrset with a small range', () => {
  const s = new CidrSet('192.168.0.0/23', 24);
  assert.deepEqual([s.allocateNext(), s.allocateNext(), s.allocateNext()], ['192.168.0.0/24', '192.168.1.0/24', undefined]);
});
