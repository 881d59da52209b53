import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type KubeObject } from '@mk8s/api';
import { recordUpdate, serverSideApply, validatePatchOptions, type ManagedFieldsEntry } from './apply.js';

const NOW = '2026-01-01T00:00:00Z';
const cm = (data: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data, ...extra }) as unknown as KubeObject;
/** An object with nothing in it yet (so no "before-first-apply" owner). */
const bare = (): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }) as unknown as KubeObject;
const apply = (live: KubeObject, config: KubeObject, manager: string, force = false) =>
  serverSideApply(live, config, manager, 'v1', NOW, { force });
const managers = (o: KubeObject) => ((o.metadata as unknown as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? [])
  .map((m) => `${m.manager}:${JSON.stringify(m.fieldsV1)}`);
const conflictOf = (fn: () => unknown): ApiError => {
  try { fn(); } catch (err) { if (err instanceof ApiError) return err; throw err; }
  assert.fail('expected a conflict');
};

test('a field another Apply manager owns with a different value is a 409 with upstream message and causes', () => {
  const live = apply(bare(), cm({ a: '1', b: '1' }), 'mgr-a');
  const err = conflictOf(() => apply(live, cm({ a: '2' }), 'mgr-b'));
  assert.equal(err.code, 409);
  assert.equal(err.reason, 'Conflict');
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "mgr-a": .data.a');
  assert.deepEqual(err.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "mgr-a"', field: '.data.a' }]);
});

test('the same value shares ownership: the field stays while either manager applies it', () => {
  let live = apply(bare(), cm({ a: '1' }), 'mgr-a');
  live = apply(live, cm({ a: '1', c: '3' }), 'mgr-b');
  assert.deepEqual(managers(live), ['mgr-a:{"f:data":{"f:a":{}}}', 'mgr-b:{"f:data":{"f:a":{},"f:c":{}}}']);
  live = apply(live, cm({ x: '9' }), 'mgr-a'); // a drops a: b still owns it
  assert.deepEqual(live['data'], { a: '1', c: '3', x: '9' });
  live = apply(live, cm({ c: '3' }), 'mgr-b'); // now nobody owns a: removed
  assert.deepEqual(live['data'], { c: '3', x: '9' });
});

test('force takes the conflicting fields over; a manager left with nothing is dropped', () => {
  let live = apply(bare(), cm({ a: '1', b: '1' }), 'mgr-a');
  live = apply(live, cm({ a: '2' }), 'mgr-b', true);
  assert.deepEqual(live['data'], { a: '2', b: '1' });
  assert.deepEqual(managers(live), ['mgr-a:{"f:data":{"f:b":{}}}', 'mgr-b:{"f:data":{"f:a":{}}}']);
  live = apply(live, cm({ b: '2' }), 'mgr-b', true);
  assert.deepEqual(managers(live), ['mgr-b:{"f:data":{"f:b":{}}}']);
  assert.deepEqual(live['data'], { b: '2' }); // a was b's and is no longer applied
  // Once taken over, the old manager now conflicts in turn.
  assert.match(conflictOf(() => apply(live, cm({ b: '1' }), 'mgr-a')).message, /conflict with "mgr-b": \.data\.b$/);
});

test('several conflicts are grouped by manager, Update managers named with version and time', () => {
  const live = cm({ a: '1', b: '1' }, {});
  (live.metadata as unknown as { managedFields: ManagedFieldsEntry[] }).managedFields = [
    { manager: 'kubectl-edit', operation: 'Update', apiVersion: 'v1', time: '2025-05-05T05:05:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:b': {} } } },
    { manager: 'ci', operation: 'Apply', apiVersion: 'v1', time: NOW, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:team': {} } } } },
  ];
  (live.metadata as unknown as { labels: Record<string, string> }).labels = { team: 'x' };
  const err = conflictOf(() => apply(live, cm({ a: '2', b: '2' }, { metadata: { name: 'c', labels: { team: 'y' } } }), 'me'));
  assert.equal(err.message, [
    'Apply failed with 3 conflicts: conflicts with "ci":',
    '- .data.a',
    '- .metadata.labels.team',
    'conflicts with "kubectl-edit" using v1 at 2025-05-05T05:05:05Z:',
    '- .data.b',
  ].join('\n'));
  assert.equal(err.details?.causes?.length, 3);
});

const deploy = (containers: Record<string, unknown>[]): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
  spec: { template: { spec: { containers } } },
}) as unknown as KubeObject;

test('keyed lists are owned item by item: k:{"name":…} in FieldsV1, conflicts named like upstream', () => {
  const live = apply(deploy([]), deploy([{ name: 'c', image: 'nginx:1', args: ['-v'] }]), 'a');
  assert.deepEqual(managers(live), ['a:' + JSON.stringify({ 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {} } } } } } })]);
  assert.doesNotThrow(() => apply(live, deploy([{ name: 'c', image: 'nginx:1' }]), 'b'));
  assert.equal(conflictOf(() => apply(live, deploy([{ name: 'c', image: 'nginx:2' }]), 'b')).message,
    'Apply failed with 1 conflict: conflict with "a": .spec.template.spec.containers[name="c"].image');
  // Lists without a merge key stay atomic.
  assert.equal(conflictOf(() => apply(live, deploy([{ name: 'c', args: ['-q'] }]), 'b')).message,
    'Apply failed with 1 conflict: conflict with "a": .spec.template.spec.containers[name="c"].args');
});

