/** IntOrString arithmetic used by rollouts (apimachinery intstr + deployment util ResolveFenceposts). */
type IntOrString = number | string;

/**
 * intstr.GetScaledValueFromIntOrPercent: an int is returned as is; "25%" of total is rounded up or
 * down as asked. A string that is not a percentage is an error.
 */
export function scaledValue(v: IntOrString | undefined, total: number, roundUp: boolean): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  const m = /^(-?\d+)%$/.exec(v);
  if (!m) {
    // upstream accepts a plain integer string too (intstr.FromString("3") is an int in practice).
    if (/^-?\d+$/.test(v)) return Number(v);
    throw new Error(`invalid value for IntOrString: invalid value "${v}": must be an integer or percentage (e.g '5%')`);
  }
  const pct = Number(m[1]);
  // integer arithmetic first (like upstream's float64 but exact for our ranges)
  const x = (pct * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/**
 * ResolveFenceposts: maxSurge rounds up, maxUnavailable rounds down; both zero → unavailable 1,
 * so that a rollout can always make progress.
 */
export function resolveFenceposts(maxSurge: IntOrString | undefined, maxUnavailable: IntOrString | undefined, desired: number): { surge: number; unavailable: number } {
  const surge = scaledValue(maxSurge ?? 0, desired, true);
  let unavailable = scaledValue(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}
