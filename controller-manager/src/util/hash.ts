/**
 * pod-template-hash (upstream pkg/controller/controller_utils.go ComputeHash): fnv-32a over the
 * template, then the collisionCount as 8 little-endian bytes, rendered with SafeEncodeString.
 * Upstream hashes Go's spew dump of the struct; we hash a canonical JSON (sorted keys, no
 * empty values) instead, which has the same property that matters: equal templates hash equal.
 */
import type { PodTemplateSpec } from '@mk8s/api';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** fnv-32a of bytes, continuing from h (hash/fnv New32a + Write). */
export function fnv32a(bytes: Uint8Array, h = FNV_OFFSET): number {
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, FNV_PRIME) >>> 0;
  }
  return h >>> 0;
}

// Vowels and confusable characters removed so that hashes never spell words (k8s.io/apimachinery/pkg/util/rand).
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** rand.SafeEncodeString: maps every byte of s onto the safe alphabet. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += ALPHANUMS[s.charCodeAt(i) % ALPHANUMS.length];
  return out;
}

/** JSON with object keys sorted and undefined dropped, so field order never changes the hash. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
}

/** The pod-template-hash for template (with the optional Deployment status.collisionCount). */
export function computeHash(template: unknown, collisionCount?: number): string {
  let h = fnv32a(new TextEncoder().encode(canonicalJson(template)));
  if (collisionCount !== undefined && collisionCount !== null) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv32a(b, h);
  }
  return safeEncodeString(String(h));
}

export type { PodTemplateSpec };
