import { z } from "zod";
import { InvalidInputError } from "../../errors/index.ts";
import { toInvalidInputError } from "../../trace/index.ts";

/** `trainer.reward.adaptiveTeaching`: how a teacher is rewarded for one teaching interaction. */
export const AdaptiveTeachingRewardConfig = z
  .object({
    form: z
      .enum(["delta", "outcome"])
      .default("delta")
      .describe(
        "'delta': delta*(1 + w*100/(100+teachingTokens)) when delta >= 0, -m*|delta| below; " +
          "'outcome': improve 1+eff, both correct eff, degrade degradationPenalty, both wrong 0.",
      ),
    degradationPenalty: z
      .number()
      .max(0, "must be <= 0")
      .default(-1)
      .describe("Reward of form 'outcome' when teaching turns a correct student wrong."),
    degradationMultiplier: z
      .number()
      .nonnegative("must be >= 0")
      .default(2)
      .describe("m of form 'delta': degradation costs m times what the same improvement earns (asymmetric)."),
    efficiencyWeight: z
      .number()
      .nonnegative("must be >= 0")
      .default(1)
      .describe("w of form 'delta': weight of the bonus 100/(100+teachingTokens) for short teaching."),
    maxProbeTokens: z
      .number()
      .int("must be an integer")
      .positive("must be positive")
      .default(50)
      .describe(
        "Probe budget the teacher is trained under; the trainer passes it to the templates' maxProbeTokens.",
      ),
  })
  .strict();
/** Validated reward config with defaults filled in. */
export type AdaptiveTeachingRewardConfig = z.infer<typeof AdaptiveTeachingRewardConfig>;
/** Reward config as written in a recipe; omitted fields take the defaults. */
export type AdaptiveTeachingRewardConfigInput = z.input<typeof AdaptiveTeachingRewardConfig>;

/** Validates a reward config and fills defaults; throws InvalidInputError naming the bad field. */
export function adaptiveTeachingRewardConfig(
  input: AdaptiveTeachingRewardConfigInput = {},
): AdaptiveTeachingRewardConfig {
  const parsed = AdaptiveTeachingRewardConfig.safeParse(input);
  if (!parsed.success) throw toInvalidInputError(parsed.error, "trainer.reward.adaptiveTeaching");
  return parsed.data;
}

/** One teaching interaction, compared with the same student's unguided baseline. */
export interface TeachingComparison {
  /** Score of the student with teaching, in [0, 1] (1 = correct). */
  taughtScore: number;
  /** Score of the student without teaching, in [0, 1]. */
  baselineScore: number;
  /** Length of the teaching shown to the student (0 for empty teaching). */
  teachingTokens: number;
  /** Length of the student's solution with teaching (form 'outcome' efficiency). */
  taughtTokens: number;
  /** Length of the student's solution without teaching (form 'outcome' efficiency). */
  baselineTokens: number;
}

function check(value: number, field: string, range: "score" | "count"): void {
  const ok = Number.isFinite(value) && value >= 0 && (range === "count" || value <= 1);
  if (!ok)
    throw new InvalidInputError(
      `${field}: expected ${range === "score" ? "a score in [0, 1]" : "a non-negative token count"}, got ${value}`,
      { field },
    );
}

/**
 * Share of the baseline solution length that teaching saved: (baselineLen - taughtLen) / baselineLen
 * when positive, else 0 (also 0 when there is no baseline length to compare with).
 */
export function solutionEfficiency(baselineTokens: number, taughtTokens: number): number {
  if (baselineTokens <= 0) return 0;
  return Math.max(0, (baselineTokens - taughtTokens) / baselineTokens);
}

/**
 * The ATLAS adaptive teaching reward, in either published form (see AdaptiveTeachingRewardConfig.form).
 * Degradation is what the teacher must learn never to cause, so it is punished in both forms.
 * Form 'outcome' is defined on correctness and takes only scores of 0 or 1.
 */
export function adaptiveTeachingReward(
  comparison: TeachingComparison,
  config: AdaptiveTeachingRewardConfigInput = {},
): number {
  const c = adaptiveTeachingRewardConfig(config);
  const { taughtScore, baselineScore, teachingTokens, taughtTokens, baselineTokens } = comparison;
  check(taughtScore, "taughtScore", "score");
  check(baselineScore, "baselineScore", "score");
  check(teachingTokens, "teachingTokens", "count");
  check(taughtTokens, "taughtTokens", "count");
  check(baselineTokens, "baselineTokens", "count");

  if (c.form === "delta") {
    const delta = taughtScore - baselineScore;
    if (delta >= 0) return delta * (1 + (c.efficiencyWeight * 100) / (100 + teachingTokens));
    return -c.degradationMultiplier * Math.abs(delta);
  }

  for (const [field, score] of [
    ["taughtScore", taughtScore],
    ["baselineScore", baselineScore],
  ] as const)
    if (score !== 0 && score !== 1)
      throw new InvalidInputError(`${field}: form 'outcome' needs a score of 0 or 1, got ${score}`, {
        field,
      });
  const eff = solutionEfficiency(baselineTokens, taughtTokens);
  if (taughtScore > baselineScore) return 1 + eff;
  if (taughtScore < baselineScore) return c.degradationPenalty;
  return taughtScore === 1 ? eff : 0;
}
