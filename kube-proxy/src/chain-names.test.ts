import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base32, serviceChain, endpointChain, servicePortName } from './chain-names.js';

const b32: [string, string][] = [['', ''], ['f', 'MY======'], ['fo', 'MZXQ===='], ['foo', 'MZXW6==='], ['foob', 'MZXW6YQ='], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI======']];
for (const [input, want] of b32) test(`base32 of "${input}" is RFC 4648`, () => assert.equal(base32(Buffer.from(input)), want));

test('chain names are the upstream hashes', () => {
  // Upstream kube-proxy's iptables proxier test: servicePortChainName("ns1/svc1:p80", "tcp").
  assert.equal(serviceChain(servicePortName('ns1', 'svc1', 'p80'), 'TCP'), 'KUBE-SVC-XPGD46QRK7WJZT7O');
  assert.match(endpointChain('ns1/svc1:p80', 'tcp', '10.180.0.1:80'), /^KUBE-SEP-[A-Z2-7]{16}$/);
  assert.equal(servicePortName('ns', 'svc', ''), 'ns/svc');
});
