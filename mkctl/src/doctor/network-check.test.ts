import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkNetwork, formatReports, type ApiView, type NodeObservation } from './network-check.js';

const api: ApiView = {
  nodes: [{ name: 'node-1', internalIP: '10.240.0.11', podCIDR: '10.244.0.0/24', ready: true }, { name: 'node-2', internalIP: '10.240.0.12', podCIDR: '10.244.1.0/24', ready: true }],
  pods: [{ namespace: 'd', name: 'web', node: 'node-1', ip: '10.244.0.5', hostNetwork: false }],
  services: [{ namespace: 'd', name: 'web', clusterIP: '10.96.0.20', readyEndpoints: 1 }, { namespace: 'd', name: 'db', clusterIP: '10.96.0.30', readyEndpoints: 2 }],
};
const nat = [
  '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  '-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "d/web cluster IP" -m tcp --dport 80 -j KUBE-SVC-A',
  '-A KUBE-SVC-A -m comment --comment "d/web -> 10.244.0.5:80" -j KUBE-SEP-1',
  '-A KUBE-SERVICES -d 10.96.0.99/32 -p tcp -m comment --comment "d/gone cluster IP" -m tcp --dport 80 -j KUBE-SVC-B',
].join('\n');

test('healthy node: facts and no problems', () => {
  const obs: NodeObservation = { node: 'node-1', reachable: true, bridge: { up: true, addrs: ['10.244.0.1/24'] }, routes: ['10.244.1.0/24 via 10.240.0.12 dev eth0 proto 77 '], allocations: { '10.244.0.5': 'abc' }, nat: nat.split('\n').slice(0, 3).join('\n') };
  const [r] = checkNetwork({ ...api, services: [api.services[0]!] }, [obs]);
  assert.deepEqual(r!.problems, []);
  assert.match(formatReports([r!]), /^node-1: ok\n  bridge cni0 UP 10\.244\.0\.1\/24\n/);
});

test('leaked IPs, missing and stale routes, missing and stale rules', () => {
  const obs: NodeObservation = {
    node: 'node-1', reachable: true, bridge: { up: true, addrs: ['10.244.0.1/24'] },
    routes: ['10.244.7.0/24 via 10.240.0.50 dev eth0 proto 77 '], allocations: { '10.244.0.5': 'abc', '10.244.0.9': 'deadbeefcafe0000' }, nat,
  };
  const problems = checkNetwork(api, [obs])[0]!.problems.join('\n');
  assert.match(problems, /leaked IP 10\.244\.0\.9 \(container deadbeefcafe\)/);
  assert.match(problems, /missing route to node-2's pods 10\.244\.1\.0\/24 via 10\.240\.0\.12/);
  assert.match(problems, /stale route "10\.244\.7\.0\/24 via 10\.240\.0\.50 dev eth0 proto 77": no node owns 10\.244\.7\.0\/24/);
  assert.match(problems, /missing rules for service d\/db/);
  assert.match(problems, /stale rule for 10\.96\.0\.99 \(d\/gone cluster IP\)/);
});

test('a bridge with the wrong gateway and an unreadable node', () => {
  const rs = checkNetwork(api, [
    { node: 'node-1', reachable: true, bridge: { up: false, addrs: ['10.244.9.1/24'] }, routes: [], allocations: {}, nat: '' },
    { node: 'node-2', reachable: false, error: 'Cannot open network namespace', routes: [], allocations: {} },
  ]);
  assert.match(rs[0]!.problems.join('\n'), /bridge cni0 is DOWN[\s\S]*should hold 10\.244\.0\.1\/24/);
  assert.match(rs[0]!.problems.join('\n'), /pod d\/web has IP 10\.244\.0\.5 that IPAM did not allocate/);
  assert.deepEqual(rs[1]!.problems, ['cannot read the node\'s network namespace: Cannot open network namespace']);
});

test('DNS: the kubernetes Service name must resolve to its ClusterIP from the node', () => {
  const view: ApiView = { ...api, services: [{ namespace: 'default', name: 'kubernetes', clusterIP: '10.96.0.1', readyEndpoints: 1 }] };
  const obs = (dns: NodeObservation['dns']): NodeObservation => ({ node: 'node-1', reachable: true, bridge: { up: true, addrs: ['10.244.0.1/24'] }, routes: [], allocations: {}, nat: '', ...(dns ? { dns } : {}) });
  const ok = checkNetwork(view, [obs({ node: 'node-1', name: 'kubernetes.default.svc.cluster.local', addresses: ['10.96.0.1'], ms: 3 })])[0]!;
  assert.ok(ok.facts.includes('DNS: kubernetes.default.svc.cluster.local → 10.96.0.1 in 3 ms'), ok.facts.join('\n'));
  const bad = checkNetwork(view, [obs({ node: 'node-1', name: 'kubernetes.default.svc.cluster.local', addresses: [], error: 'ETIMEOUT', ms: 2000 })])[0]!;
  assert.match(bad.problems.join('\n'), /DNS: kubernetes\.default\.svc\.cluster\.local from node-1: no answer from 10\.96\.0\.10 in 2 s/);
});
