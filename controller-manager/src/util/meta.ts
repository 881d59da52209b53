/** Small object helpers shared by the controllers. */
import type { KubeObject, Named, ObjectMeta, OwnerReference } from '@mk8s/api';

/** A server-returned object of type T (metadata.name set) that fits the clients' KubeObject bound. */
export type Obj<T extends { metadata?: ObjectMeta }> = Named<T> & KubeObject;

/** A deep, mutable copy of a (possibly cached, readonly) object: the only thing a controller may modify. */
export function clone<T>(obj: T): T {
  return structuredClone(obj);
}

/** metav1.Time as the API prints it: RFC 3339, second precision, UTC. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Parses a metav1.Time; NaN when absent. */
export function parseTime(t: string | undefined): number {
  return t ? Date.parse(t) : Number.NaN;
}

/** The owner reference pointing at uid, if any. */
export function ownerRefByUid(obj: { metadata: ObjectMeta }, uid: string): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.uid === uid);
}

/** Go-style durations: "50s", "1m30s", "300ms", "1h", or a bare number of seconds. Returns ms. */
export function parseDuration(s: string): number {
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * (units[m[2] ?? 's'] ?? 1000);
    pos = re.lastIndex;
  }
  if (pos !== s.length || s.length === 0) throw new Error(`time: invalid duration "${s}"`);
  return total;
}
