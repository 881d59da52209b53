import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice, Service } from '@mk8s/api';
import type { Answer } from 'dns-packet';
import { serviceRecords } from './records.js';
import { ancestors, parsePodName, reverseName } from './names.js';

const o = { zone: 'cluster.local', ttl: 5 };
const show = (rs: Answer[]) => rs.map((r) => `${r.name} ${r.type} ${JSON.stringify((r as { data: unknown }).data)}`).sort();
const svc = (spec: NonNullable<Service['spec']>, annotations?: Record<string, string>): Service => ({ metadata: { name: 's', namespace: 'n', ...(annotations ? { annotations } : {}) }, spec });
const sl = (addressType: string, eps: EndpointSlice['endpoints'], ports: EndpointSlice['ports'] = []): EndpointSlice => ({ addressType, endpoints: eps, ports, metadata: { name: `x-${Math.random()}` } });

const cases: { name: string; svc: Service; slices?: EndpointSlice[]; want: string[] }[] = [
  { name: 'ClusterIP not allocated yet: nothing', svc: svc({ ports: [{ port: 80 }] }), want: [] },
  { name: 'unnamed port: A and PTR, no SRV', svc: svc({ clusterIP: '10.96.0.5', ports: [{ port: 80 }] }), want: [
    '5.0.96.10.in-addr.arpa PTR "s.n.svc.cluster.local"', 's.n.svc.cluster.local A "10.96.0.5"'] },
  { name: 'dual stack: A and AAAA, ip6.arpa PTR', svc: svc({ clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5', 'fd00::5'], ports: [] }), want: [
    '5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa PTR "s.n.svc.cluster.local"',
    '5.0.96.10.in-addr.arpa PTR "s.n.svc.cluster.local"', 's.n.svc.cluster.local A "10.96.0.5"', 's.n.svc.cluster.local AAAA "fd00::5"'] },
  { name: 'ExternalName: a CNAME, trailing dot and case dropped', svc: svc({ type: 'ExternalName', externalName: 'DB.Example.org.' }), want: ['s.n.svc.cluster.local CNAME "db.example.org"'] },
  { name: 'headless: the same IP in two slices is one endpoint; SRV per slice port', svc: svc({ clusterIP: 'None' }), slices: [
    sl('IPv4', [{ addresses: ['10.244.0.1'], hostname: 'a' }], [{ name: 'Web', port: 8080, protocol: 'TCP' }]),
    sl('IPv4', [{ addresses: ['10.244.0.1'], hostname: 'a' }], [{ name: 'Web', port: 8080, protocol: 'TCP' }, { port: 9 }]),
  ], want: ['1.0.244.10.in-addr.arpa PTR "a.s.n.svc.cluster.local"', '_web._tcp.s.n.svc.cluster.local SRV {"priority":0,"weight":100,"port":8080,"target":"a.s.n.svc.cluster.local"}',
    'a.s.n.svc.cluster.local A "10.244.0.1"', 's.n.svc.cluster.local A "10.244.0.1"'] },
  { name: 'headless: the tolerate-unready annotation publishes not-ready endpoints', svc: svc({ clusterIP: 'None' }, { 'service.alpha.kubernetes.io/tolerate-unready-endpoints': 'true' }), slices: [
    sl('IPv4', [{ addresses: ['10.244.0.2'], conditions: { ready: false } }]),
  ], want: ['10-244-0-2.s.n.svc.cluster.local A "10.244.0.2"', '2.0.244.10.in-addr.arpa PTR "10-244-0-2.s.n.svc.cluster.local"', 's.n.svc.cluster.local A "10.244.0.2"'] },
  { name: 'headless: ready unset counts as ready; FQDN slices are ignored', svc: svc({ clusterIP: 'None' }), slices: [
    sl('IPv4', [{ addresses: ['10.244.0.3'] }]), sl('FQDN', [{ addresses: ['example.com'] }]),
  ], want: ['10-244-0-3.s.n.svc.cluster.local A "10.244.0.3"', '3.0.244.10.in-addr.arpa PTR "10-244-0-3.s.n.svc.cluster.local"', 's.n.svc.cluster.local A "10.244.0.3"'] },
];
for (const tc of cases) test(`serviceRecords: ${tc.name}`, () => assert.deepEqual(show(serviceRecords(tc.svc, tc.slices ?? [], o)), tc.want.sort()));

test('reverseName of IPv4, IPv6 and a non-IP', () => {
  assert.equal(reverseName('10.96.0.10'), '10.0.96.10.in-addr.arpa');
  assert.equal(reverseName('2001:db8::1'), '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
  assert.equal(reverseName('web'), undefined);
});

test('parsePodName reads a-b-c-d.<ns>.pod.<zone> and nothing else', () => {
  assert.deepEqual(parsePodName('10-244-1-5.shop.pod.cluster.local', 'cluster.local'), { ip: '10.244.1.5', namespace: 'shop' });
  assert.deepEqual(parsePodName('fd00--5.shop.pod.cluster.local', 'cluster.local'), { ip: 'fd00::5', namespace: 'shop' });
  assert.equal(parsePodName('10-244-1-5.x.shop.pod.cluster.local', 'cluster.local'), undefined);
  assert.equal(parsePodName('300-1-1-1.shop.pod.cluster.local', 'cluster.local'), undefined);
});

test('ancestors lists the empty non-terminals up to the zone', () => {
  assert.deepEqual(ancestors('_http._tcp.web.shop.svc.cluster.local', 'cluster.local'), ['_tcp.web.shop.svc.cluster.local', 'web.shop.svc.cluster.local', 'shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local']);
});
