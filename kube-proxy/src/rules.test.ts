import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice, Service } from '@mk8s/api';
import { renderRules, renderCleanup } from './rules.js';
import { endpointsByServicePort, servicePorts } from './service-state.js';
import { serviceChain, endpointChain, externalChain } from './chain-names.js';

const svc = (name: string, spec: NonNullable<Service['spec']>, ns = 'ns1'): Service => ({ metadata: { name, namespace: ns }, spec });
const slice = (svcName: string, endpoints: { ip: string; ready?: boolean; serving?: boolean; terminating?: boolean }[], port = 8080, portName = 'p80', ns = 'ns1'): EndpointSlice => ({
  metadata: { name: `${svcName}-abc`, namespace: ns, labels: { 'kubernetes.io/service-name': svcName } },
  addressType: 'IPv4',
  ports: [{ name: portName, port, protocol: 'TCP' }],
  endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ...(e.ready !== undefined ? { ready: e.ready } : {}), ...(e.serving !== undefined ? { serving: e.serving } : {}), ...(e.terminating !== undefined ? { terminating: e.terminating } : {}) } })),
});
const render = (services: Service[], slices: EndpointSlice[], existing: string[] = []) =>
  renderRules({ services: servicePorts(services), endpoints: endpointsByServicePort(slices), clusterCidr: '10.244.0.0/16', existingNatChains: existing });
/** The lines of one chain in one table of the rendered text. */
const chainLines = (text: string, table: 'nat' | 'filter', chain: string) => {
  const section = text.split('*').find((s) => s.startsWith(table))!;
  return section.split('\n').filter((l) => l.startsWith(`-A ${chain} `));
};

