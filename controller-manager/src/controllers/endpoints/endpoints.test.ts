import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointsResource, type Endpoints, type Pod, type Service } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import { EndpointsController } from './endpoints.js';
import type { Obj } from '../../util/meta.js';

const svc: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default', labels: { team: 'a' } }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } };
const pod = (name: string, ip: string, ready: boolean, app = 'web'): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app } }, spec: { containers: [{ name: 'c' }] },
  status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

test('endpoints: creates Endpoints for a Service from its pods, then leaves them alone', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new EndpointsController(ctx));
  f.seed(svc);
  f.seed(pod('a', '10.244.1.2', true), pod('b', '10.244.1.3', false), pod('other', '10.244.1.4', true, 'x'));
  await f.reconcile('default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), ['create endpoints']);
  const ep = await f.client.resource<Obj<Endpoints>>(EndpointsResource, 'default').get('web');
  assert.deepEqual(ep.metadata.labels, { team: 'a' });
  assert.deepEqual(ep.subsets?.[0]?.addresses?.map((a) => a.ip), ['10.244.1.2']);
  assert.deepEqual(ep.subsets?.[0]?.notReadyAddresses?.map((a) => a.ip), ['10.244.1.3']);
  f.informers.informerFor(EndpointsResource).add(ep);
  f.client.clearActions();
  await f.reconcile('default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), []);
});

test('endpoints: deletes Endpoints of a deleted Service', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new EndpointsController(ctx));
  f.seed({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web', namespace: 'default' } } as Endpoints);
  await f.reconcile('default/web');
  assert.deepEqual(f.actions({ writesOnly: true }), ['delete endpoints']);
});
