import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '@mk8s/api';
import { desiredRoutes } from './route-agent.js';
import { renderConflist } from './conflist.js';

const node = (name: string, ip?: string, podCIDR?: string, extra: Partial<Node> = {}): Node => ({
  metadata: { name }, spec: podCIDR ? { podCIDR } : {}, status: ip ? { addresses: [{ type: 'InternalIP', address: ip }, { type: 'Hostname', address: name }] } : {}, ...extra,
});

const cases: { name: string; nodes: Node[]; want: { dst: string; via: string }[] }[] = [
  { name: 'routes every other node and not itself', nodes: [node('a', '10.240.0.11', '10.244.0.0/24'), node('b', '10.240.0.12', '10.244.1.0/24'), node('c', '10.240.0.13', '10.244.2.0/24')],
    want: [{ dst: '10.244.1.0/24', via: '10.240.0.12' }, { dst: '10.244.2.0/24', via: '10.240.0.13' }] },
  { name: 'skips a node without podCIDR or without InternalIP', nodes: [node('a', '10.240.0.11', '10.244.0.0/24'), node('b', '10.240.0.12'), node('c', undefined, '10.244.2.0/24')], want: [] },
  { name: 'skips a node being deleted', nodes: [node('b', '10.240.0.12', '10.244.1.0/24', { metadata: { name: 'b', deletionTimestamp: '2026-01-01T00:00:00Z' } })], want: [] },
  { name: 'uses podCIDRs and ignores IPv6', nodes: [node('b', '10.240.0.12', undefined, { spec: { podCIDRs: ['10.244.1.0/24', 'fd00::/64'] } })], want: [{ dst: '10.244.1.0/24', via: '10.240.0.12' }] },
  { name: 'normalizes a CIDR with host bits', nodes: [node('b', '10.240.0.12', '10.244.1.7/24')], want: [{ dst: '10.244.1.0/24', via: '10.240.0.12' }] },
];
for (const tc of cases) test(`desiredRoutes ${tc.name}`, () => assert.deepEqual(desiredRoutes(tc.nodes, 'a'), tc.want));

test('the conflist names mk8s-bridge and the node pod CIDR', () => {
  const c = JSON.parse(renderConflist({ podCidr: '10.244.3.0/24', dataDir: '/var/lib/x' }));
  assert.equal(c.cniVersion, '1.0.0');
  assert.deepEqual(c.plugins[0], { type: 'mk8s-bridge', bridge: 'cni0', mtu: 1500, hairpinMode: true, podCIDR: '10.244.3.0/24', dataDir: '/var/lib/x' });
});
