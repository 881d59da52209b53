/**
 * events.k8s.io/v1 Event ⇄ core/v1 Event (upstream pkg/apis/events/v1/conversion.go through the
 * internal type): both are views of the same stored object (/registry/events). Renamed fields:
 * regarding ⇄ involvedObject, note ⇄ message, reportingController ⇄ reportingComponent,
 * deprecatedSource ⇄ source, deprecatedFirstTimestamp/LastTimestamp/Count ⇄
 * firstTimestamp/lastTimestamp/count; the rest (metadata, eventTime, series, related, action,
 * reason, reportingInstance, type) is the same. Pure; returns new objects.
 */
import type { KubeObject } from '@mk8s/api';

type Obj = Record<string, unknown>;

const EVENTS_V1 = 'events.k8s.io/v1';

/** Copies the keys of `from` named in pairs [fromKey, toKey] into `to` when present. */
function move(from: Obj, to: Obj, pairs: readonly (readonly [string, string])[]): void {
  for (const [a, b] of pairs) if (from[a] !== undefined && from[a] !== null) to[b] = structuredClone(from[a]);
}

const SAME = ['eventTime', 'series', 'related', 'action', 'reason', 'reportingInstance', 'type'] as const;
const RENAMED: readonly (readonly [string, string])[] = [
  ['involvedObject', 'regarding'], ['message', 'note'], ['reportingComponent', 'reportingController'], ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'], ['lastTimestamp', 'deprecatedLastTimestamp'], ['count', 'deprecatedCount'],
];

/** The events.k8s.io/v1 view of a stored core/v1 Event. */
export function coreToEventsV1(core: KubeObject): KubeObject {
  const c = core as unknown as Obj;
  const out: Obj = { kind: 'Event', apiVersion: EVENTS_V1, metadata: structuredClone(c['metadata']) };
  move(c, out, SAME.map((k) => [k, k] as const));
  move(c, out, RENAMED);
  // Go's JSON writes the empty ObjectReference/EventSource structs the conversion produces.
  if (out['regarding'] === undefined) out['regarding'] = {};
  if (out['deprecatedSource'] === undefined) out['deprecatedSource'] = {};
  if (out['eventTime'] === undefined) out['eventTime'] = null;
  if (out['deprecatedFirstTimestamp'] === undefined) out['deprecatedFirstTimestamp'] = null;
  if (out['deprecatedLastTimestamp'] === undefined) out['deprecatedLastTimestamp'] = null;
  return out as unknown as KubeObject;
}

/** The core/v1 Event stored for an events.k8s.io/v1 one. */
export function eventsV1ToCore(v1: KubeObject): KubeObject {
  const e = v1 as unknown as Obj;
  const out: Obj = { kind: 'Event', apiVersion: 'v1', metadata: structuredClone(e['metadata'] ?? {}) };
  move(e, out, SAME.map((k) => [k, k] as const));
  move(e, out, RENAMED.map(([a, b]) => [b, a] as const));
  for (const k of ['eventTime', 'firstTimestamp', 'lastTimestamp']) if (out[k] === null) delete out[k];
  if (out['involvedObject'] === undefined) out['involvedObject'] = {};
  return out as unknown as KubeObject;
}

/**
 * events.k8s.io/v1 field selector names → core ones (upstream AddFieldLabelConversionsForEvent):
 * `regarding.kind` selects on involvedObject.kind, `reportingController` on reportingComponent.
 */
export const EVENTS_V1_FIELD_LABELS: Readonly<Record<string, string>> = {
  'metadata.name': 'metadata.name', 'metadata.namespace': 'metadata.namespace', reason: 'reason', type: 'type',
  'regarding.kind': 'involvedObject.kind', 'regarding.namespace': 'involvedObject.namespace', 'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid', 'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion', 'regarding.fieldPath': 'involvedObject.fieldPath',
  reportingController: 'reportingComponent',
};
