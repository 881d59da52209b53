import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  Pods, Deployments, ReplicaSets, Services, EndpointsResource, Nodes, Namespaces, ConfigMaps, Secrets, Events,
  ServiceAccounts, Leases, EndpointSlices, PriorityClasses, type KubeObject, type ResourceDescriptor,
} from '@mk8s/api';
import { toTable, wantsTable } from './table.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace(/\.\d+Z$/, 'Z');
const M = 60_000;

const meta = (name: string, extra: Record<string, unknown> = {}) =>
  ({ name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: ago(5 * M), ...extra });
const obj = (o: Record<string, unknown> & { metadata: KubeObject['metadata'] }): KubeObject => o as KubeObject;

const headers = (r: ResourceDescriptor) => toTable(r, []).columnDefinitions.map((c) => (c.priority ? `*${c.name}` : c.name));
const cells = (r: ResourceDescriptor, o: KubeObject) => toTable(r, [o], { now: NOW }).rows[0]!.cells;

describe('wantsTable', () => {
  for (const [accept, want] of [
    ['application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', true],
    ['application/json;as=Table;v=v1beta1;g=meta.k8s.io', true],
    ['application/json; as=Table; g=meta.k8s.io; v=v1', true],
    ['application/json', false],
    ['application/vnd.kubernetes.protobuf,application/json', false],
    [undefined, false],
    ['application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', false],
    ['application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json', true],
  ] as const) {
    test(`${accept} → ${want}`, () => assert.equal(wantsTable(accept), want));
  }
});

