/**
 * How GRPO turns a group's rewards into advantages:
 * - `grpo`: (r - mean) / (std + eps), Shao et al. 2024, eq. 3's outcome supervision;
 * - `dr-grpo`: r - mean, Liu et al. 2025 ("Dr. GRPO"), which drops the std division that
 *   over-weights groups of near-equal rewards (pair it with the `dr-grpo` loss aggregation).
 */
export type AdvantageNormalization = "grpo" | "dr-grpo";

/** Numerical floor of the std division. */
const EPS = 1e-6;

/** Group-relative advantages of one prompt's samples, one per reward; all zero when the rewards tie. */
export function groupAdvantages(
  rewards: readonly number[],
  normalization: AdvantageNormalization = "grpo",
): number[] {
  if (rewards.length === 0) return [];
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const centered = rewards.map((r) => r - mean);
  if (normalization === "dr-grpo") return centered;
  const variance = centered.reduce((a, c) => a + c * c, 0) / rewards.length;
  const std = Math.sqrt(variance);
  return centered.map((c) => c / (std + EPS));
}
