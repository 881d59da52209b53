import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preserveServiceAllocations } from './service-allocations.js';

const cases = [
  { name: 'keeps clusterIP when omitted', prev: { spec: { type: 'ClusterIP', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'] } }, next: { spec: { type: 'ClusterIP' } },
    want: { spec: { type: 'ClusterIP', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'] } } },
  { name: 'explicit clusterIP wins', prev: { spec: { clusterIP: '10.96.0.5' } }, next: { spec: { clusterIP: '10.96.0.6' } }, want: { spec: { clusterIP: '10.96.0.6' } } },
  { name: 'ExternalName gets nothing', prev: { spec: { clusterIP: '10.96.0.5' } }, next: { spec: { type: 'ExternalName' } }, want: { spec: { type: 'ExternalName' } } },
  { name: 'keeps nodePorts by port name', prev: { spec: { type: 'NodePort', ports: [{ name: 'http', port: 80, nodePort: 30080 }] } }, next: { spec: { type: 'NodePort', ports: [{ name: 'http', port: 8080 }] } },
    want: { spec: { type: 'NodePort', ports: [{ name: 'http', port: 8080, nodePort: 30080 }] } } },
  { name: 'no nodePort for a ClusterIP update', prev: { spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] } }, next: { spec: { type: 'ClusterIP', ports: [{ port: 80 }] } },
    want: { spec: { type: 'ClusterIP', ports: [{ port: 80 }] } } },
];
for (const tc of cases) {
  test(tc.name, () => {
    const next = structuredClone(tc.next);
    preserveServiceAllocations(next, tc.prev);
    assert.deepEqual(next, tc.want);
  });
}