test('two managers keep their own list items; an item its only manager drops is removed', () => {
  let live = apply(deploy([]), deploy([{ name: 'app', image: 'app:1' }]), 'a');
  live = apply(live, deploy([{ name: 'log', image: 'log:1' }]), 'b');
  // Item order follows the strategic merge (applied items first); ownership is what matters here.
  const names = (o: KubeObject) => ((o['spec'] as { template: { spec: { containers: { name: string; image?: string }[] } } }).template.spec.containers)
    .slice().sort((x, y) => x.name.localeCompare(y.name));
  assert.deepEqual(names(live), [{ name: 'app', image: 'app:1' }, { name: 'log', image: 'log:1' }]);
  live = apply(live, deploy([{ name: 'app', image: 'app:2' }]), 'a');
  assert.deepEqual(names(live), [{ name: 'app', image: 'app:2' }, { name: 'log', image: 'log:1' }]);
  live = apply(live, deploy([{ name: 'app2', image: 'app:2' }]), 'a');
  assert.deepEqual(names(live), [{ name: 'app2', image: 'app:2' }, { name: 'log', image: 'log:1' }]);
  live = apply(live, deploy([{ name: 'log' }]), 'b'); // b drops the image it set: nobody owns it
  assert.deepEqual(names(live), [{ name: 'app2', image: 'app:2' }, { name: 'log' }]);
});

test('set-like lists (finalizers) are owned value by value', () => {
  const withFinalizers = (f: string[]) => cm({}, { metadata: { name: 'c', finalizers: f } });
  let live = apply(bare(), withFinalizers(['x/a']), 'a');
  live = apply(live, withFinalizers(['x/b']), 'b');
  assert.deepEqual([...live.metadata.finalizers!].sort(), ['x/a', 'x/b']);
  assert.deepEqual(managers(live)[1], 'b:{"f:data":{},"f:metadata":{"f:finalizers":{"v:\\"x/b\\"":{}}}}');
  live = apply(live, withFinalizers([]), 'a');
  assert.deepEqual(live.metadata.finalizers, ['x/b']);
});

test('an empty map applied over fields others own changes nothing and does not conflict', () => {
  const live = apply(bare(), cm({ a: '1' }), 'a');
  const out = apply(live, cm({}), 'b');
  assert.deepEqual(out['data'], { a: '1' });
});

test('an update takes the fields it changed from Apply managers; the next apply conflicts with it', () => {
  const live = apply(bare(), cm({ a: '1', b: '1' }), 'ci');
  const edited = structuredClone(live);
  (edited['data'] as Record<string, string>)['a'] = '2';
  (edited['data'] as Record<string, string>)['c'] = '3';
  delete (edited['data'] as Record<string, string>)['b'];
  const owners = recordUpdate(live, edited, 'kubectl-edit', 'v1', '2026-02-02T00:00:00Z');
  // ci lost a (changed) and b (removed): left with nothing, it is dropped.
  assert.deepEqual(owners?.map((m) => `${m.manager}/${m.operation}:${JSON.stringify(m.fieldsV1)}`), [
    'kubectl-edit/Update:{"f:data":{"f:a":{},"f:c":{}}}',
  ]);
  (edited.metadata as unknown as { managedFields: unknown }).managedFields = owners;
  assert.equal(conflictOf(() => apply(edited, cm({ a: '1', b: '1' }), 'ci')).message,
    'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1 at 2026-02-02T00:00:00Z: .data.a');
  const forced = apply(edited, cm({ a: '1', b: '1' }), 'ci', true);
  assert.deepEqual(forced['data'], { a: '1', b: '1', c: '3' });
  assert.deepEqual(managers(forced), ['kubectl-edit:{"f:data":{"f:c":{}}}', 'ci:{"f:data":{"f:a":{},"f:b":{}}}']);
});

test('updates of objects never applied, and no-op updates, record nothing', () => {
  assert.equal(recordUpdate(cm({ a: '1' }), cm({ a: '2' }), 'm', 'v1', NOW), undefined);
  const live = apply(bare(), cm({ a: '1' }), 'ci');
  assert.equal(recordUpdate(live, structuredClone(live), 'm', 'v1', NOW), undefined);
});

test('patch options: apply needs a fieldManager, force is for apply only (422 like upstream)', () => {
  assert.doesNotThrow(() => validatePatchOptions({ apply: true, fieldManager: 'kubectl', force: 'true' }));
  assert.doesNotThrow(() => validatePatchOptions({ apply: false, fieldManager: undefined, force: undefined }));
  const missing = conflictOf(() => validatePatchOptions({ apply: true, fieldManager: undefined, force: undefined }));
  assert.equal(missing.code, 422);
  assert.equal(missing.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  assert.equal(conflictOf(() => validatePatchOptions({ apply: false, fieldManager: 'm', force: 'false' })).message,
    'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
});

test('the first apply to an object created otherwise conflicts with "before-first-apply" where it changes a value', () => {
  const created = cm({ a: '1', b: '1' });
  assert.equal(conflictOf(() => apply(created, cm({ a: '2' }), 'ci')).message,
    'Apply failed with 1 conflict: conflict with "before-first-apply" using v1 at 2026-01-01T00:00:00Z: .data.a');
  const shared = apply(created, cm({ a: '1', c: '3' }), 'ci');
  assert.deepEqual(managers(shared), ['before-first-apply:{"f:data":{"f:a":{},"f:b":{}}}', 'ci:{"f:data":{"f:a":{},"f:c":{}}}']);
  const forced = apply(created, cm({ a: '2' }), 'ci', true);
  assert.deepEqual(forced['data'], { a: '2', b: '1' });
  assert.deepEqual(managers(forced), ['before-first-apply:{"f:data":{"f:b":{}}}', 'ci:{"f:data":{"f:a":{}}}']);
});
