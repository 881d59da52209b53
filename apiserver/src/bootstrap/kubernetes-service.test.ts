import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import type { KubeObject } from '@mk8s/api';
import type { FastifyInstance } from 'fastify';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import type { Registry } from '../registry/index.js';
import {
  ADVERTISE_ADDRESS_ANNOTATION, ApiserverEndpointReconciler, IDENTITY_LABEL, IDENTITY_VALUE, apiserverIdentity,
  desiredEndpointSlice, desiredEndpoints, liveApiserverAddresses,
} from './kubernetes-service.js';

const T0 = Date.parse('2026-12-02T07:00:00Z');

function lease(name: string, ip: string | undefined, renewMs: number, o: { durationSeconds?: number; label?: string } = {}): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: { name, namespace: 'kube-system', labels: { [IDENTITY_LABEL]: o.label ?? IDENTITY_VALUE }, ...(ip ? { annotations: { [ADVERTISE_ADDRESS_ANNOTATION]: ip } } : {}) },
    spec: { holderIdentity: `${name}_x`, leaseDurationSeconds: o.durationSeconds ?? 15, renewTime: new Date(renewMs).toISOString() },
  } as unknown as KubeObject;
}

test('liveApiserverAddresses keeps the unexpired identity Leases, sorted and unique', () => {
  const cases: { name: string; leases: KubeObject[]; now: number; exclude?: string; want: string[] }[] = [
    { name: 'none', leases: [], now: T0, want: [] },
    { name: 'three live, sorted numerically', now: T0, want: ['10.240.0.2', '10.240.0.3', '10.240.0.10'],
      leases: [lease('a', '10.240.0.10', T0), lease('b', '10.240.0.2', T0 - 5_000), lease('c', '10.240.0.3', T0 - 14_000)] },
    { name: 'an expired lease drops out (renew + duration reached)', now: T0, want: ['10.240.0.2'],
      leases: [lease('a', '10.240.0.2', T0), lease('b', '10.240.0.3', T0 - 15_000)] },
    { name: 'a longer leaseDurationSeconds is honoured', now: T0, want: ['10.240.0.3'], leases: [lease('b', '10.240.0.3', T0 - 30_000, { durationSeconds: 3600 })] },
    { name: 'leases without the identity label or the address are not apiservers', now: T0, want: [],
      leases: [lease('kube-scheduler', '10.240.0.2', T0, { label: 'other' }), lease('b', undefined, T0)] },
    { name: 'two leases with one address list it once', now: T0, want: ['10.240.0.2'], leases: [lease('a', '10.240.0.2', T0), lease('b', '10.240.0.2', T0)] },
    { name: 'the excluded lease (shutting down) is left out', now: T0, exclude: 'a', want: ['10.240.0.3'],
      leases: [lease('a', '10.240.0.2', T0), lease('b', '10.240.0.3', T0)] },
  ];
  for (const c of cases) assert.deepEqual(liveApiserverAddresses(c.leases, c.now, c.exclude), c.want, c.name);
});

