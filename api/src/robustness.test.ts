// Property tests: the pure entry points the apiserver calls on untrusted request bodies never
// throw anything but ApiError, whatever JSON they are given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RESOURCES } from './scheme.js';
import { ApiError } from './errors.js';
import { applyDefaults } from './defaults/defaults.js';
import { validateObject } from './validation/index.js';
import { applyStrategicMergePatch } from './patch/strategic-merge-patch.js';
import { applyMergePatch } from './patch/merge-patch.js';
import { applyJsonPatch } from './patch/json-patch.js';
import { parseLabelSelector } from './selectors/labels.js';
import { parseFieldSelectorFor, fieldsOf } from './selectors/fields.js';

const keys = fc.constantFrom('metadata', 'spec', 'status', 'containers', 'name', 'labels', 'ports', 'env', 'template', 'selector',
  'matchLabels', 'resources', 'limits', 'requests', 'cpu', 'image', 'volumes', 'type', 'data', 'replicas', '$patch', '$retainKeys',
  '$setElementOrder/containers', 'finalizers', 'tolerations', 'strategy', 'rollingUpdate', 'clusterIP', 'podCIDR', 'addresses');
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 5 }), tie('arr'), tie('obj')),
  arr: fc.array(tie('value'), { maxLength: 3 }),
  obj: fc.dictionary(keys, tie('value'), { maxKeys: 4 }),
})).value;
const objectish = fc.record({ metadata: fc.oneof(json, fc.record({ name: fc.string({ maxLength: 4 }), labels: json })), spec: json, status: json });
const onlyApiErrors = (fn: () => unknown) => {
  try { fn(); } catch (e) { if (!(e instanceof ApiError)) throw e; }
};

test('applyDefaults + validateObject never throw', () => {
  fc.assert(fc.property(fc.constantFrom(...RESOURCES), objectish, objectish, (r, obj, old) => {
    const d = applyDefaults(r, obj);
    assert.ok(Array.isArray(validateObject(r, d)));
    assert.ok(Array.isArray(validateObject(r, d, applyDefaults(r, old))));
  }), { numRuns: 400, seed: 20261130 });
});

test('patches throw only ApiError', () => {
  fc.assert(fc.property(fc.constantFrom(...RESOURCES), objectish, json, (r, obj, patch) => {
    onlyApiErrors(() => applyStrategicMergePatch(obj, patch, r));
    onlyApiErrors(() => applyMergePatch(obj, patch));
    onlyApiErrors(() => applyJsonPatch(obj, patch));
  }), { numRuns: 400, seed: 20261130 });
});

test('selector parsers throw only ApiError', () => {
  fc.assert(fc.property(fc.constantFrom(...RESOURCES), fc.string({ maxLength: 20 }), objectish, (r, s, obj) => {
    onlyApiErrors(() => parseLabelSelector(s).matches(obj.metadata as Record<string, string>));
    onlyApiErrors(() => parseFieldSelectorFor(r, s).matches(fieldsOf(r, obj)));
  }), { numRuns: 400, seed: 20261130 });
});
