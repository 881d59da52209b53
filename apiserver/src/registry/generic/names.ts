import { randomInt } from 'node:crypto';

/** Upstream's alphabet for generated names: no vowels (no words) and no look-alikes (0/o, 1/l). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_NAME_LENGTH = 63;
const RANDOM_LENGTH = 5;

/** generateName appends 5 random characters to base, truncating base so the name stays ≤ 63 chars. */
export function generateName(base: string): string {
  const prefix = base.length > MAX_NAME_LENGTH - RANDOM_LENGTH ? base.slice(0, MAX_NAME_LENGTH - RANDOM_LENGTH) : base;
  let suffix = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) suffix += ALPHANUMS[randomInt(ALPHANUMS.length)];
  return prefix + suffix;
}

let lastSecond = NaN;
let lastFormatted = '';

/** RFC 3339 with second precision, as metav1.Time serializes (the last second's string is reused). */
export function formatTime(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s !== lastSecond) {
    lastFormatted = new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    lastSecond = s;
  }
  return lastFormatted;
}
