import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import { encode } from './memory-storage.js';
import { splitAtMetadata, withResourceVersion } from './encoded-json.js';

const cases: Record<string, unknown>[] = [
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n', labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
  { metadata: { name: 'first', annotations: { 'x"y': 'q\u2028\n' } }, kind: 'ConfigMap', data: { '1': 'one', b: undefined }, apiVersion: 'v1' },
  { apiVersion: 'v1', kind: 'Namespace', metadata: {} },
  { apiVersion: 'v1', kind: 'Secret', skip: undefined, metadata: { name: 's', generateName: undefined }, type: 'Opaque', '2': 2 },
];

test('the split stored JSON is what encode writes, and adding resourceVersion gives the JSON of the returned object', () => {
  for (const obj of cases) {
    const split = splitAtMetadata(obj as unknown as KubeObject)!;
    assert.ok(split);
    assert.equal(split.before + split.meta + split.after, encode(obj as unknown as KubeObject));
    const returned = { ...obj, metadata: { ...(obj['metadata'] as object), resourceVersion: '42' } };
    assert.equal(split.before + withResourceVersion(split.meta, '42') + split.after, JSON.stringify(returned));
  }
});

test('objects whose metadata carries a resourceVersion key, or none at all, are not split', () => {
  assert.equal(splitAtMetadata({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', resourceVersion: undefined } } as unknown as KubeObject), undefined);
  assert.equal(splitAtMetadata({ apiVersion: 'v1', kind: 'Pod' } as unknown as KubeObject), undefined);
});
