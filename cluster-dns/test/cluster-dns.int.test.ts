/**
 * cluster-dns against a real apiserver (3-member etcd), listening on 127.0.0.1: the record store
 * conformance suite through real informers, then queries over the wire (UDP, TCP, truncation and
 * the TCP retry, out-of-zone REFUSED, --upstream relay), /readyz and /metrics.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import dnsPacket, { type Packet } from 'dns-packet';
import { EndpointSlices, Namespaces, Services, lookupKind, type KubeObject } from '@mk8s/api';
import { createClientset, type RestClientset } from '@mk8s/client';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { createClusterDns, type ClusterDnsComponent } from '../src/create-cluster-dns.js';
import { defineRecordStoreConformance, service, slice } from '../src/testing/conformance.js';

let server: TestApiServer;
let client: RestClientset;
let dns: ClusterDnsComponent;
let port = 0;
let healthPort = 0;
const ac = new AbortController();
let running: Promise<void>;

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try { if (await cond()) return; } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

before(async () => {
  server = await startTestApiServer();
  client = createClientset({ server: server.url, qps: 0 });
  dns = createClusterDns({ client, port: 0, bindAddress: '127.0.0.1', healthPort: 0, healthBindAddress: '127.0.0.1' });
  running = dns.run(ac.signal);
  [port, healthPort] = await Promise.all([dns.port, dns.healthPort]);
  await dns.ready;
});
after(async () => {
  ac.abort();
  await running;
  await client?.close();
  await server?.stop();
});

async function createNs(name: string) {
  await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } } as KubeObject);
}

defineRecordStoreConformance('informer-fed, real apiserver', async () => {
  await dns.ready;
  const ns = 'conf';
  await createNs(ns);
  const res = (o: KubeObject) => client.resource(lookupKind(o.apiVersion!, o.kind!)!, ns);
  return {
    store: dns.cache.store,
    namespace: ns,
    async apply(obj) {
      const r = res(obj);
      try {
        const cur = await r.get(obj.metadata.name!);
        const spec = obj['spec'] as Record<string, unknown> | undefined;
        const curSpec = cur['spec'] as Record<string, unknown> | undefined;
        // Keep allocated fields (clusterIP) as kubectl replace would not: carry them over.
        const next = { ...obj, metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion }, ...(spec && curSpec ? { spec: { ...spec, clusterIP: curSpec['clusterIP'], clusterIPs: curSpec['clusterIPs'] } } : {}) };
        return await r.update(next as KubeObject) as typeof obj;
      } catch {
        return await r.create(obj) as typeof obj;
      }
    },
    async remove(obj) { await res(obj).delete(obj.metadata.name!); },
    async eventually(check) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        try { check(); return; } catch (err) { if (Date.now() > deadline) throw err; }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async teardown() {},
  };
});

/** One query over UDP; on TC, the same over TCP (what a stub resolver does). */
async function ask(name: string, type: string, o: { tcp?: boolean; edns?: number } = {}): Promise<Packet & { rcode: string; flag_tc: boolean; viaTcp: boolean }> {
  const msg = dnsPacket.encode({ id: Math.floor(Math.random() * 65535), type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as 'A' }],
    ...(o.edns ? { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: o.edns, flags: 0, options: [] } as never] } : {}) });
  if (o.tcp) {
    const wire = await new Promise<Buffer>((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      let buf = Buffer.alloc(0);
      s.on('data', (d) => { buf = Buffer.concat([buf, d]); if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) { s.end(); resolve(buf.subarray(2, 2 + buf.readUInt16BE(0))); } });
      s.on('error', reject);
      const head = Buffer.alloc(2); head.writeUInt16BE(msg.length);
      s.write(Buffer.concat([head, msg]));
    });
    return { ...(dnsPacket.decode(wire) as never), viaTcp: true };
  }
  const wire = await new Promise<Buffer>((resolve, reject) => {
    const s = createSocket('udp4');
    const timer = setTimeout(() => { s.close(); reject(new Error('no UDP answer in 2 s')); }, 2000);
    s.on('message', (b) => { clearTimeout(timer); s.close(); resolve(b); });
    s.send(msg, port, '127.0.0.1');
  });
  const p = dnsPacket.decode(wire) as Packet & { rcode: string; flag_tc: boolean };
  if (p.flag_tc) return ask(name, type, { ...o, tcp: true });
  return { ...p, viaTcp: false };
}

