import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointSlices, type EndpointSlice, type Pod, type Service } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import type { Obj } from '../../util/meta.js';
import { EndpointSliceController } from './endpointslice.js';

const svc: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } };
const pod = (name: string, ip: string): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] },
  status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] },
});

test('endpointslice: creates a slice once, and waits for the cache before writing again', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new EndpointSliceController(ctx));
  f.seed(svc);
  f.seed(pod('a', '10.244.1.2'), pod('b', '10.244.1.3'));
  await f.reconcile('default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), ['create endpointslices']);
  const again = await f.reconcile('default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), ['create endpointslices'], 'no duplicate while the watch lags');
  assert.ok(again.result && again.result.requeueAfterMs);
  const [slice] = (await f.client.resource<Obj<EndpointSlice>>(EndpointSlices, 'default').list()).items;
  assert.deepEqual(slice?.endpoints.map((e) => e.addresses[0]), ['10.244.1.2', '10.244.1.3']);
  f.informers.informerFor(EndpointSlices).add(slice!);
  f.client.clearActions();
  await f.reconcile('default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
});
