import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PersistentVolumeClaims, type PV, type PVC, type StorageClass } from '@mk8s/api';
import { FakeClientset } from '@mk8s/client/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import type { VolumeListers } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import { CycleState, NodeInfo, Snapshot, type Pod } from '../../framework/types.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { testHandle } from '../../testing/framework.js';
import { bindingsDone, ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT, ERR_REASON_UNBOUND_IMMEDIATE, VolumeBinding } from './volume-binding.js';

const onNode = (n: string) => ({ required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [n] }] }] } });
const pv = (name: string, o: { node?: string; cls?: string; claim?: string; phase?: string } = {}): PV => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/d/${name}` }, storageClassName: o.cls ?? '', volumeMode: 'Filesystem',
    ...(o.node ? { nodeAffinity: onNode(o.node) } : {}), ...(o.claim ? { claimRef: { namespace: 'default', name: o.claim, uid: `uid-${o.claim}` } } : {}) },
  status: { phase: o.phase ?? 'Available' },
});
const pvc = (name: string, o: { cls?: string; volumeName?: string; selected?: string; deleting?: boolean; bindCompleted?: boolean } = {}): PVC => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim',
  metadata: {
    name, namespace: 'default', uid: `uid-${name}`,
    ...(o.selected || o.bindCompleted ? { annotations: { ...(o.selected ? { 'volume.kubernetes.io/selected-node': o.selected } : {}), ...(o.bindCompleted ? { 'pv.kubernetes.io/bind-completed': 'yes' } : {}) } } : {}),
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: o.cls ?? '', volumeMode: 'Filesystem', ...(o.volumeName ? { volumeName: o.volumeName } : {}) },
  status: { phase: o.volumeName ? 'Bound' : 'Pending' },
});
const sc = (name: string, mode: string, provisioner = 'mk8s.io/local-path'): StorageClass => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner, volumeBindingMode: mode });
const podWith = (...claims: string[]): Pod => {
  const p = makePod('web');
  p.spec = { ...p.spec!, volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })) };
  return p;
};

function listers(claims: PVC[], volumes: PV[], classes: StorageClass[]): VolumeListers & { claims: Map<string, PVC>; changed(): void } {
  const cm = new Map(claims.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
  const waiters = new Set<() => void>();
  return {
    claims: cm,
    changed: () => { for (const fn of [...waiters]) fn(); },
    onChange: (fn) => { waiters.add(fn); return () => { waiters.delete(fn); }; },
    claim: (ns, n) => cm.get(`${ns}/${n}`),
    volume: (n) => volumes.find((v) => v.metadata.name === n),
    volumes: () => volumes,
    storageClass: (n) => classes.find((c) => c.metadata?.name === n),
  };
}

const classes = [sc('standard', 'WaitForFirstConsumer'), sc('fast', 'Immediate'), sc('manual', 'WaitForFirstConsumer', 'kubernetes.io/no-provisioner')];
const nodes = [makeNode('node-1'), makeNode('node-2')];
const unresolvable = (r: string) => Status.unschedulableAndUnresolvable(r);

test('VolumeBinding PreFilter + Filter: table', () => {
  const cases: { name: string; pod: Pod; claims: PVC[]; volumes?: PV[]; preFilter?: Status; want?: Record<string, Status | undefined> }[] = [
    { name: 'no claims: skipped', pod: makePod('p'), claims: [], preFilter: Status.skip() },
    { name: 'missing claim', pod: podWith('data'), claims: [], preFilter: unresolvable('persistentvolumeclaim "data" not found') },
    { name: 'claim being deleted', pod: podWith('data'), claims: [pvc('data', { deleting: true })], preFilter: unresolvable('persistentvolumeclaim "data" is being deleted') },
    { name: 'unbound Immediate claim', pod: podWith('data'), claims: [pvc('data', { cls: 'fast' })], preFilter: unresolvable(ERR_REASON_UNBOUND_IMMEDIATE) },
    { name: 'unbound claim without a class', pod: podWith('data'), claims: [pvc('data')], preFilter: unresolvable(ERR_REASON_UNBOUND_IMMEDIATE) },
    { name: 'bound to a PV pinned to node-2', pod: podWith('data'), claims: [pvc('data', { volumeName: 'pv' })], volumes: [pv('pv', { node: 'node-2', claim: 'data' })], want: { 'node-1': unresolvable(ERR_REASON_NODE_CONFLICT), 'node-2': undefined } },
    { name: 'bound to a PV without affinity', pod: podWith('data'), claims: [pvc('data', { volumeName: 'pv' })], volumes: [pv('pv', { claim: 'data' })], want: { 'node-1': undefined, 'node-2': undefined } },
    { name: 'WaitForFirstConsumer, provisioner: every node', pod: podWith('data'), claims: [pvc('data', { cls: 'standard' })], want: { 'node-1': undefined, 'node-2': undefined } },
    { name: 'WaitForFirstConsumer already handed to node-1', pod: podWith('data'), claims: [pvc('data', { cls: 'standard', selected: 'node-1' })], want: { 'node-1': undefined, 'node-2': unresolvable(ERR_REASON_BIND_CONFLICT) } },
    { name: 'no provisioner: only nodes with a fitting static PV', pod: podWith('data'), claims: [pvc('data', { cls: 'manual' })], volumes: [pv('local', { cls: 'manual', node: 'node-2' })], want: { 'node-1': unresolvable(ERR_REASON_BIND_CONFLICT), 'node-2': undefined } },
    { name: 'two claims, one static PV: the second cannot share it', pod: podWith('a', 'b'), claims: [pvc('a', { cls: 'manual' }), pvc('b', { cls: 'manual' })], volumes: [pv('local', { cls: 'manual' })], want: { 'node-1': unresolvable(ERR_REASON_BIND_CONFLICT) } },
  ];
  for (const tc of cases) {
    const plugin = new VolumeBinding({ ...testHandle({ volumes: listers(tc.claims, tc.volumes ?? [], classes) }), framework: () => { throw new Error('unused'); } });
    const state = new CycleState();
    const pre = plugin.preFilter(state, tc.pod);
    assert.deepEqual(pre, tc.preFilter, `${tc.name}: preFilter`);
    for (const [node, want] of Object.entries(tc.want ?? {})) {
      assert.deepEqual(plugin.filter(state, tc.pod, new NodeInfo(nodes.find((n) => n.metadata.name === node)!)), want, `${tc.name}: ${node}`);
    }
  }
});

test('VolumeBinding PreBind: sets selected-node on a claim to provision, claims a static PV, then waits until both are bound', async () => {
  const claims = [pvc('dyn', { cls: 'standard' }), pvc('static', { cls: 'manual' })];
  const l = listers(claims, [pv('local', { cls: 'manual', node: 'node-2' })], classes);
  const client = new FakeClientset();
  for (const c of claims) client.seed(c as never);
  client.seed(pv('local', { cls: 'manual', node: 'node-2' }) as never);
  const clock = new FakeClock();
  const plugin = new VolumeBinding({ ...testHandle({ volumes: l, client }), clock, framework: () => { throw new Error('unused'); } });
  const pod = podWith('dyn', 'static');
  const state = new CycleState(new Snapshot(nodes.map((n) => new NodeInfo(n))));
  assert.equal(plugin.preFilter(state, pod), undefined);
  assert.equal(plugin.reserve(state, pod, 'node-2'), undefined);
  let done = false;
  const p = plugin.preBind(state, pod, 'node-2', AbortSignal.timeout(5000)).then((s) => { done = true; return s; });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(client.actionStrings({ writesOnly: true }).sort(), ['patch persistentvolumeclaims', 'update persistentvolumes']);
  const dyn = await client.resource(PersistentVolumeClaims, 'default').get('dyn');
  assert.equal(dyn.metadata.annotations?.['volume.kubernetes.io/selected-node'], 'node-2');
  assert.equal(done, false, 'waits for the binder');
  // volumeName without bind-completed: the binder is not done yet.
  l.claims.set('default/dyn', pvc('dyn', { cls: 'standard', selected: 'node-2', volumeName: 'pvc-1' }));
  l.claims.set('default/static', pvc('static', { cls: 'manual', volumeName: 'local', bindCompleted: true }));
  l.changed();
  await new Promise((r) => setImmediate(r));
  assert.equal(done, false, 'waits for bind-completed');
  // Fully bound (upstream isPVCFullyBound): a cache change wakes PreBind, no timer needed.
  l.claims.set('default/dyn', pvc('dyn', { cls: 'standard', selected: 'node-2', volumeName: 'pvc-1', bindCompleted: true }));
  l.changed();
  assert.equal(await p, undefined);
});

test('VolumeBinding checkBindings: table', () => {
  const pending = (claims: PVC[]) => ({ bound: [], delayed: claims.map((claim) => ({ claim, sc: classes[0] })), chosen: new Map() });
  const cases: { name: string; at: PVC[]; now: PVC[]; want: boolean | Status }[] = [
    { name: 'not bound yet, still selected', at: [pvc('a', { cls: 'standard' })], now: [pvc('a', { cls: 'standard', selected: 'node-1' })], want: false },
    { name: 'selected node reset', at: [pvc('a', { cls: 'standard' })], now: [pvc('a', { cls: 'standard' })], want: Status.unschedulable('selectedNode annotation reset for PVC "a"') },
    { name: 'claim gone', at: [pvc('a', { cls: 'standard' })], now: [], want: Status.unschedulable('persistentvolumeclaim "a" not found') },
    { name: 'volumeName only', at: [pvc('a', { cls: 'standard' })], now: [pvc('a', { cls: 'standard', volumeName: 'v' })], want: false },
    { name: 'fully bound', at: [pvc('a', { cls: 'standard' })], now: [pvc('a', { cls: 'standard', volumeName: 'v', bindCompleted: true })], want: true },
  ];
  for (const tc of cases) {
    assert.deepEqual(bindingsDone(pending(tc.at), 'default', 'node-1', listers(tc.now, [], classes)), tc.want, tc.name);
  }
});
