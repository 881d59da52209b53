/**
 * Label selectors for plugins: @mk8s/api's compiled selectors (metav1.LabelSelectorAsSelector
 * semantics: undefined matches nothing, {} matches everything), narrowed to what plugins use.
 */
import { labelSelectorFromObject as parseSelector, labelSelectorFromSet, nothing, type LabelSelector } from '@mk8s/api';

export type Labels = Readonly<Record<string, string>>;

/** A compiled selector. */
export interface Selector {
  matches(labels: Labels | undefined): boolean;
  /** True if it matches every set of labels. */
  readonly empty: boolean;
}

/**
 * Compiles a metav1.LabelSelector. The apiserver validated it already; should an invalid one slip
 * through, it selects nothing rather than failing the whole scheduling cycle.
 */
export function labelSelectorFromObject(sel: LabelSelector | undefined | null): Selector {
  if (!sel) return compile(sel);
  // Every pod the informer delivers has its terms compiled; pods of one workload share selectors,
  // and a compiled selector is immutable, so compile each distinct one once.
  const key = JSON.stringify(sel);
  let c = compiled.get(key);
  if (!c) {
    c = compile(sel);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(key, c);
  }
  return c;
}
const MAX_COMPILED = 4096;
const compiled = new Map<string, Selector>();
function compile(sel: LabelSelector | undefined | null): Selector {
  try { return parseSelector(sel); } catch { return nothing(); }
}

/** A selector from a plain map (service selectors, nodeSelector): every pair must match; {} matches all. */
export const selectorFromSet = (set: Labels | undefined): Selector => labelSelectorFromSet(set);
