import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staleNodeIndexes } from './cluster.js';

test('staleNodeIndexes: local nodes beyond the count, from supervised specs and node namespaces', () => {
  assert.deepEqual(staleNodeIndexes(['etcd-1', 'apiserver', 'node-1-kubelet', 'node-2-kubelet', 'node-3-kubelet', 'node-3-cri-docker'], ['mk8s-node-1', 'mk8s-node-4'], 2), [3, 4]);
  assert.deepEqual(staleNodeIndexes(['node-1-kubelet', 'node-10-kube-proxy'], [], 9), [10]);
  assert.deepEqual(staleNodeIndexes(['node-1-kubelet'], ['mk8s-node-1', 'other-ns'], 3), []);
});
