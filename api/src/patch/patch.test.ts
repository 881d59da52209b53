import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Deployments, Nodes, Pods, Services, ConfigMaps } from '../scheme.js';
import { ApiError, isBadRequest, isInvalid } from '../errors.js';
import { applyMergePatch, applyJsonPatch, applyStrategicMergePatch } from './index.js';

type J = Record<string, unknown>;
const deploy = (containers: unknown[], extra: J = {}): J => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', labels: { app: 'web', tier: 'fe' } },
  spec: {
    replicas: 1, selector: { matchLabels: { app: 'web' } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers, restartPolicy: 'Always', ...extra } },
  },
});
const tspec = (d: J) => ((d['spec'] as J)['template'] as J)['spec'] as J;

interface SmpCase { name: string; resource: { group: string; resource: string }; original: J; patch: unknown; check: (got: J) => void }

const smpCases: SmpCase[] = [
  {
    name: 'kubectl apply: image change with $setElementOrder keeps other container fields',
    resource: Deployments,
    original: deploy([{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80, protocol: 'TCP' }], imagePullPolicy: 'IfNotPresent' }]),
    patch: { metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' } }, spec: { replicas: 3, template: { spec: { '$setElementOrder/containers': [{ name: 'nginx' }], containers: [{ image: 'nginx:1.26', name: 'nginx' }] } } } },
    check: (d) => {
      assert.deepEqual(tspec(d)['containers'], [{ name: 'nginx', image: 'nginx:1.26', ports: [{ containerPort: 80, protocol: 'TCP' }], imagePullPolicy: 'IfNotPresent' }]);
      assert.equal((d['spec'] as J)['replicas'], 3);
      assert.deepEqual((d['metadata'] as J)['annotations'], { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' });
      assert.deepEqual((d['metadata'] as J)['labels'], { app: 'web', tier: 'fe' });
    },
  },
  {
    name: 'kubectl apply: removing an env var',
    resource: Deployments,
    original: deploy([{ name: 'app', image: 'x:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }, { name: 'C', value: '3' }] }]),
    patch: { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }], env: [{ $patch: 'delete', name: 'B' }], name: 'app' }] } } } },
    check: (d) => assert.deepEqual((tspec(d)['containers'] as J[])[0]!['env'], [{ name: 'A', value: '1' }, { name: 'C', value: '3' }]),
  },
  {
    name: 'kubectl apply: removing a container port',
    resource: Deployments,
    original: deploy([{ name: 'app', image: 'x:1', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443, protocol: 'TCP', name: 'https' }] }]),
    patch: { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ '$setElementOrder/ports': [{ containerPort: 80 }], name: 'app', ports: [{ $patch: 'delete', containerPort: 443 }] }] } } } },
    check: (d) => assert.deepEqual((tspec(d)['containers'] as J[])[0]!['ports'], [{ containerPort: 80, protocol: 'TCP' }]),
  },
  {
    name: 'kubectl apply: changing an env value merges by name',
    resource: Deployments,
    original: deploy([{ name: 'app', image: 'x:1', env: [{ name: 'A', value: '1' }, { name: 'B', valueFrom: { fieldRef: { fieldPath: 'x' } } }] }]),
    patch: { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ '$setElementOrder/env': [{ name: 'A' }, { name: 'B' }], env: [{ name: 'B', value: 'v', valueFrom: null }], name: 'app' }] } } } },
    check: (d) => assert.deepEqual((tspec(d)['containers'] as J[])[0]!['env'], [{ name: 'A', value: '1' }, { name: 'B', value: 'v' }]),
  },
  {
    name: 'adding a container follows $setElementOrder',
    resource: Deployments,
    original: deploy([{ name: 'a', image: 'a:1' }]),
    patch: { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'b', image: 'b:1' }] } } } },
    check: (d) => assert.deepEqual(tspec(d)['containers'], [{ name: 'b', image: 'b:1' }, { name: 'a', image: 'a:1' }]),
  },
  {
    name: 'reordering only via $setElementOrder',
    resource: Deployments,
    original: deploy([{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }]),
    patch: { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } } } },
    check: (d) => assert.deepEqual((tspec(d)['containers'] as J[]).map((c) => c['name']), ['b', 'a']),
  },
  {
    name: 'server-only list items keep their live position',
    resource: Deployments,
    original: deploy([{ name: 'a', image: 'a:1' }, { name: 'sidecar', image: 's:1' }, { name: 'b', image: 'b:1' }]),
    patch: { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }], containers: [{ name: 'b', image: 'b:2' }] } } } },
    check: (d) => assert.deepEqual((tspec(d)['containers'] as J[]).map((c) => `${c['name']}=${c['image']}`), ['a=a:1', 'sidecar=s:1', 'b=b:2']),
  },
  {
    name: 'list without $setElementOrder: patch items first in patch order, merged by key',
    resource: Pods,
    original: { metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } },
    patch: { spec: { containers: [{ name: 'c', image: 'c:1' }, { name: 'a', image: 'a:2' }] } },
    check: (p) => assert.deepEqual(((p['spec'] as J)['containers'] as J[]).map((c) => `${c['name']}=${c['image']}`), ['c=c:1', 'a=a:2', 'b=b:1']),
  },
  {
    name: 'uncordon: null deletes spec.unschedulable',
    resource: Nodes,
    original: { metadata: { name: 'n1' }, spec: { unschedulable: true, podCIDR: '10.244.1.0/24' } },
    patch: { spec: { unschedulable: null } },
    check: (n) => assert.deepEqual(n['spec'], { podCIDR: '10.244.1.0/24' }),
  },
  {
    name: 'cordon sets spec.unschedulable',
    resource: Nodes,
    original: { metadata: { name: 'n1' }, spec: {} },
    patch: { spec: { unschedulable: true } },
    check: (n) => assert.deepEqual(n['spec'], { unschedulable: true }),
  },
  {
    name: 'label removal via null',
    resource: Pods,
    original: { metadata: { name: 'p', labels: { a: '1', b: '2' } } },
    patch: { metadata: { labels: { a: null, c: '3' } } },
    check: (p) => assert.deepEqual((p['metadata'] as J)['labels'], { b: '2', c: '3' }),
  },
  {
    name: 'null for an absent key is ignored',
    resource: Pods,
    original: { metadata: { name: 'p' } },
    patch: { metadata: { labels: { a: null } }, spec: { x: { a: null, b: 1 } } },
    check: (p) => { assert.deepEqual((p['metadata'] as J)['labels'], {}); assert.deepEqual(p['spec'], { x: { b: 1 } }); },
  },
  {
    name: 'finalizers merge as a set; $deleteFromPrimitiveList removes',
    resource: ConfigMaps,
    original: { metadata: { name: 'c', finalizers: ['a', 'b'] } },
    patch: { metadata: { finalizers: ['c', 'a'], '$deleteFromPrimitiveList/finalizers': ['b'] } },
    check: (c) => assert.deepEqual((c['metadata'] as J)['finalizers'], ['c', 'a']),
  },
  {
    name: 'finalizers with $setElementOrder',
    resource: ConfigMaps,
    original: { metadata: { name: 'c', finalizers: ['a', 'b'] } },
    patch: { metadata: { '$setElementOrder/finalizers': ['b', 'a', 'x'], finalizers: ['x'] } },
    check: (c) => assert.deepEqual((c['metadata'] as J)['finalizers'], ['b', 'a', 'x']),
  },
  {
    name: 'untagged lists (tolerations, args) are replaced',
    resource: Pods,
    original: { metadata: { name: 'p' }, spec: { tolerations: [{ key: 'a', operator: 'Exists' }], containers: [{ name: 'c', args: ['1', '2'] }] } },
    patch: { spec: { tolerations: [{ key: 'b', operator: 'Exists' }], containers: [{ name: 'c', args: ['3'] }] } },
    check: (p) => {
      assert.deepEqual((p['spec'] as J)['tolerations'], [{ key: 'b', operator: 'Exists' }]);
      assert.deepEqual(((p['spec'] as J)['containers'] as J[])[0]!['args'], ['3']);
    },
  },
  {
    name: '$patch: replace on a map',
    resource: Pods,
    original: { metadata: { name: 'p' }, spec: { nodeSelector: { a: '1', b: '2' } } },
    patch: { spec: { nodeSelector: { $patch: 'replace', c: '3' } } },
    check: (p) => assert.deepEqual((p['spec'] as J)['nodeSelector'], { c: '3' }),
  },
  {
    name: '$patch: delete on a map empties it',
    resource: Pods,
    original: { metadata: { name: 'p' }, spec: { securityContext: { runAsUser: 1 } } },
    patch: { spec: { securityContext: { $patch: 'delete' } } },
    check: (p) => assert.deepEqual((p['spec'] as J)['securityContext'], {}),
  },
  {
    name: '$patch: replace element replaces the whole list',
    resource: Pods,
    original: { metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 1 }] }, { name: 'b' }] } },
    patch: { spec: { containers: [{ $patch: 'replace' }, { name: 'a', image: 'a:2' }] } },
    check: (p) => assert.deepEqual((p['spec'] as J)['containers'], [{ name: 'a', image: 'a:2' }]),
  },
  {
    name: '$retainKeys on deployment strategy (switch to Recreate)',
    resource: Deployments,
    original: deploy([{ name: 'a', image: 'a:1' }]),
    patch: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } },
    check: (d) => assert.deepEqual((d['spec'] as J)['strategy'], { type: 'Recreate' }),
  },
  {
    name: '$retainKeys on a volume source change',
    resource: Deployments,
    original: deploy([{ name: 'a', image: 'a:1' }], { volumes: [{ name: 'data', emptyDir: {} }, { name: 'other', emptyDir: {} }] }),
    patch: { spec: { template: { spec: { '$setElementOrder/volumes': [{ name: 'data' }, { name: 'other' }], volumes: [{ $retainKeys: ['configMap', 'name'], configMap: { name: 'cm' }, name: 'data' }] } } } },
    check: (d) => assert.deepEqual(tspec(d)['volumes'], [{ name: 'data', configMap: { name: 'cm' } }, { name: 'other', emptyDir: {} }]),
  },
  {
    name: 'volumeMounts merge by mountPath',
    resource: Pods,
    original: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', volumeMounts: [{ name: 'a', mountPath: '/a' }, { name: 'b', mountPath: '/b' }] }] } },
    patch: { spec: { containers: [{ name: 'c', volumeMounts: [{ name: 'a2', mountPath: '/a' }] }] } },
    check: (p) => assert.deepEqual(((p['spec'] as J)['containers'] as J[])[0]!['volumeMounts'], [{ name: 'a2', mountPath: '/a' }, { name: 'b', mountPath: '/b' }]),
  },
  {
    name: 'service ports merge by port',
    resource: Services,
    original: { metadata: { name: 's' }, spec: { clusterIP: '10.96.0.9', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }, { name: 'https', port: 443, protocol: 'TCP' }] } },
    patch: { spec: { ports: [{ port: 80, targetPort: 9090 }] } },
    check: (s) => assert.deepEqual(s['spec'], { clusterIP: '10.96.0.9', ports: [{ name: 'http', port: 80, targetPort: 9090, protocol: 'TCP' }, { name: 'https', port: 443, protocol: 'TCP' }] }),
  },
  {
    name: 'status conditions merge by type',
    resource: Pods,
    original: { metadata: { name: 'p' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False' }] } },
    patch: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }, { type: 'Initialized', status: 'True' }] } },
    // Server-only items slot in before the first patch item they precede live (upstream mergeSortedSlice).
    check: (p) => assert.deepEqual(p['status'], { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'True' }, { type: 'Initialized', status: 'True' }] }),
  },
  {
    name: 'ownerReferences merge by uid',
    resource: Pods,
    original: { metadata: { name: 'p', ownerReferences: [{ uid: '1', name: 'a', kind: 'ReplicaSet', apiVersion: 'apps/v1' }] } },
    patch: { metadata: { ownerReferences: [{ uid: '2', name: 'b', kind: 'ReplicaSet', apiVersion: 'apps/v1' }] } },
    check: (p) => assert.deepEqual(((p['metadata'] as J)['ownerReferences'] as J[]).map((r) => r['uid']), ['2', '1']),
  },
  {
    name: 'rollout restart annotation',
    resource: Deployments,
    original: deploy([{ name: 'a', image: 'a:1' }]),
    patch: { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-30T08:00:00Z' } } } } },
    check: (d) => assert.deepEqual(((d['spec'] as J)['template'] as J)['metadata'], { labels: { app: 'web' }, annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-30T08:00:00Z' } }),
  },
  {
    name: 'env added to a container without env',
    resource: Deployments,
    original: deploy([{ name: 'a', image: 'a:1' }]),
    patch: { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ '$setElementOrder/env': [{ name: 'X' }], env: [{ name: 'X', value: '1' }], name: 'a' }] } } } },
    check: (d) => assert.deepEqual(tspec(d)['containers'], [{ name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }] }]),
  },
  {
    name: 'unknown kinds still merge maps and replace lists',
    resource: { group: 'example.com', resource: 'widgets' },
    original: { metadata: { name: 'w' }, spec: { items: [1, 2], m: { a: 1 } } },
    patch: { spec: { items: [3], m: { b: 2 } } },
    check: (w) => assert.deepEqual(w['spec'], { items: [3], m: { a: 1, b: 2 } }),
  },
];