const SVC = serviceChain('ns1/svc1:p80', 'TCP');
const SEP1 = endpointChain('ns1/svc1:p80', 'TCP', '10.244.1.2:8080');
const SEP2 = endpointChain('ns1/svc1:p80', 'TCP', '10.244.2.2:8080');
const SEP3 = endpointChain('ns1/svc1:p80', 'TCP', '10.244.2.3:8080');
const clusterIP = (extra: Partial<NonNullable<Service['spec']>> = {}) => svc('svc1', { type: 'ClusterIP', clusterIP: '10.96.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 8080 }], ...extra });

const cases: { name: string; services: Service[]; slices: EndpointSlice[]; check: (text: string) => void }[] = [
  {
    name: 'ClusterIP with three endpoints balances 1/3, 1/2, rest',
    services: [clusterIP()],
    slices: [slice('svc1', [{ ip: '10.244.2.3' }, { ip: '10.244.1.2' }, { ip: '10.244.2.2' }])],
    check: (t) => {
      assert.deepEqual(chainLines(t, 'nat', 'KUBE-SERVICES')[0], `-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 10.96.0.41/32 --dport 80 -j ${SVC}`);
      assert.deepEqual(chainLines(t, 'nat', SVC), [
        `-A ${SVC} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 10.96.0.41/32 --dport 80 ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ`,
        `-A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.244.1.2:8080" -m statistic --mode random --probability 0.3333333333 -j ${SEP1}`,
        `-A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.244.2.2:8080" -m statistic --mode random --probability 0.5000000000 -j ${SEP2}`,
        `-A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.244.2.3:8080" -j ${SEP3}`,
      ]);
      assert.deepEqual(chainLines(t, 'nat', SEP1), [
        `-A ${SEP1} -m comment --comment ns1/svc1:p80 -s 10.244.1.2/32 -j KUBE-MARK-MASQ`,
        `-A ${SEP1} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.244.1.2:8080`,
      ]);
      assert.deepEqual(chainLines(t, 'filter', 'KUBE-SERVICES'), []);
    },
  },
  {
    name: 'unready endpoints get no traffic',
    services: [clusterIP()],
    slices: [slice('svc1', [{ ip: '10.244.1.2' }, { ip: '10.244.2.2', ready: false }])],
    check: (t) => {
      assert.equal(chainLines(t, 'nat', SVC).filter((l) => l.includes('KUBE-SEP-')).length, 1);
      assert.ok(!t.includes(SEP2));
    },
  },
  {
    name: 'with none ready, serving terminating endpoints are used',
    services: [clusterIP()],
    slices: [slice('svc1', [{ ip: '10.244.1.2', ready: false, serving: true, terminating: true }, { ip: '10.244.2.2', ready: false, serving: false, terminating: true }])],
    check: (t) => { assert.ok(t.includes(SEP1)); assert.ok(!t.includes(SEP2)); },
  },
  {
    name: 'a Service without endpoints is rejected in filter KUBE-SERVICES and has no nat chain',
    services: [clusterIP()],
    slices: [slice('svc1', [{ ip: '10.244.1.2', ready: false }])],
    check: (t) => {
      assert.deepEqual(chainLines(t, 'filter', 'KUBE-SERVICES'), ['-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 10.96.0.41/32 --dport 80 -j REJECT']);
      assert.ok(!t.includes(SVC));
    },
  },
  {
    name: 'NodePort jumps through KUBE-EXT, which masquerades',
    services: [clusterIP({ type: 'NodePort', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }] })],
    slices: [slice('svc1', [{ ip: '10.244.1.2' }])],
    check: (t) => {
      const ext = externalChain('ns1/svc1:p80', 'TCP');
      assert.deepEqual(chainLines(t, 'nat', 'KUBE-NODEPORTS'), [`-A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp --dport 30080 -j ${ext}`]);
      assert.deepEqual(chainLines(t, 'nat', ext), [`-A ${ext} -m comment --comment "masquerade traffic for ns1/svc1:p80 external destinations" -j KUBE-MARK-MASQ`, `-A ${ext} -j ${SVC}`]);
      assert.match(chainLines(t, 'nat', 'KUBE-SERVICES').at(-1)!, /--dst-type LOCAL -j KUBE-NODEPORTS$/);
    },
  },
  {
    name: 'a NodePort without endpoints is rejected in KUBE-EXTERNAL-SERVICES',
    services: [clusterIP({ type: 'NodePort', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }] })],
    slices: [],
    check: (t) => assert.deepEqual(chainLines(t, 'filter', 'KUBE-EXTERNAL-SERVICES'), ['-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 30080 -j REJECT']),
  },
  {
    name: 'sessionAffinity ClientIP checks recent lists first and sets them on DNAT',
    services: [clusterIP({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } })],
    slices: [slice('svc1', [{ ip: '10.244.1.2' }, { ip: '10.244.2.2' }])],
    check: (t) => {
      const lines = chainLines(t, 'nat', SVC);
      assert.equal(lines[1], `-A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.244.1.2:8080" -m recent --name ${SEP1} --rcheck --seconds 600 --reap -j ${SEP1}`);
      assert.equal(lines[2], `-A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.244.2.2:8080" -m recent --name ${SEP2} --rcheck --seconds 600 --reap -j ${SEP2}`);
      assert.equal(chainLines(t, 'nat', SEP1)[1], `-A ${SEP1} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -m recent --name ${SEP1} --set -j DNAT --to-destination 10.244.1.2:8080`);
    },
  },
  {
    name: 'an endpoint off the pod network is always masqueraded (replies to pod IPs would be blackholed)',
    services: [clusterIP()],
    slices: [slice('svc1', [{ ip: '10.240.0.1' }])],
    check: (t) => {
      const sep = endpointChain('ns1/svc1:p80', 'TCP', '10.240.0.1:8080');
      assert.equal(chainLines(t, 'nat', sep)[0], `-A ${sep} -m comment --comment ns1/svc1:p80 -j KUBE-MARK-MASQ`);
    },
  },
  {
    name: 'headless and ExternalName Services are not programmed',
    services: [svc('h', { clusterIP: 'None', ports: [{ port: 80 }] }), svc('e', { type: 'ExternalName', externalName: 'x.example' })],
    slices: [],
    check: (t) => { assert.ok(!t.includes('ns1/h')); assert.ok(!t.includes('ns1/e')); },
  },
  {
    name: 'masquerade happens only for marked packets',
    services: [],
    slices: [],
    check: (t) => assert.deepEqual(chainLines(t, 'nat', 'KUBE-POSTROUTING'), [
      '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    ]),
  },
];
for (const tc of cases) test(`renderRules: ${tc.name}`, () => tc.check(render(tc.services, tc.slices).text));

test('renderRules declares our chains, deletes stale per-service chains and is deterministic', () => {
  const stale = endpointChain('ns1/gone:p', 'TCP', '10.244.9.9:80');
  const a = render([clusterIP()], [slice('svc1', [{ ip: '10.244.1.2' }])], [stale, 'KUBE-SERVICES', 'DOCKER', SVC]);
  const b = render([clusterIP()], [slice('svc1', [{ ip: '10.244.1.2' }])], [stale, 'KUBE-SERVICES', 'DOCKER', SVC]);
  assert.equal(a.text, b.text);
  // nat first (its bulk is streamed while the proxier still reads the kernel's chains), filter last.
  assert.ok(a.text.startsWith('*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n'));
  assert.ok(a.text.endsWith('COMMIT\n*filter\n:KUBE-SERVICES - [0:0]\n:KUBE-EXTERNAL-SERVICES - [0:0]\n:KUBE-FORWARD - [0:0]\n' +
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\n-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT\n' +
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\nCOMMIT\n'));
  assert.ok(a.text.includes(`:${stale} - [0:0]`));
  assert.ok(a.text.includes(`-X ${stale}\nCOMMIT`));
  assert.ok(!a.text.includes('DOCKER'));
  assert.ok(!a.text.includes(`-X ${SVC}`));
  assert.deepEqual(a.ruleCounts, { filter: 3, nat: 10 });
});

test('renderCleanup flushes and deletes only kube-proxy chains', () => {
  const t = renderCleanup({ nat: ['PREROUTING', 'DOCKER', 'KUBE-SERVICES', SVC, SEP1, 'KUBE-MARK-MASQ'], filter: ['INPUT', 'KUBE-FORWARD', 'DOCKER-USER'] });
  assert.equal(t, ['*filter', ':KUBE-FORWARD - [0:0]', '-X KUBE-FORWARD', 'COMMIT', '*nat',
    ':KUBE-MARK-MASQ - [0:0]', `:${SEP1} - [0:0]`, ':KUBE-SERVICES - [0:0]', `:${SVC} - [0:0]`,
    '-X KUBE-MARK-MASQ', `-X ${SEP1}`, '-X KUBE-SERVICES', `-X ${SVC}`, 'COMMIT', ''].join('\n'));
});

test('endpoints from several slices are merged and unnamed ports keyed as ns/name', () => {
  const m = endpointsByServicePort([slice('s', [{ ip: '10.0.0.2' }], 80, ''), slice('s', [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], 80, '')]);
  assert.deepEqual([...m.keys()], ['ns1/s/TCP']);
  assert.deepEqual(m.get('ns1/s/TCP')!.map((e) => e.ip), ['10.0.0.1', '10.0.0.2']);
});

test('incrementalRestoreInput rewrites only the changed Service\'s chains and deletes the gone ones', async () => {
  const { incrementalRestoreInput } = await import('./rules.js');
  const other = svc('other', { clusterIP: '10.96.0.50', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] });
  const otherSlice = slice('other', [{ ip: '10.244.3.3' }]);
  const prev = render([clusterIP(), other], [slice('svc1', [{ ip: '10.244.1.2' }, { ip: '10.244.2.2' }]), otherSlice]);
  const next = render([clusterIP(), other], [slice('svc1', [{ ip: '10.244.1.2' }, { ip: '10.244.2.3' }]), otherSlice]);
  const t = incrementalRestoreInput(prev, next);
  const OTHER = serviceChain('ns1/other:p80', 'TCP');
  assert.ok(t.includes(`:${SVC} - [0:0]`), 'the changed SVC chain is rewritten');
  assert.ok(t.includes(`:${SEP3} - [0:0]`), 'the new SEP chain is created');
  assert.ok(t.includes(`-X ${SEP2}`), 'the gone SEP chain is deleted');
  assert.ok(!t.includes(`:${OTHER} - [0:0]`), 'the unchanged Service is left alone');
  assert.ok(!t.includes(`:${SEP1} - [0:0]`), 'the unchanged endpoint is left alone');
  assert.ok(!t.includes('KUBE-SERVICES'), 'KUBE-SERVICES did not change: not rewritten');
  assert.ok(!t.includes('*filter'), 'filter did not change: not restored');
  assert.equal(incrementalRestoreInput(next, next), '', 'no change, no input');
  // A Service losing its last endpoint changes both tables: filter gets its REJECT in full,
  // nat KUBE-SERVICES is rewritten in full (jumps included) and its chains go.
  const empty = render([clusterIP(), other], [otherSlice]);
  const u = incrementalRestoreInput(next, empty);
  assert.ok(u.startsWith('*filter\n'));
  assert.ok(u.includes('ns1/svc1:p80 has no endpoints'));
  assert.ok(u.includes(':KUBE-SERVICES - [0:0]') && u.includes(`-A KUBE-SERVICES -m comment --comment "ns1/other:p80 cluster IP" -m tcp -p tcp -d 10.96.0.50/32 --dport 80 -j ${OTHER}`));
  assert.ok(u.includes(`-X ${SVC}`) && u.includes(`-X ${SEP1}`) && u.includes(`-X ${SEP3}`));
  assert.ok(!u.includes(`:${OTHER} - [0:0]`));
});

test('renderRules is the service ports\' rules joined in program order', async () => {
  const { renderServicePort, assembleRules, ruleContext } = await import('./rules.js');
  const services = [clusterIP(), svc('b', { type: 'NodePort', clusterIP: '10.96.0.51', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30081 }] })];
  const slices = [slice('svc1', [{ ip: '10.244.1.2' }]), slice('b', [{ ip: '10.244.1.5' }])];
  const sps = servicePorts(services);
  const eps = endpointsByServicePort(slices);
  const ctx = ruleContext('10.244.0.0/16');
  const parts = sps.map((sp) => renderServicePort(sp, eps.get(`${sp.name}/${sp.protocol}`) ?? [], ctx));
  assert.equal(assembleRules(parts, ctx).text, render(services, slices).text);
  assert.deepEqual(assembleRules(parts, ctx).ruleCounts, render(services, slices).ruleCounts);
});

