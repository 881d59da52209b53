import assert from 'node:assert/strict';
import { test } from 'node:test';
import { partitionPlan, renderArgv } from './partition.js';

test('partitionPlan: a chain of DROPs per address and direction, jumped to first from INPUT, OUTPUT and FORWARD', () => {
  const p = partitionPlan({ netns: 'mk8s-node-2', addresses: ['10.240.0.1'] });
  assert.deepEqual(p.apply.map(renderArgv), [
    'ip netns exec mk8s-node-2 iptables -w 5 -N MK8S-CHAOS-PARTITION',
    'ip netns exec mk8s-node-2 iptables -w 5 -A MK8S-CHAOS-PARTITION -s 10.240.0.1/32 -j DROP',
    'ip netns exec mk8s-node-2 iptables -w 5 -A MK8S-CHAOS-PARTITION -d 10.240.0.1/32 -j DROP',
    "ip netns exec mk8s-node-2 iptables -w 5 -I INPUT 1 -m comment --comment 'mk8s chaos partition' -j MK8S-CHAOS-PARTITION",
    "ip netns exec mk8s-node-2 iptables -w 5 -I OUTPUT 1 -m comment --comment 'mk8s chaos partition' -j MK8S-CHAOS-PARTITION",
    "ip netns exec mk8s-node-2 iptables -w 5 -I FORWARD 1 -m comment --comment 'mk8s chaos partition' -j MK8S-CHAOS-PARTITION",
  ]);
  assert.deepEqual(p.undo.map(renderArgv), [
    "ip netns exec mk8s-node-2 iptables -w 5 -D INPUT -m comment --comment 'mk8s chaos partition' -j MK8S-CHAOS-PARTITION",
    "ip netns exec mk8s-node-2 iptables -w 5 -D OUTPUT -m comment --comment 'mk8s chaos partition' -j MK8S-CHAOS-PARTITION",
    "ip netns exec mk8s-node-2 iptables -w 5 -D FORWARD -m comment --comment 'mk8s chaos partition' -j MK8S-CHAOS-PARTITION",
    'ip netns exec mk8s-node-2 iptables -w 5 -F MK8S-CHAOS-PARTITION',
    'ip netns exec mk8s-node-2 iptables -w 5 -X MK8S-CHAOS-PARTITION',
  ]);
});

test('partitionPlan: several addresses, deduplicated and sorted', () => {
  const p = partitionPlan({ netns: 'mk8s-node-1', addresses: ['10.240.0.2', '10.240.0.1', '10.240.0.2'] });
  const drops = p.apply.filter((a) => a.includes('DROP')).map((a) => a.slice(-4, -2).join(' '));
  assert.deepEqual(drops, ['-s 10.240.0.1/32', '-d 10.240.0.1/32', '-s 10.240.0.2/32', '-d 10.240.0.2/32']);
});

for (const tc of [
  { o: { netns: 'default', addresses: ['10.240.0.1'] }, err: /not a node namespace of this cluster/ },
  { o: { netns: 'mk8s-node-1; rm -rf /', addresses: ['10.240.0.1'] }, err: /not a node namespace/ },
  { o: { netns: 'mk8s-node-1', addresses: [] }, err: /no control-plane address/ },
  { o: { netns: 'mk8s-node-1', addresses: ['10.240.0.0/24'] }, err: /not an IPv4 address/ },
  { o: { netns: 'mk8s-node-1', addresses: ['10.240.0.256'] }, err: /not an IPv4 address/ },
]) test(`partitionPlan refuses ${JSON.stringify(tc.o)}`, () => assert.throws(() => partitionPlan(tc.o), tc.err));
