import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ExecFile } from './node-exec.js';
import { localNodes, readProxyEvidence } from './proxy-rules.js';
import { probeDns } from './dns-probe.js';

const NAT = `*nat
-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "ns/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-ABC
-A KUBE-SVC-ABC -m comment --comment "ns/web:http" -m statistic --mode random --probability 0.5 -j KUBE-SEP-1
-A KUBE-SVC-ABC -m comment --comment "ns/web:http" -j KUBE-SEP-2
COMMIT
`;

/** `ip` as a table: netns list, and each node's iptables-save (a node missing from nat fails). */
function fakeIp(o: { netns: string; nat: Record<string, string> }) {
  const calls: string[][] = [];
  const exec: ExecFile = async (file, args) => {
    calls.push([file, ...args]);
    if (args.join(' ') === 'netns list') return o.netns;
    const node = args[2]!.replace(/^mk8s-/, '');
    const nat = o.nat[node];
    if (nat === undefined) throw new Error('iptables-save: exit 1\nmore');
    return nat;
  };
  return { exec, calls };
}

test('localNodes: mk8s-<node> namespaces that are DNS labels, only as root', async () => {
  const ip = fakeIp({ netns: 'mk8s-node-1 (id: 0)\nmk8s-node-2\nother\nmk8s-Bad;rm\n', nat: {} });
  assert.deepEqual([...(await localNodes({ exec: ip.exec, uid: 0 }))!].sort(), ['node-1', 'node-2']);
  assert.equal(await localNodes({ exec: ip.exec, uid: 1000 }), undefined);
  assert.equal(await localNodes({ exec: async () => { throw new Error('ip: not found'); }, uid: 0 }), undefined);
});

test('readProxyEvidence: KUBE-SVC chains per node, a failed iptables-save as evidence, unknown nodes unreadable', async () => {
  const ip = fakeIp({ netns: 'mk8s-n1\nmk8s-n2\n', nat: { n1: NAT } });
  const svcs = [{ namespace: 'ns', name: 'web' }, { namespace: 'ns', name: 'other' }];
  const ev = await readProxyEvidence(['n1', 'n2'], svcs, { exec: ip.exec, uid: 0 });
  assert.deepEqual(ev?.['n1'], [
    { node: 'n1', present: true, endpoints: 2, detail: 'ns/web → KUBE-SVC-ABC with 2 endpoints' },
    { node: 'n1', present: false, endpoints: 0, detail: 'no KUBE-SERVICES rule for ns/other' },
  ]);
  assert.deepEqual(ev?.['n2']?.map((e) => e.detail), ['iptables-save failed: iptables-save: exit 1', 'iptables-save failed: iptables-save: exit 1']);
  assert.deepEqual(ip.calls[1], ['ip', 'netns', 'exec', 'mk8s-n1', 'iptables-save', '-t', 'nat']);
  assert.equal(await readProxyEvidence(['n1', 'n3'], svcs, { exec: ip.exec, uid: 0 }), undefined);
  assert.equal(await readProxyEvidence(['n1'], svcs, { exec: ip.exec, uid: 1000 }), undefined);
});

test('probeDns: the child\'s JSON answer, or its failure as the error', async () => {
  const ok = await probeDns('n1', 'web.ns.svc.cluster.local', '10.96.0.10', { exec: async (_f, args) => { assert.equal(args[2], 'mk8s-n1'); return 'noise\n{"addresses":["10.96.0.20"],"ms":3}\n'; } });
  assert.deepEqual(ok, { node: 'n1', name: 'web.ns.svc.cluster.local', addresses: ['10.96.0.20'], ms: 3 });
  const bad = await probeDns('n1', 'x', '10.96.0.10', { exec: async () => { throw new Error('Cannot open network namespace'); } });
  assert.equal(bad.error, 'Cannot open network namespace');
});