describe('column sets match upstream printers.go', () => {
  for (const [r, want] of [
    [Pods, ['Name', 'Ready', 'Status', 'Restarts', 'Age', '*IP', '*Node', '*Nominated Node', '*Readiness Gates']],
    [Deployments, ['Name', 'Ready', 'Up-to-date', 'Available', 'Age', '*Containers', '*Images', '*Selector']],
    [ReplicaSets, ['Name', 'Desired', 'Current', 'Ready', 'Age', '*Containers', '*Images', '*Selector']],
    [Services, ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', '*Selector']],
    [EndpointsResource, ['Name', 'Endpoints', 'Age']],
    [Nodes, ['Name', 'Status', 'Roles', 'Age', 'Version', '*Internal-IP', '*External-IP', '*OS-Image', '*Kernel-Version', '*Container-Runtime']],
    [Namespaces, ['Name', 'Status', 'Age']],
    [ConfigMaps, ['Name', 'Data', 'Age']],
    [Secrets, ['Name', 'Type', 'Data', 'Age']],
    [Events, ['Last Seen', 'Type', 'Reason', 'Object', '*Subobject', '*Source', 'Message', '*First Seen', '*Count', '*Name']],
    [ServiceAccounts, ['Name', 'Secrets', 'Age']],
    [Leases, ['Name', 'Holder', 'Age']],
    [EndpointSlices, ['Name', 'AddressType', 'Ports', 'Endpoints', 'Age']],
    [PriorityClasses, ['Name', 'Value', 'Global-Default', 'Age', 'PreemptionPolicy']],
    [{ ...Pods, group: 'example.com', resource: 'widgets' }, ['Name', 'Age']],
  ] as const) {
    test(r.resource, () => assert.deepEqual(headers(r as ResourceDescriptor), want));
  }
  test('the name column is marked with format name', () => {
    assert.equal(toTable(Pods, []).columnDefinitions[0]!.format, 'name');
    assert.equal(toTable(Pods, []).columnDefinitions[1]!.format, '');
  });
});

const running = (name: string, extra: Record<string, unknown> = {}) =>
  ({ name, ready: true, restartCount: 0, image: 'x', imageID: '', started: true, state: { running: { startedAt: ago(4 * M) } }, ...extra });
const waiting = (name: string, reason: string, extra: Record<string, unknown> = {}) =>
  ({ name, ready: false, restartCount: 0, image: 'x', imageID: '', state: { waiting: { reason } }, ...extra });
const terminated = (name: string, exitCode: number, reason?: string, extra: Record<string, unknown> = {}) =>
  ({ name, ready: false, restartCount: 0, image: 'x', imageID: '', state: { terminated: { exitCode, ...(reason ? { reason } : {}) } }, ...extra });
const pod = (spec: Record<string, unknown>, status: Record<string, unknown>, m: Record<string, unknown> = {}) =>
  obj({ apiVersion: 'v1', kind: 'Pod', metadata: meta('p', m), spec: { containers: [{ name: 'c' }], ...spec }, status });

describe('pod rows', () => {
  const cases: { name: string; pod: KubeObject; want: unknown[] }[] = [
    { name: 'running and ready', pod: pod({ nodeName: 'n1' }, { phase: 'Running', podIPs: [{ ip: '10.244.1.5' }], containerStatuses: [running('c')] }),
      want: ['p', '1/1', 'Running', '0', '5m', '10.244.1.5', 'n1', '<none>', '<none>'] },
    { name: 'pending, unscheduled', pod: pod({}, { phase: 'Pending' }),
      want: ['p', '0/1', 'Pending', '0', '5m', '<none>', '<none>', '<none>', '<none>'] },
    { name: 'container creating', pod: pod({ nodeName: 'n1' }, { phase: 'Pending', containerStatuses: [waiting('c', 'ContainerCreating')] }),
      want: ['p', '0/1', 'ContainerCreating', '0', '5m', '<none>', 'n1', '<none>', '<none>'] },
    { name: 'crash loop with restarts "(2m ago)"', pod: pod({}, { phase: 'Running', containerStatuses: [
      waiting('c', 'CrashLoopBackOff', { restartCount: 2, lastState: { terminated: { exitCode: 1, finishedAt: ago(2 * M) } } })] }),
      want: ['p', '0/1', 'CrashLoopBackOff', '2 (2m ago)', '5m'] },
    { name: 'restarts without a termination time print the count only', pod: pod({}, { phase: 'Running', containerStatuses: [running('c', { restartCount: 3 })] }),
      want: ['p', '1/1', 'Running', '3', '5m'] },
    { name: 'completed', pod: pod({}, { phase: 'Succeeded', containerStatuses: [terminated('c', 0, 'Completed')] }),
      want: ['p', '0/1', 'Completed', '0', '5m'] },
    { name: 'error exit', pod: pod({}, { phase: 'Failed', containerStatuses: [terminated('c', 2, 'Error')] }),
      want: ['p', '0/1', 'Error', '0', '5m'] },
    { name: 'exit code without a reason', pod: pod({}, { phase: 'Running', containerStatuses: [terminated('c', 3)] }),
      want: ['p', '0/1', 'ExitCode:3', '0', '5m'] },
    { name: 'signal without a reason', pod: pod({}, { phase: 'Running', containerStatuses: [{ ...terminated('c', 137), state: { terminated: { exitCode: 137, signal: 9 } } }] }),
      want: ['p', '0/1', 'Signal:9', '0', '5m'] },
    { name: 'image pull backoff', pod: pod({}, { phase: 'Pending', containerStatuses: [waiting('c', 'ImagePullBackOff')] }),
      want: ['p', '0/1', 'ImagePullBackOff', '0', '5m'] },
    { name: 'terminating', pod: pod({}, { phase: 'Running', containerStatuses: [running('c')] }, { deletionTimestamp: ago(M) }),
      want: ['p', '1/1', 'Terminating', '0', '5m'] },
    { name: 'terminal pods are not Terminating', pod: pod({}, { phase: 'Succeeded', containerStatuses: [terminated('c', 0, 'Completed')] }, { deletionTimestamp: ago(M) }),
      want: ['p', '0/1', 'Completed', '0', '5m'] },
    { name: 'node lost', pod: pod({}, { phase: 'Running', reason: 'NodeLost' }, { deletionTimestamp: ago(M) }),
      want: ['p', '0/1', 'Unknown', '0', '5m'] },
    { name: 'evicted (status.reason)', pod: pod({}, { phase: 'Failed', reason: 'Evicted' }),
      want: ['p', '0/1', 'Evicted', '0', '5m'] },
    { name: 'init 0/1', pod: pod({ initContainers: [{ name: 'i' }] }, { phase: 'Pending', initContainerStatuses: [waiting('i', 'PodInitializing')], containerStatuses: [waiting('c', 'PodInitializing')] }),
      want: ['p', '0/1', 'Init:0/1', '0', '5m'] },
    { name: 'init 1/2', pod: pod({ initContainers: [{ name: 'a' }, { name: 'b' }] }, { phase: 'Pending', initContainerStatuses: [terminated('a', 0, 'Completed'), running('b', { ready: false })] }),
      want: ['p', '0/1', 'Init:1/2', '0', '5m'] },
    { name: 'init crash loop', pod: pod({ initContainers: [{ name: 'i' }] }, { phase: 'Pending', initContainerStatuses: [waiting('i', 'CrashLoopBackOff', { restartCount: 4 })] }),
      want: ['p', '0/1', 'Init:CrashLoopBackOff', '4', '5m'] },
    { name: 'init error', pod: pod({ initContainers: [{ name: 'i' }] }, { phase: 'Failed', initContainerStatuses: [terminated('i', 1, 'Error')] }),
      want: ['p', '0/1', 'Init:Error', '0', '5m'] },
    { name: 'init exit code', pod: pod({ initContainers: [{ name: 'i' }] }, { phase: 'Pending', initContainerStatuses: [terminated('i', 5)] }),
      want: ['p', '0/1', 'Init:ExitCode:5', '0', '5m'] },
    { name: 'sidecar counts towards READY', pod: pod({ initContainers: [{ name: 's', restartPolicy: 'Always' }] }, { phase: 'Running',
      conditions: [{ type: 'Initialized', status: 'True' }], initContainerStatuses: [running('s')], containerStatuses: [running('c')] }),
      want: ['p', '2/2', 'Running', '0', '5m'] },
    { name: 'completed container next to a running one is Running when Ready', pod: pod({ containers: [{ name: 'a' }, { name: 'b' }] }, { phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [running('a'), terminated('b', 0, 'Completed')] }),
      want: ['p', '1/2', 'Running', '0', '5m'] },
    { name: '... and NotReady otherwise', pod: pod({ containers: [{ name: 'a' }, { name: 'b' }] }, { phase: 'Running',
      containerStatuses: [running('a'), terminated('b', 0, 'Completed')] }),
      want: ['p', '1/2', 'NotReady', '0', '5m'] },
    { name: 'scheduling gated', pod: pod({}, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }),
      want: ['p', '0/1', 'SchedulingGated', '0', '5m'] },
    { name: 'readiness gates', pod: pod({ readinessGates: [{ conditionType: 'x' }, { conditionType: 'y' }] }, { phase: 'Running', conditions: [{ type: 'x', status: 'True' }] }),
      want: ['p', '0/1', 'Running', '0', '5m', '<none>', '<none>', '<none>', '1/2'] },
  ];
  for (const tc of cases) {
    test(tc.name, () => assert.deepEqual(cells(Pods, tc.pod).slice(0, tc.want.length), tc.want));
  }
  test('terminal pods carry the Completed row condition', () => {
    const t = toTable(Pods, [pod({}, { phase: 'Succeeded' })], { now: NOW });
    assert.deepEqual(t.rows[0]!.conditions, [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);
    assert.equal(toTable(Pods, [pod({}, { phase: 'Running' })], { now: NOW }).rows[0]!.conditions, undefined);
  });
});

describe('other kinds', () => {
  const template = { spec: { containers: [{ name: 'web', image: 'nginx:1.26' }, { name: 'side', image: 'busybox' }] } };
  const selector = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] };
  const cases: { name: string; r: ResourceDescriptor; o: KubeObject; want: unknown[] }[] = [
    { name: 'deployment', r: Deployments, o: obj({ metadata: meta('web'), spec: { replicas: 3, selector, template }, status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } }),
      want: ['web', '2/3', 3, 2, '5m', 'web,side', 'nginx:1.26,busybox', 'app=web,tier in (a,b)'] },
    { name: 'deployment without status', r: Deployments, o: obj({ metadata: meta('web'), spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template } }),
      want: ['web', '0/1', 0, 0, '5m', 'web,side', 'nginx:1.26,busybox', 'app=web'] },
    { name: 'replicaset', r: ReplicaSets, o: obj({ metadata: meta('web-abc'), spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template }, status: { replicas: 2, readyReplicas: 1 } }),
      want: ['web-abc', 2, 2, 1, '5m', 'web,side', 'nginx:1.26,busybox', 'app=web'] },
    { name: 'clusterIP service', r: Services, o: obj({ metadata: meta('svc'), spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], selector: { b: '2', a: '1' }, ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] } }),
      want: ['svc', 'ClusterIP', '10.96.0.10', '<none>', '80/TCP,53/UDP', '5m', 'a=1,b=2'] },
    { name: 'nodeport service', r: Services, o: obj({ metadata: meta('np'), spec: { type: 'NodePort', clusterIPs: ['10.96.0.11'], ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] } }),
      want: ['np', 'NodePort', '10.96.0.11', '<none>', '80:30080/TCP', '5m', '<none>'] },
    { name: 'pending load balancer', r: Services, o: obj({ metadata: meta('lb'), spec: { type: 'LoadBalancer', clusterIPs: ['10.96.0.12'], ports: [] } }),
      want: ['lb', 'LoadBalancer', '10.96.0.12', '<pending>', '<none>', '5m', '<none>'] },
    { name: 'headless service', r: Services, o: obj({ metadata: meta('h'), spec: { type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'], ports: [{ port: 80, protocol: 'TCP' }] } }),
      want: ['h', 'ClusterIP', 'None', '<none>', '80/TCP', '5m', '<none>'] },
    { name: 'endpoints', r: EndpointsResource, o: obj({ metadata: meta('svc'), subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }, { port: 443 }] }] }),
      want: ['svc', '10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...', '5m'] },
    { name: 'empty endpoints', r: EndpointsResource, o: obj({ metadata: meta('svc') }), want: ['svc', '<none>', '5m'] },
    { name: 'ready node', r: Nodes, o: obj({ metadata: meta('n1', { namespace: undefined, labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'worker' } }),
      status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: '10.240.0.2' }], nodeInfo: { kubeletVersion: 'v1.32.0-mk8s', osImage: 'Debian', kernelVersion: '6.1', containerRuntimeVersion: 'docker://26' } } }),
      want: ['n1', 'Ready', 'control-plane,worker', '5m', 'v1.32.0-mk8s', '10.240.0.2', '<none>', 'Debian', '6.1', 'docker://26'] },
    { name: 'cordoned NotReady node', r: Nodes, o: obj({ metadata: meta('n2'), spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }),
      want: ['n2', 'NotReady,SchedulingDisabled', '<none>', '5m', '', '<none>', '<none>', '<unknown>', '<unknown>', '<unknown>'] },
    { name: 'node without conditions', r: Nodes, o: obj({ metadata: meta('n3') }), want: ['n3', 'Unknown'] },
    { name: 'namespace', r: Namespaces, o: obj({ metadata: meta('ns'), status: { phase: 'Active' } }), want: ['ns', 'Active', '5m'] },
    { name: 'configmap counts data and binaryData', r: ConfigMaps, o: obj({ metadata: meta('cm'), data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }), want: ['cm', 3, '5m'] },
    { name: 'secret', r: Secrets, o: obj({ metadata: meta('s'), type: 'Opaque', data: { a: 'MQ==' } }), want: ['s', 'Opaque', 1, '5m'] },
    { name: 'serviceaccount', r: ServiceAccounts, o: obj({ metadata: meta('default') }), want: ['default', 0, '5m'] },
    { name: 'lease', r: Leases, o: obj({ metadata: meta('n1'), spec: { holderIdentity: 'n1' } }), want: ['n1', 'n1', '5m'] },
    { name: 'endpointslice', r: EndpointSlices, o: obj({ metadata: meta('svc-abc'), addressType: 'IPv4', ports: [{ port: 80 }, { name: 'https' }],
      endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'] }, { addresses: ['10.0.0.3'] }, { addresses: ['10.0.0.4'] }] }),
      want: ['svc-abc', 'IPv4', '80,https', '10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...', '5m'] },
    { name: 'endpointslice without endpoints', r: EndpointSlices, o: obj({ metadata: meta('e'), addressType: 'IPv4' }), want: ['e', 'IPv4', '<unset>', '<unset>', '5m'] },
    { name: 'priorityclass', r: PriorityClasses, o: obj({ metadata: meta('high'), value: 1000, globalDefault: false, preemptionPolicy: 'PreemptLowerPriority' }),
      want: ['high', 1000, false, '5m', 'PreemptLowerPriority'] },
    { name: 'event', r: Events, o: obj({ metadata: meta('p.123'), type: 'Normal', reason: 'Scheduled', message: 'Successfully assigned default/p to n1\n',
      involvedObject: { kind: 'Pod', name: 'p', fieldPath: 'spec.containers{c}' }, source: { component: 'default-scheduler' }, firstTimestamp: ago(3 * M), lastTimestamp: ago(M), count: 2 }),
      want: ['60s', 'Normal', 'Scheduled', 'pod/p', 'spec.containers{c}', 'default-scheduler', 'Successfully assigned default/p to n1', '3m', 2, 'p.123'] },
    { name: 'events.k8s.io-style event', r: Events, o: obj({ metadata: meta('e'), type: 'Warning', reason: 'X', message: 'm', involvedObject: { kind: 'Node' },
      eventTime: ago(2 * M), reportingComponent: 'kubelet', reportingInstance: 'n1' }),
      want: ['2m', 'Warning', 'X', 'node', '', 'kubelet, n1', 'm', '2m', 1, 'e'] },
    { name: 'any other kind prints Name and Age', r: { ...Pods, group: 'example.com', resource: 'widgets' }, o: obj({ metadata: meta('w') }), want: ['w', '5m'] },
  ];
  for (const tc of cases) test(tc.name, () => assert.deepEqual(cells(tc.r, tc.o).slice(0, tc.want.length), tc.want));
});