describe('over the wire', () => {
  const ns = 'wire';
  before(async () => {
    await createNs(ns);
    await client.resource(Services, ns).create(service(ns, 'web', {}));
    await client.resource(Services, ns).create(service(ns, 'many', { clusterIP: 'None' }));
    await client.resource(EndpointSlices, ns).create(slice(ns, 'many', 'many-1', Array.from({ length: 60 }, (_, i) => ({ ip: `10.244.9.${i + 1}` }))));
    await waitFor('many has 60 endpoints', () => dns.cache.store.lookup(`many.${ns}.svc.cluster.local`, 'A').answers.length === 60);
  });

  test('A over UDP and over TCP', async () => {
    const svc = await client.resource(Services, ns).get('web');
    const ip = (svc['spec'] as { clusterIP: string }).clusterIP;
    for (const tcp of [false, true]) {
      const p = await ask(`web.${ns}.svc.cluster.local`, 'A', { tcp });
      assert.deepEqual([p.rcode, p.answers?.map((a) => (a as { data: string }).data)], ['NOERROR', [ip]]);
    }
  });

  test('an answer too large for UDP comes with TC and whole over the TCP retry', async () => {
    const p = await ask(`many.${ns}.svc.cluster.local`, 'A');
    assert.deepEqual([p.viaTcp, p.answers?.length], [true, 60]);
  });

  test('an unknown name is NXDOMAIN; outside the zone REFUSED', async () => {
    assert.equal((await ask(`nope.${ns}.svc.cluster.local`, 'A')).rcode, 'NXDOMAIN');
    assert.equal((await ask('example.com', 'A')).rcode, 'REFUSED');
  });

  test('/readyz is 200 after the sync and /metrics has CoreDNS\' series', async () => {
    assert.equal((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status, 200);
    const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    assert.match(text, /coredns_dns_requests_total\{[^}]*proto="udp"[^}]*type="A"[^}]*\} \d+/);
    assert.match(text, /coredns_dns_responses_total\{[^}]*rcode="NXDOMAIN"[^}]*\} \d+/);
    assert.match(text, /coredns_dns_request_duration_seconds_bucket/);
    assert.match(text, /coredns_cache_entries\{[^}]*type="records"[^}]*\} [1-9]\d*/);
  });
});

describe('--upstream', () => {
  test('relays a name outside the zone to the upstream and its answer back', async () => {
    const up = createSocket('udp4');
    up.on('message', (m, r) => {
      const q = dnsPacket.decode(m);
      up.send(dnsPacket.encode({ id: q.id ?? 0, type: 'response', questions: q.questions ?? [], answers: [{ name: 'example.com', type: 'A', ttl: 60, data: '192.0.2.1' }] }), r.port, r.address);
    });
    await new Promise<void>((r) => up.bind(0, '127.0.0.1', () => r()));
    const ac2 = new AbortController();
    const fwd = createClusterDns({ client, port: 0, bindAddress: '127.0.0.1', healthPort: -1, upstream: `127.0.0.1:${up.address().port}` });
    const run = fwd.run(ac2.signal);
    try {
      const p2 = await fwd.port;
      await fwd.ready;
      const answer = await new Promise<Packet>((resolve) => {
        const s = createSocket('udp4');
        s.on('message', (b) => { s.close(); resolve(dnsPacket.decode(b)); });
        s.send(dnsPacket.encode({ id: 7, type: 'query', questions: [{ name: 'example.com', type: 'A' }] }), p2, '127.0.0.1');
      });
      assert.deepEqual(answer.answers?.map((a) => (a as { data: string }).data), ['192.0.2.1']);
    } finally {
      ac2.abort();
      await run;
      up.close();
    }
  });
});