describe('applyStrategicMergePatch', () => {
  for (const tc of smpCases) {
    test(tc.name, () => {
      const before = structuredClone(tc.original);
      const got = applyStrategicMergePatch(tc.original, tc.patch, tc.resource);
      tc.check(got);
      assert.deepEqual(tc.original, before, 'original untouched');
      assert.ok(!JSON.stringify(got).includes('$'), 'no directives left in the result');
    });
  }
  const bad = [
    { name: 'patch not an object', patch: [1] },
    { name: 'element without merge key', patch: { spec: { containers: [{ image: 'x' }] } } },
    { name: 'delete element without merge key', patch: { spec: { containers: [{ $patch: 'delete' }] } } },
    { name: 'unknown $patch', patch: { spec: { $patch: 'explode' } } },
    { name: '$retainKeys not a list', patch: { spec: { $retainKeys: 'a' } } },
  ];
  for (const tc of bad) {
    test(`rejects: ${tc.name}`, () => {
      assert.throws(() => applyStrategicMergePatch({ metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }] } }, tc.patch, Pods), (e: unknown) => isBadRequest(e));
    });
  }
});

describe('applyMergePatch', () => {
  const cases = [
    { name: 'merges maps', orig: { a: { b: 1, c: 2 } }, patch: { a: { b: 3 } }, want: { a: { b: 3, c: 2 } } },
    { name: 'null deletes', orig: { a: 1, b: 2 }, patch: { a: null }, want: { b: 2 } },
    { name: 'arrays replace', orig: { a: [1, 2] }, patch: { a: [3] }, want: { a: [3] } },
    { name: 'scalar replaces map', orig: { a: { b: 1 } }, patch: { a: 'x' }, want: { a: 'x' } },
    { name: 'map replaces scalar', orig: { a: 'x' }, patch: { a: { b: null, c: 1 } }, want: { a: { c: 1 } } },
    { name: 'uncordon', orig: { spec: { unschedulable: true } }, patch: { spec: { unschedulable: null } }, want: { spec: {} } },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const before = structuredClone(tc.orig);
      assert.deepEqual(applyMergePatch(tc.orig, tc.patch), tc.want);
      assert.deepEqual(tc.orig, before);
    });
  }
  test('rejects a non-object patch', () => assert.throws(() => applyMergePatch({}, [1]), (e: unknown) => isBadRequest(e)));
});

