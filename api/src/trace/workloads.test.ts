import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from '../types.js';
import { diagnoseDaemonSet, diagnoseStatefulSet } from './workloads.js';

const node = (name: string, taints?: Node['spec'] extends infer S ? S extends { taints?: infer T } ? T : never : never): Node => ({ metadata: { name }, spec: taints ? { taints } : {} });
const pod = (name: string, owner: string, o: { node?: string; ready?: boolean; hash?: string } = {}): Pod => ({
  metadata: { name, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'X', name: 'x', uid: owner, controller: true }], labels: { 'controller-revision-hash': o.hash ?? 'r1' } },
  spec: { containers: [], ...(o.node ? { nodeName: o.node } : {}) },
  status: { phase: o.ready === false ? 'Pending' : 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
});

test('trace daemonset: names the eligible node lacking its pod and why the others have none', () => {
  const ds = { metadata: { name: 'agent', uid: 'ds', generation: 1 }, spec: { selector: {}, template: { spec: { containers: [] } } }, status: { observedGeneration: 1, currentNumberScheduled: 1, desiredNumberScheduled: 2, numberMisscheduled: 0, numberReady: 1 } };
  const links = diagnoseDaemonSet(ds as never, [node('n1'), node('n2'), node('n3', [{ key: 'gpu', effect: 'NoSchedule' }])], [pod('agent-a', 'ds', { node: 'n1' })]);
  assert.deepEqual(links.map((l) => [l.step, l.status]), [['stored', 'ok'], ['node n1', 'ok'], ['node n2', 'broken'], ['node n3', 'info']]);
  assert.match(links[2]!.evidence, /eligible node lacks its daemon pod/);
  assert.match(links[3]!.evidence, /Taint.*untolerated taint \{gpu: \}/);
});

test('trace statefulset: the first ordinal not Ready holds an OrderedReady rollout', () => {
  const sts = { metadata: { name: 'web', uid: 's', generation: 1 }, spec: { replicas: 3, selector: {}, serviceName: 'web', template: {} }, status: { replicas: 2, observedGeneration: 1, updateRevision: 'r1', currentRevision: 'r1' } };
  const links = diagnoseStatefulSet(sts as never, [pod('web-0', 's', { node: 'n1' }), pod('web-1', 's', { node: 'n1', ready: false })]);
  assert.deepEqual(links.map((l) => [l.step, l.status]), [['stored', 'ok'], ['ordinal 0', 'ok'], ['ordinal 1', 'waiting'], ['ordinal 2', 'info']]);
  assert.match(links[2]!.evidence, /this ordinal holds the rollout/);
});
