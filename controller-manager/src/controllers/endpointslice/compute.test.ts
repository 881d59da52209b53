import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice, OwnerReference, Pod, Service } from '@mk8s/api';
import { desiredEndpoints, planSlices } from './compute.js';

type P = Pod & { metadata: { name: string } };
type S = EndpointSlice & { metadata: { name: string } };
const svc: Service = { metadata: { name: 'web', namespace: 'default', uid: 'svc' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] } };
const owner: OwnerReference = { apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc', controller: true, blockOwnerDeletion: true };
const ip = (i: number) => `10.244.${Math.floor(i / 250)}.${(i % 250) + 2}`;
function pod(i: number, o: { ready?: boolean; port?: number; deleting?: boolean } = {}): P {
  return {
    metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}`, ...(o.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
    spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: o.port ?? 8080 }] }] },
    status: { phase: 'Running', podIP: ip(i), conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}
const pods = (n: number, o: Parameters<typeof pod>[1] = {}) => Array.from({ length: n }, (_, i) => pod(i, o));
let seq = 0;
const materialize = (plan: ReturnType<typeof planSlices>, existing: S[]): S[] => {
  const gone = new Set(plan.delete.map((s) => s.metadata.name));
  const updated = new Map(plan.update.map((s) => [s.metadata.name, s]));
  return [...existing.filter((s) => !gone.has(s.metadata.name)).map((s) => updated.get(s.metadata.name) ?? s),
    ...plan.create.map((s) => ({ ...s, metadata: { ...s.metadata, name: `web-${seq++}` } }) as S)];
};

test('endpointslice: conditions follow readiness and termination', () => {
  const d = desiredEndpoints(svc, [pod(0), pod(1, { ready: false }), pod(2, { deleting: true })]);
  assert.deepEqual(d.map((x) => x.endpoint.conditions), [
    { ready: true, serving: true, terminating: false },
    { ready: false, serving: false, terminating: false },
    { ready: false, serving: true, terminating: true },
  ]);
  assert.deepEqual(d[0]?.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
  assert.equal(desiredEndpoints(svc, [pod(0)], () => 'zone-a')[0]?.endpoint.zone, 'zone-a');
});

test('endpointslice: slices hold at most 100 endpoints', () => {
  const plan = planSlices(svc, owner, desiredEndpoints(svc, pods(250)), []);
  assert.deepEqual(plan.create.map((s) => s.endpoints.length), [100, 100, 50]);
  assert.equal(plan.create[0]?.metadata?.labels?.['kubernetes.io/service-name'], 'web');
  assert.equal(plan.create[0]?.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io');
  assert.deepEqual(plan.create[0]?.metadata?.ownerReferences, [owner]);
});

test('endpointslice: pods resolving a named port differently get separate slices', () => {
  const plan = planSlices(svc, owner, desiredEndpoints(svc, [pod(0, { port: 8080 }), pod(1, { port: 9090 })]), []);
  assert.deepEqual(plan.create.map((s) => s.ports?.[0]?.port).sort(), [8080, 9090]);
});

test('endpointslice: a change touches only the slice holding the endpoint; in-sync plans are empty', () => {
  let slices = materialize(planSlices(svc, owner, desiredEndpoints(svc, pods(150)), []), []);
  assert.equal(slices.length, 2);
  assert.deepEqual(planSlices(svc, owner, desiredEndpoints(svc, pods(150)), slices), { create: [], update: [], delete: [] });
  const changed = pods(150); changed[120] = pod(120, { ready: false });
  const plan = planSlices(svc, owner, desiredEndpoints(svc, changed), slices);
  assert.equal(plan.update.length, 1);
  assert.equal(plan.create.length + plan.delete.length, 0);
  slices = materialize(plan, slices);
  // all pods gone: one empty placeholder slice remains
  const empty = planSlices(svc, owner, [], slices);
  slices = materialize(empty, slices);
  assert.equal(slices.length, 1);
  assert.deepEqual(slices[0]?.endpoints, []);
});
