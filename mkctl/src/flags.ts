/** Numeric flags of mkctl's own commands (etcd, chaos), checked before anything is done. Pure. */

/**
 * The value of a flag that takes a non-negative number (seconds, a revision); a one-line error
 * for anything else. Number('2m') is NaN, and a NaN timeout never expires: a restore or a chaos
 * fault would wait forever with the cluster held.
 */
export function nonNegativeNumber(flag: string, value: string, o: { integer?: boolean } = {}): number {
  const n = value.trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(n) || n < 0 || (o.integer && !Number.isInteger(n))) {
    throw new Error(`invalid ${flag} "${value}": ${o.integer ? 'a non-negative integer' : 'a non-negative number'} expected`);
  }
  return n;
}
