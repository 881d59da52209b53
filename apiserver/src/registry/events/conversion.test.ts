import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import { coreToEventsV1, eventsV1ToCore } from './conversion.js';

const core = {
  apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'default', resourceVersion: '5' },
  involvedObject: { kind: 'Pod', name: 'p' }, related: { kind: 'Node', name: 'n' }, reason: 'R', message: 'M', type: 'Warning',
  source: { component: 'kubelet', host: 'h' }, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:00:01Z', count: 2,
  eventTime: '2026-01-01T00:00:00.000001Z', series: { count: 4, lastObservedTime: '2026-01-01T00:00:02.000000Z' },
  action: 'A', reportingComponent: 'c', reportingInstance: 'i',
} as unknown as KubeObject;

test('core → events.k8s.io/v1 renames as upstream and back again is the identity', () => {
  const v1 = coreToEventsV1(core) as unknown as Record<string, unknown>;
  assert.deepEqual(v1, {
    kind: 'Event', apiVersion: 'events.k8s.io/v1', metadata: core.metadata,
    eventTime: '2026-01-01T00:00:00.000001Z', series: { count: 4, lastObservedTime: '2026-01-01T00:00:02.000000Z' },
    related: { kind: 'Node', name: 'n' }, action: 'A', reason: 'R', reportingInstance: 'i', type: 'Warning',
    regarding: { kind: 'Pod', name: 'p' }, note: 'M', reportingController: 'c', deprecatedSource: { component: 'kubelet', host: 'h' },
    deprecatedFirstTimestamp: '2026-01-01T00:00:00Z', deprecatedLastTimestamp: '2026-01-01T00:00:01Z', deprecatedCount: 2,
  });
  const back = eventsV1ToCore(v1 as unknown as KubeObject) as unknown as Record<string, unknown>;
  const { apiVersion: _a, kind: _k, ...rest } = core as unknown as Record<string, unknown>;
  assert.deepEqual({ ...back, apiVersion: 'v1', kind: 'Event' }, { apiVersion: 'v1', kind: 'Event', ...rest });
});

test('empty structs and zero times as Go writes them', () => {
  const v1 = coreToEventsV1({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' } } as unknown as KubeObject) as unknown as Record<string, unknown>;
  assert.deepEqual(v1['regarding'], {});
  assert.deepEqual(v1['deprecatedSource'], {});
  assert.equal(v1['eventTime'], null);
  const c = eventsV1ToCore(v1 as unknown as KubeObject) as unknown as Record<string, unknown>;
  assert.deepEqual(c['involvedObject'], {});
  assert.equal('eventTime' in c, false);
  assert.equal('firstTimestamp' in c, false);
});