describe('applyJsonPatch', () => {
  const doc = { metadata: { name: 'd', labels: { a: '1' } }, spec: { replicas: 1, list: ['x'] } };
  const ok = [
    { name: 'replace', ops: [{ op: 'replace', path: '/spec/replicas', value: 3 }], check: (d: J) => assert.equal((d['spec'] as J)['replicas'], 3) },
    { name: 'add to list end', ops: [{ op: 'add', path: '/spec/list/-', value: 'y' }], check: (d: J) => assert.deepEqual((d['spec'] as J)['list'], ['x', 'y']) },
    { name: 'remove label (escaped path)', ops: [{ op: 'remove', path: '/metadata/labels/a' }], check: (d: J) => assert.deepEqual((d['metadata'] as J)['labels'], {}) },
    { name: 'replace of a missing member adds it (evanphx v4)', ops: [{ op: 'replace', path: '/spec/nope', value: 1 }], check: (d: J) => assert.equal((d['spec'] as J)['nope'], 1) },
    { name: 'test of a missing path against null passes (evanphx v4)', ops: [{ op: 'test', path: '/spec/nope', value: null }], check: (d: J) => assert.equal((d['spec'] as J)['nope'], undefined) },
    { name: 'later ops see earlier ones', ops: [{ op: 'add', path: '/spec/m', value: {} }, { op: 'add', path: '/spec/m/k', value: 'v' }], check: (d: J) => assert.deepEqual((d['spec'] as J)['m'], { k: 'v' }) },
    { name: 'test then replace', ops: [{ op: 'test', path: '/spec/replicas', value: 1 }, { op: 'replace', path: '/spec/replicas', value: 2 }], check: (d: J) => assert.equal((d['spec'] as J)['replicas'], 2) },
  ];
  for (const tc of ok) {
    test(tc.name, () => {
      const before = structuredClone(doc);
      tc.check(applyJsonPatch(doc, tc.ops) as J);
      assert.deepEqual(doc, before);
    });
  }
  const failing = [
    { name: 'failed test op', ops: [{ op: 'test', path: '/spec/replicas', value: 5 }], cause: 'testing value /spec/replicas failed: test failed' },
    { name: 'replace below a missing parent', ops: [{ op: 'replace', path: '/spec/a/b', value: 1 }], cause: 'replace operation does not apply: doc is missing path: /spec/a/b: missing value' },
    { name: 'remove missing key', ops: [{ op: 'remove', path: '/spec/nope' }], cause: "error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value" },
    { name: 'remove bad index', ops: [{ op: 'remove', path: '/spec/list/7' }], cause: "error in remove for path: '/spec/list/7': Unable to access invalid index: 7: invalid index referenced" },
    { name: 'add below a missing parent', ops: [{ op: 'add', path: '/spec/x/y', value: 1 }], cause: 'add operation does not apply: doc is missing path: "/spec/x/y": missing value' },
    { name: 'add at a bad index', ops: [{ op: 'add', path: '/spec/list/5', value: 1 }], cause: "error in add for path: '/spec/list/5': Unable to access invalid index: 5: invalid index referenced" },
    { name: 'move from a missing key', ops: [{ op: 'move', from: '/spec/nope', path: '/spec/x' }], cause: "error in move for path: 'nope': Unable to remove nonexistent key: nope: missing value" },
    { name: 'unknown op', ops: [{ op: 'frob', path: '/spec' }], cause: 'Unexpected kind: frob' },
    { name: 'empty op', ops: [{}], cause: 'Unexpected kind: ' },
    { name: 'path without leading slash', ops: [{ op: 'replace', path: 'spec', value: 1 }], cause: 'replace operation does not apply: doc is missing path: spec: missing value' },
  ];
  for (const tc of failing) {
    test(`422: ${tc.name}`, () => {
      assert.throws(() => applyJsonPatch(doc, tc.ops), (e: unknown) => {
        assert.ok(isInvalid(e));
        assert.equal((e as ApiError).code, 422);
        assert.equal((e as ApiError).message, 'the server rejected our request due to an error in our request');
        assert.equal((e as ApiError).details?.causes?.[0]?.message, tc.cause);
        return true;
      });
    });
  }
  test('400 when the body is not an array', () => assert.throws(() => applyJsonPatch(doc, { op: 'add' }), (e: unknown) => isBadRequest(e)));
});

test('strategic merge of a DaemonSet/StatefulSet template merges containers by name (kubectl set env)', () => {
  for (const resource of ['daemonsets', 'statefulsets']) {
    const cur = { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } } };
    const out = applyStrategicMergePatch(cur, { spec: { template: { spec: { containers: [{ name: 'c', env: [{ name: 'WAVE', value: '2' }] }] } } } }, { group: 'apps', resource }) as { spec: { template: { spec: { containers: { image?: string; env?: unknown }[] } } } };
    assert.equal(out.spec.template.spec.containers[0]!.image, 'busybox', resource);
    assert.deepEqual(out.spec.template.spec.containers[0]!.env, [{ name: 'WAVE', value: '2' }]);
  }
});
