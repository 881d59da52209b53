/**
 * One conformance suite for the record store, run against every way of filling it: objects fed
 * straight to the informer-driven cache (dns-cache.test.ts) and the same cache behind real
 * informers on a real apiserver (dns-cache.int.test.ts). Cases follow the Kubernetes DNS
 * specification (kubernetes/dns docs/specification.md) section by section.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import type { Answer } from 'dns-packet';
import type { LookupResult, RecordStore } from '../record-store.js';

export interface RecordStoreFixture {
  store: RecordStore;
  /** A namespace that exists for the whole suite (objects go there). */
  namespace: string;
  /** Creates or replaces objects (apiVersion/kind set); returns them as stored (ClusterIPs allocated). */
  apply<T extends KubeObject>(obj: T): Promise<T>;
  remove(obj: KubeObject): Promise<void>;
  /** Retries check until it passes (the informer-fed store lags the API) or a deadline. */
  eventually(check: () => void): Promise<void>;
  teardown(): Promise<void>;
}

const data = (a: Answer) => (a as { data: unknown }).data;
const view = (r: LookupResult) => ({ rcode: r.rcode, answers: r.answers.map((a) => `${a.type} ${JSON.stringify(data(a))}`).sort() });

export function service(ns: string, name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns, ...extra }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...spec } };
}

export function slice(ns: string, svc: string, name: string, endpoints: { ip: string; ready?: boolean; hostname?: string }[], ports = [{ name: 'http', port: 8080, protocol: 'TCP' }]): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, namespace: ns, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4', ports,
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready ?? true }, ...(e.hostname ? { hostname: e.hostname } : {}) })),
  };
}

