import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatefulSetSpec } from '@mk8s/api';
import { claimName, claimOrdinal, planStatefulSet, type PodObj, type STSObj, type StsRevisions } from './util.js';

// planStatefulSet (upstream updateStatefulSet) for ordinals.start and RollingUpdate maxUnavailable
// (honoured only with the MaxUnavailableStatefulSet gate on, `gate: true`):
// the pure decision, one sync's writes, table-tested without a fixture.

const NOW = Date.parse('2026-01-01T01:00:00Z');
const set = (spec: Partial<StatefulSetSpec>): STSObj => ({
  apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
  spec: {
    replicas: 2, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, podManagementPolicy: 'Parallel',
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }, ...spec,
  },
}) as STSObj;
const revs = (s: STSObj): StsRevisions => ({ current: 'web-old', update: 'web-new', currentSet: s, updateSet: s });
const pod = (ordinal: number, o: { rev?: string; ready?: boolean } = {}): PodObj => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: {
    name: `web-${ordinal}`, namespace: 'default',
    labels: { app: 'web', 'controller-revision-hash': o.rev ?? 'web-old', 'statefulset.kubernetes.io/pod-name': `web-${ordinal}`, 'apps.kubernetes.io/pod-index': String(ordinal) },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'uid-web', controller: true }],
  },
  spec: { hostname: `web-${ordinal}`, subdomain: 'web', containers: [{ name: 'c', image: 'busybox' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
}) as PodObj;
const writes = (s: STSObj, pods: PodObj[], gate = false) => planStatefulSet(s, pods, revs(s), NOW, { maxUnavailable: gate }).actions
  .filter((a) => a.type !== 'relabel')
  .map((a) => (a.type === 'create' ? `create web-${a.ordinal}@${a.revision}` : `delete ${a.pod} (${a.why})`));

const ROLLING = (rollingUpdate: object) => ({ updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate } });

for (const tc of [
  { name: 'ordinals.start 5: the replicas are web-5 and web-6', spec: { ordinals: { start: 5 } }, pods: [], want: ['create web-5@web-new', 'create web-6@web-new'] },
  {
    name: 'ordinals.start 5: a pod below the start is condemned like one above the end',
    spec: { ordinals: { start: 5 } }, pods: [pod(3, { rev: 'web-new' }), pod(5, { rev: 'web-new' }), pod(6, { rev: 'web-new' }), pod(7, { rev: 'web-new' })],
    want: ['delete web-7 (scale-down)', 'delete web-3 (scale-down)'],
  },
  {
    name: 'ordinals.start 5 with partition 1: a missing web-5 comes back at the current revision, web-6 at the update one',
    spec: { ordinals: { start: 5 }, ...ROLLING({ partition: 1 }) }, pods: [], want: ['create web-5@web-old', 'create web-6@web-new'],
  },
  {
    name: 'without maxUnavailable: one pod at a time, highest ordinal first',
    spec: { replicas: 4 }, pods: [0, 1, 2, 3].map((i) => pod(i)), want: ['delete web-3 (update)'],
  },
  {
    name: 'maxUnavailable 2: two old pods go at once, highest ordinals first', gate: true,
    spec: { replicas: 4, ...ROLLING({ maxUnavailable: 2 }) }, pods: [0, 1, 2, 3].map((i) => pod(i)), want: ['delete web-3 (update)', 'delete web-2 (update)'],
  },
  {
    name: 'maxUnavailable 2 with one updated pod not Ready yet: room for one more', gate: true,
    spec: { replicas: 4, ...ROLLING({ maxUnavailable: 2 }) }, pods: [pod(0), pod(1), pod(2), pod(3, { rev: 'web-new', ready: false })], want: ['delete web-2 (update)'],
  },
  {
    name: 'maxUnavailable 50% of 4 with two pods unavailable: nothing more is taken down', gate: true,
    spec: { replicas: 4, ...ROLLING({ maxUnavailable: '50%' }) }, pods: [pod(0), pod(1, { ready: false }), pod(2), pod(3, { rev: 'web-new', ready: false })], want: [],
  },
  {
    name: 'gate off (the default): maxUnavailable 2 is ignored, one pod at a time',
    spec: { replicas: 4, ...ROLLING({ maxUnavailable: 2 }) }, pods: [0, 1, 2, 3].map((i) => pod(i)), want: ['delete web-3 (update)'],
  },
  {
    name: 'gate off: maxUnavailable 2 with one updated pod not Ready yet waits for it',
    spec: { replicas: 4, ...ROLLING({ maxUnavailable: 2 }) }, pods: [pod(0), pod(1), pod(2), pod(3, { rev: 'web-new', ready: false })], want: [],
  },
  {
    name: 'maxUnavailable 3 stops at the partition', gate: true,
    spec: { replicas: 4, ...ROLLING({ maxUnavailable: 3, partition: 2 }) }, pods: [0, 1, 2, 3].map((i) => pod(i)), want: ['delete web-3 (update)', 'delete web-2 (update)'],
  },
]) {
  test(`planStatefulSet: ${tc.name}`, () => {
    assert.deepEqual(writes(set(tc.spec as Partial<StatefulSetSpec>), tc.pods, 'gate' in tc && tc.gate === true), tc.want);
  });
}

test('claimOrdinal is claimName\'s inverse (the claim handler and the claims it makes share one name format)', () => {
  const set = { metadata: { name: 'web', namespace: 'default' } } as unknown as STSObj;
  for (const o of [0, 1, 12]) assert.equal(claimOrdinal('data', set, claimName('data', set, o)), o);
  assert.equal(claimOrdinal('data', set, 'data-web-'), -1);
  assert.equal(claimOrdinal('data', set, 'data-web-01'), -1);
  assert.equal(claimOrdinal('data', set, 'data-web-x'), -1);
  assert.equal(claimOrdinal('data', set, 'data-webby-0'), -1);
  assert.equal(claimOrdinal('logs', set, 'data-web-0'), -1);
});
