import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointSlices, Namespaces, Pods, Services, type KubeObject } from '@mk8s/api';
import { FakeInformerFactory } from '@mk8s/client/testing';
import { DnsCache, type EndpointSliceObj, type NamespaceObj, type PodObj, type ServiceObj } from './dns-cache.js';
import { defineRecordStoreConformance, service, slice } from './testing/conformance.js';

function fixture(pods: 'insecure' | 'verified' = 'insecure') {
  const factory = new FakeInformerFactory();
  const informers = {
    services: factory.informerFor<ServiceObj>(Services),
    endpointSlices: factory.informerFor<EndpointSliceObj>(EndpointSlices),
    namespaces: factory.informerFor<NamespaceObj>(Namespaces),
    pods: factory.informerFor<PodObj>(Pods),
  };
  const { pods: podInformer, ...rest } = informers;
  const cache = new DnsCache({ records: { zone: 'cluster.local', pods }, ...rest, ...(pods === 'verified' ? { pods: podInformer } : {}) });
  return { cache, informers };
}

defineRecordStoreConformance('informer-fed, fake informers', async () => {
  const { cache, informers } = fixture();
  let nextIp = 10;
  const inf = (o: KubeObject) => (o.kind === 'Service' ? informers.services : o.kind === 'EndpointSlice' ? informers.endpointSlices : informers.namespaces) as unknown as { add(o: KubeObject): void; delete(o: KubeObject): void };
  informers.namespaces.add({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  return {
    store: cache.store,
    namespace: 'shop',
    async apply(obj) {
      const o = structuredClone(obj) as KubeObject & { spec?: { clusterIP?: string; type?: string } };
      // What the apiserver's allocator does: a ClusterIP for every Service that is neither headless nor ExternalName.
      if (o.kind === 'Service' && !o.spec?.clusterIP && o.spec?.type !== 'ExternalName') o.spec!.clusterIP = `10.96.0.${nextIp++}`;
      inf(o).add(o);
      return o as typeof obj;
    },
    async remove(obj) { inf(obj).delete(obj); },
    async eventually(check) { check(); },
    async teardown() {},
  };
});

test('an informer event is visible to the next lookup, rebuilt from the listers', () => {
  const { cache, informers } = fixture();
  informers.services.add({ ...service('a', 'headless', { clusterIP: 'None' }) } as ServiceObj);
  assert.equal(cache.store.lookup('headless.a.svc.cluster.local', 'A').rcode, 'NXDOMAIN');
  informers.endpointSlices.add(slice('a', 'headless', 's1', [{ ip: '10.244.0.2' }]) as EndpointSliceObj);
  informers.endpointSlices.add(slice('a', 'headless', 's2', [{ ip: '10.244.0.3' }]) as EndpointSliceObj);
  assert.equal(cache.store.lookup('headless.a.svc.cluster.local', 'A').answers.length, 2, 'endpoints of every slice of the Service');
  informers.endpointSlices.delete(slice('a', 'headless', 's1', []) as EndpointSliceObj);
  assert.deepEqual(cache.store.lookup('headless.a.svc.cluster.local', 'A').answers.map((a) => (a as { data: string }).data), ['10.244.0.3']);
});

test('verified pods mode answers only the IPs of pods that exist in that namespace', () => {
  const { cache, informers } = fixture('verified');
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a' }, status: { phase: 'Running', podIP: '10.244.0.9', podIPs: [{ ip: '10.244.0.9' }] } } as PodObj;
  assert.equal(cache.store.lookup('10-244-0-9.a.pod.cluster.local', 'A').rcode, 'NXDOMAIN');
  informers.pods.add(pod);
  assert.equal(cache.store.lookup('10-244-0-9.a.pod.cluster.local', 'A').rcode, 'NOERROR');
  assert.equal(cache.store.lookup('10-244-0-9.b.pod.cluster.local', 'A').rcode, 'NXDOMAIN', 'another namespace');
  informers.pods.delete(pod);
  assert.equal(cache.store.lookup('10-244-0-9.a.pod.cluster.local', 'A').rcode, 'NXDOMAIN');
});

test('hasSynced waits for every informer', () => {
  const { cache } = fixture();
  assert.equal(cache.hasSynced(), true);
});