describe('table envelope', () => {
  const p = pod({}, { phase: 'Running' }, { labels: { app: 'web' } });
  test('rows carry PartialObjectMetadata by default', () => {
    const t = toTable(Pods, [p], { now: NOW, listMeta: { resourceVersion: '42' } });
    assert.equal(t.kind, 'Table');
    assert.equal(t.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(t.metadata, { resourceVersion: '42' });
    assert.deepEqual(t.rows[0]!.object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: p.metadata });
  });
  test('includeObject=Object carries the full object with kind and apiVersion', () => {
    const bare = obj({ metadata: meta('x'), spec: { containers: [] } });
    const row = toTable(Pods, [bare], { includeObject: 'Object', now: NOW }).rows[0]!;
    assert.deepEqual(row.object, { ...bare, apiVersion: 'v1', kind: 'Pod' });
    const d = toTable(Deployments, [obj({ metadata: meta('d') })], { includeObject: 'Object', now: NOW }).rows[0]!;
    assert.equal((d.object as KubeObject).apiVersion, 'apps/v1');
  });
  test('includeObject=None carries no object', () => {
    assert.equal('object' in toTable(Pods, [p], { includeObject: 'None', now: NOW }).rows[0]!, false);
  });
  test('noHeaders drops the column definitions; continue is passed through', () => {
    const t = toTable(Pods, [p], { noHeaders: true, now: NOW, listMeta: { resourceVersion: '1', continue: 'abc' } });
    assert.deepEqual(t.columnDefinitions, []);
    assert.deepEqual(t.metadata, { resourceVersion: '1', continue: 'abc' });
    assert.equal(t.rows[0]!.cells.length, 9);
  });
  test('every row has one cell per column', () => {
    for (const r of [Pods, Deployments, ReplicaSets, Services, EndpointsResource, Nodes, Namespaces, ConfigMaps, Secrets, Events, ServiceAccounts, Leases, EndpointSlices, PriorityClasses]) {
      const t = toTable(r, [obj({ metadata: meta('x') })], { now: NOW });
      assert.equal(t.rows[0]!.cells.length, t.columnDefinitions.length, r.resource);
    }
  });
});