export function defineRecordStoreConformance(name: string, setup: () => Promise<RecordStoreFixture>): void {
  describe(`RecordStore conformance: ${name}`, () => {
    let f: RecordStoreFixture;
    let ns: string;
    let zone: string;
    before(async () => { f = await setup(); ns = f.namespace; zone = f.store.zone; });
    after(() => f.teardown());
    const q = (n: string, t: string) => view(f.store.lookup(n, t));

    test('2.2 dns-version TXT names the schema version', () => {
      assert.deepEqual(q(`dns-version.${zone}`, 'TXT'), { rcode: 'NOERROR', answers: ['TXT ["1.1.0"]'] });
    });

    test('2.3 a ClusterIP Service has A, SRV per named port and PTR; names are case-insensitive', async () => {
      const svc = await f.apply(service(ns, 'web', { ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] }));
      const ip = (svc['spec'] as { clusterIP: string }).clusterIP;
      const fqdn = `web.${ns}.svc.${zone}`;
      await f.eventually(() => assert.deepEqual(q(fqdn, 'A'), { rcode: 'NOERROR', answers: [`A "${ip}"`] }));
      assert.deepEqual(q(`WEB.${ns.toUpperCase()}.svc.${zone}.`, 'A'), { rcode: 'NOERROR', answers: [`A "${ip}"`] });
      assert.deepEqual(q(`_http._tcp.${fqdn}`, 'SRV'), { rcode: 'NOERROR', answers: [`SRV {"priority":0,"weight":100,"port":80,"target":"${fqdn}"}`] });
      assert.deepEqual(q(`_dns._udp.${fqdn}`, 'SRV').answers.length, 1);
      assert.equal(q(`_dns._tcp.${fqdn}`, 'SRV').rcode, 'NXDOMAIN', 'no SRV for a protocol the port does not use');
      assert.deepEqual(q(`${ip.split('.').reverse().join('.')}.in-addr.arpa`, 'PTR'), { rcode: 'NOERROR', answers: [`PTR "${fqdn}"`] });
      const srv = f.store.lookup(`_http._tcp.${fqdn}`, 'SRV');
      assert.deepEqual(srv.additionals.map((a) => data(a)), [ip], 'the SRV target\'s A record rides in Additional');
    });

    test('2.3 a name that exists without the asked type is NODATA with the SOA; AAAA of an IPv4 Service too', async () => {
      await f.eventually(() => assert.equal(q(`web.${ns}.svc.${zone}`, 'A').rcode, 'NOERROR'));
      const r = f.store.lookup(`web.${ns}.svc.${zone}`, 'AAAA');
      assert.equal(r.rcode, 'NOERROR');
      assert.deepEqual(r.answers, []);
      assert.deepEqual(r.authority.map((a) => a.type), ['SOA']);
      assert.equal(q(`${ns}.svc.${zone}`, 'A').rcode, 'NOERROR', 'the namespace is an empty non-terminal');
      assert.equal(q(`svc.${zone}`, 'A').rcode, 'NOERROR');
    });

    test('2.4 a headless Service resolves to its ready endpoints only, with hostname, SRV and PTR records', async () => {
      await f.apply(service(ns, 'db', { clusterIP: 'None' }));
      await f.apply(slice(ns, 'db', 'db-abc', [{ ip: '10.244.1.5', hostname: 'db-0' }, { ip: '10.244.1.6', ready: false, hostname: 'db-1' }, { ip: '10.244.2.7' }]));
      const fqdn = `db.${ns}.svc.${zone}`;
      await f.eventually(() => assert.deepEqual(q(fqdn, 'A'), { rcode: 'NOERROR', answers: ['A "10.244.1.5"', 'A "10.244.2.7"'] }));
      assert.deepEqual(q(`db-0.${fqdn}`, 'A'), { rcode: 'NOERROR', answers: ['A "10.244.1.5"'] });
      assert.equal(q(`db-1.${fqdn}`, 'A').rcode, 'NXDOMAIN', 'a not-ready endpoint has no name');
      assert.deepEqual(q(`10-244-2-7.${fqdn}`, 'A'), { rcode: 'NOERROR', answers: ['A "10.244.2.7"'] }, 'no hostname: the dashed IP');
      assert.deepEqual(q(`_http._tcp.${fqdn}`, 'SRV').answers, [
        `SRV {"priority":0,"weight":50,"port":8080,"target":"10-244-2-7.${fqdn}"}`,
        `SRV {"priority":0,"weight":50,"port":8080,"target":"db-0.${fqdn}"}`,
      ]);
      assert.deepEqual(q('5.1.244.10.in-addr.arpa', 'PTR'), { rcode: 'NOERROR', answers: [`PTR "db-0.${fqdn}"`] });
    });

    test('2.4 publishNotReadyAddresses publishes not-ready endpoints too', async () => {
      await f.apply(service(ns, 'peers', { clusterIP: 'None', publishNotReadyAddresses: true }));
      await f.apply(slice(ns, 'peers', 'peers-abc', [{ ip: '10.244.3.1', ready: false, hostname: 'p-0' }]));
      await f.eventually(() => assert.deepEqual(q(`p-0.peers.${ns}.svc.${zone}`, 'A'), { rcode: 'NOERROR', answers: ['A "10.244.3.1"'] }));
    });

    test('2.4 a headless Service without ready endpoints is NXDOMAIN', async () => {
      await f.apply(service(ns, 'empty', { clusterIP: 'None' }));
      await f.apply(slice(ns, 'empty', 'empty-abc', [{ ip: '10.244.4.1', ready: false }]));
      await f.eventually(() => assert.equal(f.store.lookup(`empty.${ns}.svc.${zone}`, 'A').rcode, 'NXDOMAIN'));
    });

    test('2.5 an ExternalName Service is a CNAME; one to another Service is followed', async () => {
      await f.apply(service(ns, 'ext', { type: 'ExternalName', externalName: 'www.example.com', ports: [] }));
      await f.eventually(() => assert.deepEqual(q(`ext.${ns}.svc.${zone}`, 'A'), { rcode: 'NOERROR', answers: ['CNAME "www.example.com"'] }));
      assert.equal(f.store.lookup(`ext.${ns}.svc.${zone}`, 'A').externalTarget, 'www.example.com');
      await f.apply(service(ns, 'alias', { type: 'ExternalName', externalName: `db-0.db.${ns}.svc.${zone}`, ports: [] }));
      await f.eventually(() => assert.deepEqual(q(`alias.${ns}.svc.${zone}`, 'A'), { rcode: 'NOERROR', answers: [`A "10.244.1.5"`, `CNAME "db-0.db.${ns}.svc.${zone}"`] }));
    });

    test('2.6 pod names a-b-c-d.<ns>.pod.<zone> answer their IP', () => {
      assert.deepEqual(q(`10-244-1-5.${ns}.pod.${zone}`, 'A'), { rcode: 'NOERROR', answers: ['A "10.244.1.5"'] });
      assert.equal(q(`10-244-1.${ns}.pod.${zone}`, 'A').rcode, 'NXDOMAIN');
    });

    test('an unknown name in the zone is NXDOMAIN with the SOA; one outside is refused, not authoritative', () => {
      const r = f.store.lookup(`nope.${ns}.svc.${zone}`, 'A');
      assert.equal(r.rcode, 'NXDOMAIN');
      assert.deepEqual(r.authority.map((a) => `${a.type} ${a.name}`), [`SOA ${zone}`]);
      const out = f.store.lookup('example.com', 'A');
      assert.deepEqual([out.rcode, out.authoritative], ['REFUSED', false]);
      assert.equal(q('9.9.9.9.in-addr.arpa', 'PTR').rcode, 'NXDOMAIN');
    });

    test('deleting a Service removes its records; a changed slice replaces its endpoints', async () => {
      const svc = await f.apply(service(ns, 'gone', {}));
      await f.eventually(() => assert.equal(q(`gone.${ns}.svc.${zone}`, 'A').rcode, 'NOERROR'));
      const before = f.store.size();
      await f.remove(svc);
      await f.eventually(() => assert.equal(q(`gone.${ns}.svc.${zone}`, 'A').rcode, 'NXDOMAIN'));
      assert.ok(f.store.size() < before);
      await f.apply(slice(ns, 'db', 'db-abc', [{ ip: '10.244.1.9', hostname: 'db-0' }]));
      await f.eventually(() => assert.deepEqual(q(`db-0.db.${ns}.svc.${zone}`, 'A'), { rcode: 'NOERROR', answers: ['A "10.244.1.9"'] }));
      assert.equal(q('5.1.244.10.in-addr.arpa', 'PTR').rcode, 'NXDOMAIN', 'the old endpoint\'s PTR is gone');
    });
  });
}
