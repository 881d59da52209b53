import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Service, ServicePort } from '@mk8s/api';
import { computeSubsets, findPort, shouldPodBeInEndpoints } from './compute.js';

type P = Pod & { metadata: { name: string } };
function pod(name: string, ip: string | undefined, o: { ready?: boolean; http?: number; deleting?: boolean; phase?: string; restart?: string } = {}): P {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(o.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
    spec: { nodeName: 'n1', ...(o.restart ? { restartPolicy: o.restart } : {}), containers: [{ name: 'c', ports: [{ name: 'http', containerPort: o.http ?? 8080 }] }] },
    status: { phase: o.phase ?? 'Running', ...(ip ? { podIP: ip } : {}), conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}
const svc = (ports: ServicePort[], extra: { publishNotReadyAddresses?: boolean } = {}): Service =>
  ({ metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports, ...extra } });

test('ready and not-ready pods land in addresses and notReadyAddresses', () => {
  const s = computeSubsets(svc([{ port: 80, targetPort: 8080, protocol: 'TCP' }]), [pod('a', '10.244.0.2'), pod('b', '10.244.0.3', { ready: false }), pod('c', undefined)]);
  assert.equal(s.length, 1);
  assert.deepEqual(s[0]?.addresses?.map((a) => a.ip), ['10.244.0.2']);
  assert.deepEqual(s[0]?.notReadyAddresses?.map((a) => a.ip), ['10.244.0.3']);
  assert.deepEqual(s[0]?.ports, [{ port: 8080, protocol: 'TCP' }]);
  assert.deepEqual(s[0]?.addresses?.[0]?.targetRef, { kind: 'Pod', namespace: 'default', name: 'a', uid: 'uid-a' });
});

test('named target ports resolve per pod, splitting subsets', () => {
  const s = computeSubsets(svc([{ name: 'web', port: 80, targetPort: 'http', protocol: 'TCP' }]), [pod('a', '10.0.0.1', { http: 8080 }), pod('b', '10.0.0.2', { http: 9090 })]);
  assert.deepEqual(s.map((x) => [x.addresses?.map((a) => a.ip), x.ports]), [
    [['10.0.0.1'], [{ name: 'web', port: 8080, protocol: 'TCP' }]],
    [['10.0.0.2'], [{ name: 'web', port: 9090, protocol: 'TCP' }]],
  ]);
});

test('pods offering the same addresses share one subset with several ports', () => {
  const s = computeSubsets(svc([{ name: 'a', port: 80, targetPort: 8080, protocol: 'TCP' }, { name: 'b', port: 81, targetPort: 8081, protocol: 'TCP' }]), [pod('a', '10.0.0.1'), pod('b', '10.0.0.2')]);
  assert.equal(s.length, 1);
  assert.deepEqual(s[0]?.ports?.map((p) => p.name), ['a', 'b']);
});

test('terminating and finished pods are left out; publishNotReadyAddresses keeps unready ones ready', () => {
  assert.equal(shouldPodBeInEndpoints(pod('a', '1.1.1.1', { deleting: true }), false), false);
  assert.equal(shouldPodBeInEndpoints(pod('a', '1.1.1.1', { deleting: true }), true), true);
  assert.equal(shouldPodBeInEndpoints(pod('a', '1.1.1.1', { phase: 'Succeeded', restart: 'Never' }), false), false);
  const s = computeSubsets(svc([{ port: 80, protocol: 'TCP' }], { publishNotReadyAddresses: true }), [pod('b', '10.0.0.3', { ready: false })]);
  assert.deepEqual(s[0]?.addresses?.map((a) => a.ip), ['10.0.0.3']);
});

test('findPort falls back to the port number and fails for unknown names', () => {
  assert.equal(findPort(pod('a', 'x'), { port: 80 }), 80);
  assert.equal(findPort(pod('a', 'x'), { port: 80, targetPort: 'nope' }), undefined);
});
