import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { validateEventsV1Create } from './events-v1.js';

const ok = {
  eventTime: '2026-01-01T00:00:00.000000Z', type: 'Normal', reportingController: 'example.com/ctl', reportingInstance: 'ctl-1',
  action: 'Scale', reason: 'Scaled', note: 'n', regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
};

describe('validateEventsV1Create (upstream ValidateEventCreate for events.k8s.io/v1)', () => {
  const cases: { name: string; patch: Record<string, unknown>; want: string[] }[] = [
    { name: 'a valid event', patch: {}, want: [] },
    { name: 'missing eventTime', patch: { eventTime: undefined }, want: ['eventTime: Required value'] },
    { name: 'bad type', patch: { type: 'Oops' }, want: ['type: Invalid value: "": has invalid value: Oops'] },
    { name: 'reportingController not a qualified name', patch: { reportingController: 'my controller' }, want: ['reportingController: Invalid value: "my controller": '] },
    { name: 'reason too long', patch: { reason: 'r'.repeat(129) }, want: ['reason: Invalid value: "": can have at most 128 characters'] },
    { name: 'note over 1024 bytes is reported on message', patch: { note: 'x'.repeat(1025) }, want: ['message: Invalid value: "": can have at most 1024 characters'] },
    { name: 'series count below 2', patch: { series: { count: 1, lastObservedTime: '2026-01-01T00:00:01.000000Z' } }, want: ['series.count: Invalid value: "": should be at least 2'] },
    { name: 'series without lastObservedTime', patch: { series: { count: 2 } }, want: ['series.lastObservedTime: Required value'] },
    { name: 'deprecated fields must be unset', patch: { deprecatedCount: 3, deprecatedFirstTimestamp: '2026-01-01T00:00:00Z', deprecatedLastTimestamp: '2026-01-01T00:00:00Z', deprecatedSource: { component: 'kubelet' } },
      want: ['firstTimestamp: Invalid value: "": needs to be unset', 'lastTimestamp: Invalid value: "": needs to be unset', 'count: Invalid value: "": needs to be unset', 'source: Invalid value: "": needs to be unset'] },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const got = validateEventsV1Create({ ...ok, ...tc.patch }).map((e) => e.message);
      assert.equal(got.length, tc.want.length, JSON.stringify(got));
      tc.want.forEach((w, i) => assert.ok(got[i]!.startsWith(w), `${got[i]} starts with ${w}`));
    });
  }
});