test('desiredEndpoints and desiredEndpointSlice: exactly the addresses, no write when they match', () => {
  const eps = desiredEndpoints(undefined, ['10.240.0.2', '10.240.0.3'], 6443) as unknown as Record<string, unknown>;
  assert.deepEqual(eps['subsets'], [{ addresses: [{ ip: '10.240.0.2' }, { ip: '10.240.0.3' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }]);
  assert.equal(desiredEndpoints(eps as unknown as KubeObject, ['10.240.0.2', '10.240.0.3'], 6443), undefined, 'unchanged: no write');
  const fewer = desiredEndpoints(eps as unknown as KubeObject, ['10.240.0.3'], 6443) as unknown as Record<string, unknown>;
  assert.deepEqual(fewer['subsets'], [{ addresses: [{ ip: '10.240.0.3' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }]);
  assert.deepEqual((desiredEndpoints(eps as unknown as KubeObject, [], 6443) as unknown as Record<string, unknown>)['subsets'], [], 'no apiserver: no subset');

  const slice = desiredEndpointSlice(undefined, ['10.240.0.2'], 6443) as unknown as Record<string, unknown>;
  assert.deepEqual(slice['endpoints'], [{ addresses: ['10.240.0.2'], conditions: { ready: true } }]);
  assert.equal((slice['metadata'] as { labels: Record<string, string> }).labels['kubernetes.io/service-name'], 'kubernetes');
  assert.equal(desiredEndpointSlice(slice as unknown as KubeObject, ['10.240.0.2'], 6443), undefined);
  assert.ok(desiredEndpointSlice(slice as unknown as KubeObject, ['10.240.0.2'], 6444), 'a port change is a write');
});

test('apiserverIdentity: apiserver-<hash>, distinct per address on one host, stable', () => {
  const a = apiserverIdentity('host', '10.240.0.2', 6443);
  assert.match(a, /^apiserver-[0-9a-f]{26}$/);
  assert.equal(a, apiserverIdentity('host', '10.240.0.2', 6443));
  assert.notEqual(a, apiserverIdentity('host', '10.240.0.3', 6443));
});

test('ApiserverEndpointReconciler: each apiserver lists itself, an expired one drops out, a removed one at once', async (t) => {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger() });
  t.after(() => app.close());
  const registry = (app as FastifyInstance & { registry: Registry }).registry;
  for (const ns of ['default', 'kube-system']) {
    const r = await app.inject({ method: 'POST', url: '/api/v1/namespaces', payload: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    assert.ok(r.statusCode < 300 || r.statusCode === 409, r.body);
  }
  let now = T0;
  const make = (ip: string) => new ApiserverEndpointReconciler(registry, { advertiseAddress: ip, port: 6443, clusterIP: '10.96.0.1', hostname: 'host', now: () => now });
  const [a, b, c] = [make('10.240.0.2'), make('10.240.0.3'), make('10.240.0.4')] as const;
  const addresses = async () => {
    const r = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/endpoints/kubernetes' });
    const s = await app.inject({ method: 'GET', url: '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes' });
    const fromSlice = (s.json().endpoints ?? []).map((e: { addresses: string[] }) => e.addresses[0]);
    const fromEndpoints = (r.json().subsets?.[0]?.addresses ?? []).map((x: { ip: string }) => x.ip);
    assert.deepEqual(fromSlice, fromEndpoints, 'Endpoints and EndpointSlice agree');
    return fromEndpoints;
  };
  await a.reconcile(); await b.reconcile(); await c.reconcile();
  assert.deepEqual(await addresses(), ['10.240.0.2', '10.240.0.3', '10.240.0.4']);
  const svc = await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/services/kubernetes' });
  assert.equal(svc.json().spec.clusterIP, '10.96.0.1');
  const leaseRes = await app.inject({ method: 'GET', url: `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${a.leaseName}` });
  assert.equal(leaseRes.json().metadata.labels[IDENTITY_LABEL], IDENTITY_VALUE);

  // c is killed (no more renewals); a and b renew; after the lease duration c is gone.
  now += 10_000; await a.reconcile(); await b.reconcile();
  assert.deepEqual(await addresses(), ['10.240.0.2', '10.240.0.3', '10.240.0.4'], 'c still within its lease');
  now += 6_000; await a.reconcile();
  assert.deepEqual(await addresses(), ['10.240.0.2', '10.240.0.3']);
  // c comes back: listed again at its first renewal.
  await c.reconcile();
  assert.deepEqual(await addresses(), ['10.240.0.2', '10.240.0.3', '10.240.0.4']);
  // b shuts down gracefully: out at once, its Lease deleted.
  await b.remove();
  assert.deepEqual(await addresses(), ['10.240.0.2', '10.240.0.4']);
  const gone = await app.inject({ method: 'GET', url: `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${b.leaseName}` });
  assert.equal(gone.statusCode, 404);
  // An unchanged set is no write.
  const rv = (await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/endpoints/kubernetes' })).json().metadata.resourceVersion;
  await a.reconcile();
  assert.equal((await app.inject({ method: 'GET', url: '/api/v1/namespaces/default/endpoints/kubernetes' })).json().metadata.resourceVersion, rv);
});
