/**
 * Key helpers shared by the storage implementations. Keys look like
 * `/registry/<group>/<resource>/<namespace>/<name>`; the core group has no group segment.
 */
import { errors, type ApiError } from '@mk8s/api';

/** Groups that have no dot in their name; every other group segment contains a dot. */
const DOTLESS_GROUPS = new Set(['apps', 'batch', 'policy', 'autoscaling', 'extensions']);

const segmentsOf = (key: string): string[] => key.split('/').filter((s) => s !== '');

const isGroupSegment = (s: string | undefined): boolean => s !== undefined && (s.includes('.') || DOTLESS_GROUPS.has(s));

/**
 * The resource prefix (`/registry/pods/`, `/registry/apps/deployments/`) a key or a narrower
 * prefix belongs to. The watch cache keeps one underlying watch per resource prefix.
 */
export function resourcePrefixOf(keyOrPrefix: string): string {
  const segs = segmentsOf(keyOrPrefix);
  if (segs[0] !== 'registry' || segs.length < 2) return keyOrPrefix.endsWith('/') ? keyOrPrefix : keyOrPrefix + '/';
  const n = isGroupSegment(segs[1]) && segs.length >= 3 ? 3 : 2;
  return '/' + segs.slice(0, n).join('/') + '/';
}

/** The group-resource (`pods`, `deployments.apps`) a key or prefix belongs to: etcd metrics' `type`. */
export function groupResourceOf(keyOrPrefix: string): string {
  const segs = segmentsOf(keyOrPrefix);
  if (segs[0] !== 'registry' || segs.length < 2) return '';
  if (isGroupSegment(segs[1]) && segs.length >= 3) return `${segs[2]}.${segs[1]}`;
  return segs[1]!;
}

/** A generic qualified resource (`pods`, `deployments.apps`) and name for error messages. */
export function describeKey(key: string): { resource: string; name: string } {
  const segs = segmentsOf(key);
  const name = segs[segs.length - 1] ?? key;
  if (segs[0] !== 'registry' || segs.length < 3) return { resource: 'resource', name };
  if (isGroupSegment(segs[1]) && segs.length >= 4) return { resource: `${segs[2]}.${segs[1]}`, name };
  return { resource: segs[1] ?? 'resource', name };
}

export const notFound = (key: string): ApiError => { const d = describeKey(key); return errors.notFound(d.resource, d.name); };
export const alreadyExists = (key: string): ApiError => { const d = describeKey(key); return errors.alreadyExists(d.resource, d.name); };
export const conflict = (key: string, why?: string): ApiError => { const d = describeKey(key); return errors.conflict(d.resource, d.name, why); };

/** Upstream's message for a watch or list from a compacted revision. */
export const tooOldResourceVersion = (rv: string | number, oldest: string | number): ApiError =>
  errors.expired(`too old resource version: ${rv} (${oldest})`);

/** Parses a resourceVersion parameter; BadRequest if it is not a non-negative integer. */
export function parseResourceVersion(rv: string): number {
  if (!/^\d+$/.test(rv)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return Number(rv);
}

/** The first key after every key with this prefix (etcd's range_end for a prefix). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) { end[i]! += 1; return end.subarray(0, i + 1); }
  }
  return Buffer.from([0]);
}
