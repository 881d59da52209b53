/**
 * Feature gates (upstream k8s.io/component-base/featuregate): named switches with a default per
 * release stage, set with `--feature-gates=A=true,B=false` on each binary. One table of known
 * features for every component, as upstream's pkg/features; a component reads the shared
 * defaultFeatureGate (set from its flag in main) or is handed its own FeatureGate in tests.
 */

export type PreRelease = 'Alpha' | 'Beta' | 'GA' | 'Deprecated';
export interface FeatureSpec { readonly default: boolean; readonly preRelease: PreRelease; readonly lockToDefault?: boolean }

/** The features mk8s knows, with Kubernetes 1.32's defaults. */
export const KNOWN_FEATURES = {
  /** StatefulSet spec.updateStrategy.rollingUpdate.maxUnavailable (KEP-961). */
  MaxUnavailableStatefulSet: { default: false, preRelease: 'Alpha' },
} as const satisfies Record<string, FeatureSpec>;

export type Feature = keyof typeof KNOWN_FEATURES;

/** parseFeatureGates parses `A=true,B=false` (upstream's mapStringBool). Throws on malformed pairs. */
export function parseFeatureGates(value: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const raw of value.split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq < 0) throw new Error(`missing bool value for ${pair}`);
    const k = pair.slice(0, eq).trim(), v = pair.slice(eq + 1).trim().toLowerCase();
    if (!['true', 'false', '1', '0', 't', 'f'].includes(v)) throw new Error(`invalid value of ${k}=${pair.slice(eq + 1)}, err: strconv.ParseBool: parsing "${pair.slice(eq + 1)}": invalid syntax`);
    out.set(k, v === 'true' || v === '1' || v === 't');
  }
  return out;
}

export class FeatureGate {
  private readonly overrides = new Map<string, boolean>();
  constructor(private readonly known: Readonly<Record<string, FeatureSpec>> = KNOWN_FEATURES) {}

  /** Whether f is on: its override, else its default. */
  enabled(f: Feature): boolean {
    const spec = this.known[f];
    if (!spec) throw new Error(`feature ${f} is not registered in FeatureGate`);
    return this.overrides.get(f) ?? spec.default;
  }

  /** Applies a `--feature-gates` value. Unknown features and changes of locked ones are errors (nothing is applied). */
  set(value: string | ReadonlyMap<string, boolean>): void {
    const m = typeof value === 'string' ? parseFeatureGates(value) : value;
    for (const [k, v] of m) {
      const spec = this.known[k];
      if (!spec) throw new Error(`unrecognized feature gate: ${k}`);
      if (spec.lockToDefault && v !== spec.default) throw new Error(`cannot set feature gate ${k} to ${String(v)}, feature is locked to ${String(spec.default)}`);
    }
    for (const [k, v] of m) this.overrides.set(k, v);
  }

  /** A gate with the given features set on top of the defaults (tests and embedded components). */
  static with(value: string | ReadonlyMap<string, boolean> = ''): FeatureGate {
    const g = new FeatureGate();
    g.set(value);
    return g;
  }
}

/** The process-wide gate (upstream utilfeature.DefaultFeatureGate); main sets it from --feature-gates. */
export const defaultFeatureGate = new FeatureGate();

/**
 * Applies a `--feature-gates` flag value to gate at start: undefined when it took, else the one-line
 * error upstream's binaries print (pflag: `invalid argument "<v>" for "--feature-gates" flag: <why>`)
 * before exiting, instead of an uncaught exception's stack.
 */
export function setFeatureGatesFlag(gate: FeatureGate, value: string): string | undefined {
  try {
    gate.set(value);
    return undefined;
  } catch (err) {
    return `invalid argument "${value}" for "--feature-gates" flag: ${(err as Error).message}`;
  }
}
