import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMaps, type ConfigMap, type Namespace } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import type { Obj } from '../../util/meta.js';
import { DESCRIPTION, RootCACertPublisher } from './rootcacertpublisher.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const ns = (name: string, phase = 'Active'): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase } });
const cm = (namespace: string, data: Record<string, string>, annotations?: Record<string, string>): ConfigMap =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt', namespace, ...(annotations ? { annotations } : {}) }, data });

const cases: { name: string; seed: (Namespace | ConfigMap)[]; writes: string[] }[] = [
  { name: 'creates kube-root-ca.crt in a namespace without it', seed: [ns('a')], writes: ['create configmaps'] },
  { name: 'leaves an up-to-date ConfigMap alone', seed: [ns('a'), cm('a', { 'ca.crt': CA }, { 'kubernetes.io/description': DESCRIPTION })], writes: [] },
  { name: 'rewrites a ConfigMap someone changed', seed: [ns('a'), cm('a', { 'ca.crt': 'tampered', extra: 'x' })], writes: ['update configmaps'] },
  { name: 'skips a terminating namespace', seed: [ns('a', 'Terminating')], writes: [] },
];
for (const tc of cases) {
  test(`root-ca-cert-publisher: ${tc.name}`, async () => {
    const f = newControllerFixture();
    f.build((ctx) => new RootCACertPublisher(ctx, { rootCA: CA }));
    for (const o of tc.seed) f.seed(o);
    await f.reconcile('a');
    assert.deepEqual(f.actions({ writesOnly: true }), tc.writes);
    if (tc.writes.length) {
      const got = await f.client.resource<Obj<ConfigMap>>(ConfigMaps, 'a').get('kube-root-ca.crt');
      assert.deepEqual(got.data, { 'ca.crt': CA });
      assert.equal(got.metadata.annotations?.['kubernetes.io/description'], DESCRIPTION);
    }
  });
}
