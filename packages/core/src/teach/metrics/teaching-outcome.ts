import { z } from "zod";

const Score = z.number().min(0, "must be in [0, 1]").max(1, "must be in [0, 1]");
const Tokens = z.number().int("must be an integer").nonnegative("must be >= 0");

/**
 * One teaching interaction as the metrics see it: from an eval run (with a baseline) or from
 * production traffic (usually without one). Metrics treat a list of these as ordered in time.
 */
export const TeachingOutcome = z.object({
  /** The customer it served; metrics group by it. */
  tenantId: z.string().optional(),
  /** The failure pattern it was taught under; metrics and the NDR monitor group by it. */
  patternId: z.string().optional(),
  /** How the probe judged the student; lets reports split strong from weak students. */
  judgement: z.enum(["strong", "weak", "unknown"]).optional(),
  /** Score of the student with teaching, in [0, 1]. */
  taughtScore: Score,
  /** Score of the same student on the same task without teaching; absent when no baseline was run. */
  baselineScore: Score.optional(),
  /** Length of the teaching shown (0 when the teacher gave none). */
  teachingTokens: Tokens,
  /** Length of the student's taught solution. */
  taughtTokens: Tokens.optional(),
  /** Length of the student's baseline solution. */
  baselineTokens: Tokens.optional(),
  /** Whether the taught student finished with a complete answer (closed, non-empty <solution>). */
  completed: z.boolean(),
});
/** A validated teaching outcome. */
export type TeachingOutcome = z.infer<typeof TeachingOutcome>;
