import { MAX_NODE_SCORE, type NodeScore } from '../../framework/interfaces.js';

/**
 * Scales scores so the highest becomes maxPriority; reverse flips them (helper.DefaultNormalizeScore).
 * All-zero scores stay 0 (or become maxPriority when reversed).
 */
export function defaultNormalizeScore(scores: NodeScore[], reverse: boolean, maxPriority = MAX_NODE_SCORE): void {
  let max = 0;
  for (const s of scores) if (s.score > max) max = s.score;
  if (max === 0) {
    if (reverse) for (const s of scores) s.score = maxPriority;
    return;
  }
  for (const s of scores) {
    let v = Math.trunc((maxPriority * s.score) / max);
    if (reverse) v = maxPriority - v;
    s.score = v;
  }
}
