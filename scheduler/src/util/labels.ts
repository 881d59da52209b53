/**
 * Label selectors as the scheduler needs them (apimachinery labels.Selector). Local until
 * @mk8s/api exports labelSelectorFromObject; the semantics follow metav1.LabelSelectorAsSelector:
 * an undefined selector matches nothing, an empty one matches everything.
 */
import type { LabelSelector, LabelSelectorRequirement } from '@mk8s/api';

export type Labels = Readonly<Record<string, string>>;

/** A compiled selector. */
export interface Selector {
  matches(labels: Labels | undefined): boolean;
  /** True if it matches every set of labels. */
  readonly empty: boolean;
}

export const EVERYTHING: Selector = { matches: () => true, empty: true };
export const NOTHING: Selector = { matches: () => false, empty: false };

function requirementMatches(r: LabelSelectorRequirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case 'In': return has && (r.values ?? []).includes(v as string);
    case 'NotIn': return !has || !(r.values ?? []).includes(v as string);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    default: throw new Error(`${r.operator} is not a valid label selector operator`);
  }
}

/** Compiles a metav1.LabelSelector. */
export function labelSelectorFromObject(sel: LabelSelector | undefined | null): Selector {
  if (!sel) return NOTHING;
  const ml = Object.entries(sel.matchLabels ?? {});
  const me = sel.matchExpressions ?? [];
  if (ml.length === 0 && me.length === 0) return EVERYTHING;
  return {
    empty: false,
    matches(labels) {
      const l = labels ?? {};
      for (const [k, v] of ml) if (l[k] !== v) return false;
      for (const r of me) if (!requirementMatches(r, l)) return false;
      return true;
    },
  };
}

/** A selector from a plain map (service selectors, nodeSelector): every pair must match; {} matches all. */
export function selectorFromSet(set: Labels | undefined): Selector {
  const entries = Object.entries(set ?? {});
  if (entries.length === 0) return EVERYTHING;
  return { empty: false, matches: (labels) => entries.every(([k, v]) => labels?.[k] === v) };
}
