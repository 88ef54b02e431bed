import type { CaptionRunAlert } from '../../../operator/api/index.js';
import type { Detection } from '../../lib/inference/index.js';

/** A rule that matched a chunk, and why. */
export interface RuleMatch {
  rule: CaptionRunAlert;
  /** "caption contains \"smoke\"" or "detected person (0.91)". */
  why: string;
}

/**
 * The rules a chunk matches: a rule with `captionContains` matches when the caption holds the text (any case); one
 * with `label` when a detection has that label (any case, the best score named). A rule with both matches on either.
 * Each rule matches at most once per chunk.
 */
export function matchRules(rules: readonly CaptionRunAlert[], caption: string, detections: Detection[]): RuleMatch[] {
  const text = caption.toLowerCase();
  const matches: RuleMatch[] = [];
  for (const rule of rules) {
    if (rule.captionContains && text.includes(rule.captionContains.toLowerCase())) {
      matches.push({ rule, why: `caption contains "${rule.captionContains}"` });
      continue;
    }
    if (rule.label) {
      const wanted = rule.label.toLowerCase();
      const best = detections.filter((d) => d.label.toLowerCase() === wanted).sort((a, b) => b.score - a.score)[0];
      if (best) matches.push({ rule, why: `detected ${best.label} (${best.score.toFixed(2)})` });
    }
  }
  return matches;
}
