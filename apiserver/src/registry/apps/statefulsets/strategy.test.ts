import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import { FeatureGate } from '@mk8s/component-base';
import { dropStatefulSetDisabledFields } from './strategy.js';

// Upstream dropStatefulSetDisabledFields for MaxUnavailableStatefulSet (alpha, off in 1.32).
const sts = (rollingUpdate?: object): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
  spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate', ...(rollingUpdate ? { rollingUpdate } : {}) } },
}) as KubeObject;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const ru = (o: KubeObject) => (o as any).spec.updateStrategy.rollingUpdate;

for (const tc of [
  { name: 'gate off, create: dropped', gate: '', prev: undefined, next: { partition: 1, maxUnavailable: 2 }, want: { partition: 1 } },
  { name: 'gate on, create: kept', gate: 'MaxUnavailableStatefulSet=true', prev: undefined, next: { maxUnavailable: '50%' }, want: { maxUnavailable: '50%' } },
  { name: 'gate off, update of a set without it: dropped', gate: '', prev: { partition: 0 }, next: { partition: 0, maxUnavailable: 2 }, want: { partition: 0 } },
  { name: 'gate off, update of a set already using it: kept (and may change)', gate: '', prev: { maxUnavailable: 2 }, next: { maxUnavailable: 3 }, want: { maxUnavailable: 3 } },
  { name: 'gate off, update of a set without rollingUpdate: dropped', gate: '', prev: null, next: { maxUnavailable: 1 }, want: {} },
  { name: 'gate on, update: kept', gate: 'MaxUnavailableStatefulSet=true', prev: { partition: 0 }, next: { maxUnavailable: 1 }, want: { maxUnavailable: 1 } },
  { name: 'gate off, no rollingUpdate at all: untouched', gate: '', prev: undefined, next: undefined, want: undefined },
]) {
  test(`dropStatefulSetDisabledFields: ${tc.name}`, () => {
    const next = sts(tc.next);
    const prev = tc.prev === undefined ? undefined : sts(tc.prev ?? undefined);
    dropStatefulSetDisabledFields(next, prev, FeatureGate.with(tc.gate));
    assert.deepEqual(ru(next), tc.want);
  });
}
