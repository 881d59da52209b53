import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@mk8s/api';
import { etcHostsContent, etcHostsMounts, parseResolvConf, podDnsConfig, podFqdn, podHostname } from './dns.js';

const cluster = { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local' };
const pod = (spec: Record<string, unknown> = {}, name = 'web-1'): Pod => ({ metadata: { name, namespace: 'shop', uid: 'u1' }, spec: { containers: [{ name: 'c' }], ...spec } } as Pod);
const clusterFirst = { servers: ['10.96.0.10'], searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local'], options: ['ndots:5'] };

const cases: { name: string; pod: Pod; settings?: Parameters<typeof podDnsConfig>[1]; want: ReturnType<typeof podDnsConfig> }[] = [
  { name: 'ClusterFirst is the default', pod: pod(), want: clusterFirst },
  { name: 'ClusterFirst with hostNetwork falls back to Default', pod: pod({ hostNetwork: true }), want: undefined },
  { name: 'ClusterFirstWithHostNet uses the cluster DNS on the host network', pod: pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), want: clusterFirst },
  { name: 'Default is the node\'s resolv.conf', pod: pod({ dnsPolicy: 'Default' }), want: undefined },
  { name: 'Default merges dnsConfig into the node\'s file when it is known', pod: pod({ dnsPolicy: 'Default', dnsConfig: { searches: ['corp'], options: [{ name: 'ndots', value: '2' }] } }),
    settings: { ...cluster, nodeResolvConf: { servers: ['10.240.0.1'], searches: ['lan'], options: ['ndots:1', 'edns0'] } },
    want: { servers: ['10.240.0.1'], searches: ['lan', 'corp'], options: ['ndots:2', 'edns0'] } },
  { name: 'None takes only dnsConfig', pod: pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.2.3.4'], searches: ['a.b'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } }),
    want: { servers: ['1.2.3.4'], searches: ['a.b'], options: ['ndots:2', 'edns0'] } },
  { name: 'ClusterFirst merges dnsConfig: servers and searches appended, options replaced by name', pod: pod({ dnsConfig: { nameservers: ['1.1.1.1'], searches: ['corp', 'svc.cluster.local'], options: [{ name: 'ndots', value: '1' }] } }),
    want: { servers: ['10.96.0.10', '1.1.1.1'], searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp'], options: ['ndots:1'] } },
  { name: 'at most 3 nameservers', pod: pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'] } }), want: { servers: ['1.1.1.1', '2.2.2.2', '3.3.3.3'], searches: [], options: [] } },
  { name: 'no --cluster-dns: ClusterFirst is Default', pod: pod(), settings: { clusterDNS: [], clusterDomain: 'cluster.local' }, want: undefined },
  { name: 'another cluster domain', pod: pod(), settings: { clusterDNS: ['10.0.0.10'], clusterDomain: 'k8s.example' }, want: { servers: ['10.0.0.10'], searches: ['shop.svc.k8s.example', 'svc.k8s.example', 'k8s.example'], options: ['ndots:5'] } },
];
for (const tc of cases) test(`podDnsConfig: ${tc.name}`, () => assert.deepEqual(podDnsConfig(tc.pod, tc.settings ?? cluster), tc.want));

test('hostname: spec.hostname over the name, 63 characters at most; FQDN only with a subdomain', () => {
  assert.equal(podHostname(pod({ hostname: 'db-0' })), 'db-0');
  assert.equal(podHostname(pod({}, `${'a'.repeat(62)}-bcd`)), 'a'.repeat(62));
  assert.equal(podFqdn(pod({ hostname: 'db-0', subdomain: 'db' }), 'cluster.local'), 'db-0.db.shop.svc.cluster.local');
  assert.equal(podFqdn(pod({ hostname: 'db-0' }), 'cluster.local'), undefined);
});

test('/etc/hosts names the pod (FQDN first with a subdomain) and lists hostAliases', () => {
  const text = etcHostsContent(pod({ hostname: 'db-0', subdomain: 'db', hostAliases: [{ ip: '10.1.2.3', hostnames: ['foo.local', 'bar'] }] }), ['10.244.1.5'], 'cluster.local');
  assert.match(text, /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
  assert.match(text, /\n10\.244\.1\.5\tdb-0\.db\.shop\.svc\.cluster\.local\tdb-0\n/);
  assert.match(text, /# Entries added by HostAliases\.\n10\.1\.2\.3\tfoo\.local\tbar\n$/);
  assert.match(etcHostsContent(pod(), ['10.244.1.6'], 'cluster.local'), /\n10\.244\.1\.6\tweb-1\n$/);
});

test('the hosts file is mounted unless hostNetwork, no IP yet, or the container mounts its own', () => {
  assert.deepEqual(etcHostsMounts(pod(), {}, ['10.244.1.6'], '/p'), [{ containerPath: '/etc/hosts', hostPath: '/p/etc-hosts' }]);
  assert.deepEqual(etcHostsMounts(pod({ hostNetwork: true }), {}, ['10.240.0.11'], '/p'), []);
  assert.deepEqual(etcHostsMounts(pod(), {}, [], '/p'), []);
  assert.deepEqual(etcHostsMounts(pod(), { volumeMounts: [{ name: 'h', mountPath: '/etc/hosts' }] }, ['10.244.1.6'], '/p'), []);
});

test('parseResolvConf reads nameservers, the search list and options', () => {
  assert.deepEqual(parseResolvConf('# c\nnameserver 10.0.0.1\nnameserver 10.0.0.2 \nsearch a b\noptions ndots:1 edns0\n'), { servers: ['10.0.0.1', '10.0.0.2'], searches: ['a', 'b'], options: ['ndots:1', 'edns0'] });
});
