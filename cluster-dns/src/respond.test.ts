import { test } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket, { type Answer, type Packet } from 'dns-packet';
import type { EndpointSlice, Service } from '@mk8s/api';
import { MemoryRecordStore } from './record-store.js';
import { respond } from './respond.js';

function storeWith(endpoints: number): MemoryRecordStore {
  const s = new MemoryRecordStore({ zone: 'cluster.local' });
  s.setService('shop/web', { metadata: { name: 'web', namespace: 'shop' }, spec: { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80 }] } } as Service, []);
  const slice: EndpointSlice = { addressType: 'IPv4', metadata: { name: 'big-1' }, ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    endpoints: Array.from({ length: endpoints }, (_, i) => ({ addresses: [`10.244.${Math.floor(i / 250)}.${(i % 250) + 1}`] })) };
  s.setService('shop/big', { metadata: { name: 'big', namespace: 'shop' }, spec: { clusterIP: 'None' } } as Service, [slice]);
  return s;
}
const query = (name: string, type: string, extra: Partial<Packet> = {}) => dnsPacket.encode({ id: 4242, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as 'A' }], ...extra });
const edns = (size: number, version = 0) => ({ additionals: [{ type: 'OPT', name: '.', udpPayloadSize: size, ednsVersion: version, flags: 0, options: [] } as unknown as Answer] });
const decode = (b: Buffer) => dnsPacket.decode(b) as ReturnType<typeof dnsPacket.decode> & { rcode: string; flag_tc: boolean; flag_aa: boolean; flag_rd: boolean };
const store = storeWith(100);

test('answers A from the store: AA set, RD echoed, the id kept, owner spelled as asked', () => {
  const r = respond(query('Web.Shop.svc.cluster.local', 'A'), { store, transport: 'udp' })!;
  const p = decode(r.wire);
  assert.deepEqual([p.id, p.rcode, p.flag_aa, p.flag_rd, r.qtype], [4242, 'NOERROR', true, true, 'A']);
  assert.deepEqual(p.answers?.map((a) => [a.name, (a as { data: string }).data]), [['Web.Shop.svc.cluster.local', '10.96.0.20']]);
});

test('NXDOMAIN for an unknown name in the zone carries the SOA in Authority', () => {
  const p = decode(respond(query('nope.shop.svc.cluster.local', 'A'), { store, transport: 'udp' })!.wire);
  assert.equal(p.rcode, 'NXDOMAIN');
  assert.deepEqual(p.authorities?.map((a) => a.type), ['SOA']);
});

test('a name outside the zone is REFUSED at once and marked forwardable', () => {
  const r = respond(query('example.com', 'A'), { store, transport: 'udp' })!;
  assert.deepEqual([decode(r.wire).rcode, decode(r.wire).flag_aa, r.forwardable], ['REFUSED', false, true]);
});

test('UDP without EDNS0: an answer over 512 bytes goes out empty with TC; over TCP it is whole', () => {
  const udp = respond(query('big.shop.svc.cluster.local', 'A'), { store, transport: 'udp' })!;
  const p = decode(udp.wire);
  assert.deepEqual([udp.truncated, p.flag_tc, p.answers?.length, p.questions?.[0]?.name], [true, true, 0, 'big.shop.svc.cluster.local']);
  assert.ok(udp.wire.length <= 512);
  const tcp = decode(respond(query('big.shop.svc.cluster.local', 'A'), { store, transport: 'tcp' })!.wire);
  assert.deepEqual([tcp.flag_tc, tcp.answers?.length], [false, 100]);
});

test('EDNS0: the OPT record is echoed with our payload size and the client\'s larger limit is used', () => {
  const small = storeWith(20);
  const r = respond(query('big.shop.svc.cluster.local', 'A', edns(4096)), { store: small, transport: 'udp' })!;
  const p = decode(r.wire);
  assert.equal(p.flag_tc, false, '20 A records fit in 1232 bytes (dns-packet writes names uncompressed: 42 bytes each)');
  assert.equal(p.answers?.length, 20);
  const opt = p.additionals?.find((a) => a.type === 'OPT') as { udpPayloadSize: number } | undefined;
  assert.equal(opt?.udpPayloadSize, 1232);
  const big = decode(respond(query('big.shop.svc.cluster.local', 'A', edns(4096)), { store, transport: 'udp' })!.wire);
  assert.equal(big.flag_tc, true, 'still capped at 1232');
  assert.equal(big.additionals?.filter((a) => a.type === 'OPT').length, 1, 'a truncated reply keeps its OPT');
});

test('EDNS version 1 is answered BADVERS', () => {
  const r = respond(query('web.shop.svc.cluster.local', 'A', edns(1232, 1)), { store, transport: 'udp' })!;
  assert.equal(r.rcode, 'BADVERS');
  assert.equal((decode(r.wire).additionals?.[0] as { extendedRcode: number }).extendedRcode, 1);
});

test('garbage is FORMERR (with the id), a response is dropped, another opcode is NOTIMP', () => {
  const junk = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0xff]);
  const r = respond(junk, { store, transport: 'udp' })!;
  assert.deepEqual([r.rcode, decode(r.wire).id], ['FORMERR', 0x1234]);
  assert.equal(respond(dnsPacket.encode({ id: 1, type: 'response', questions: [] }), { store, transport: 'udp' }), undefined);
  const notify = dnsPacket.encode({ id: 2, type: 'query', flags: 4 << 11, questions: [{ name: 'cluster.local', type: 'SOA' }] });
  assert.equal(respond(notify, { store, transport: 'udp' })!.rcode, 'NOTIMP');
});

test('SRV answers bring the targets\' A records in Additional; SOA at the apex', () => {
  const p = decode(respond(query('_http._tcp.web.shop.svc.cluster.local', 'SRV'), { store, transport: 'udp' })!.wire);
  assert.deepEqual(p.answers?.map((a) => (a as { data: { target: string; port: number } }).data), [{ priority: 0, weight: 100, port: 80, target: 'web.shop.svc.cluster.local' }]);
  assert.deepEqual(p.additionals?.map((a) => (a as { data: string }).data), ['10.96.0.20']);
  const soa = decode(respond(query('cluster.local', 'SOA'), { store, transport: 'udp' })!.wire);
  assert.equal((soa.answers?.[0] as { data: { mname: string } }).data.mname, 'ns.dns.cluster.local');
});