test('large-cluster mode (upstream: over 1,000 endpoints) drops the comments of the per-endpoint rules only', () => {
  const eps = [{ ip: '10.244.1.2' }, { ip: '10.244.2.2' }];
  const t = renderRules({ services: servicePorts([clusterIP()]), endpoints: endpointsByServicePort([slice('svc1', eps)]), clusterCidr: '10.244.0.0/16', largeClusterMode: true }).text;
  assert.deepEqual(chainLines(t, 'nat', SVC), [
    `-A ${SVC} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 10.96.0.41/32 --dport 80 ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ`,
    `-A ${SVC} -m statistic --mode random --probability 0.5000000000 -j ${SEP1}`,
    `-A ${SVC} -j ${SEP2}`,
  ]);
  assert.deepEqual(chainLines(t, 'nat', SEP1), [`-A ${SEP1} -s 10.244.1.2/32 -j KUBE-MARK-MASQ`, `-A ${SEP1} -m tcp -p tcp -j DNAT --to-destination 10.244.1.2:8080`]);
  assert.match(chainLines(t, 'nat', 'KUBE-SERVICES')[0]!, /--comment "ns1\/svc1:p80 cluster IP"/);
});

test('large-cluster mode is chosen by the endpoint count: 1,000 keep comments, 1,001 do not', () => {
  const ips = (n: number) => Array.from({ length: n }, (_, i) => ({ ip: `10.244.${i >> 8}.${i & 255}` }));
  for (const [n, large] of [[1000, false], [1001, true]] as const) {
    const t = render([clusterIP()], [slice('svc1', ips(n))]).text;
    assert.equal(chainLines(t, 'nat', endpointChain('ns1/svc1:p80', 'TCP', '10.244.0.0:8080'))[0]!.includes('-m comment'), !large, `${n} endpoints`);
  }
});
