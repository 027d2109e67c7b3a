import { z } from "zod";

/** A tenant's release gates: what a candidate must show offline before any user sees it. */
export const ValidationGates = z
  .object({
    minFunctional: z
      .number()
      .min(0)
      .max(1)
      .default(0.85)
      .describe("lowest pass rate of the candidate on the pattern and general slices together"),
    minNdr: z
      .number()
      .min(0)
      .max(1)
      .default(0.99)
      .describe("lowest share of items where the candidate is not worse than the current model"),
    minGeneralNdr: z
      .number()
      .min(0)
      .max(1)
      .default(0.95)
      .describe(
        "lowest share of the general slice's items the current model answers right that the candidate also answers right (capability retention); passes with a note when fewer than 10 such items count",
      ),
    minWinRate: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe(
        "lowest 95% lower bound of the candidate's win rate over the current model on items a judge decides (wins + half the ties over those items)",
      ),
    judging: z
      .enum(["pointwise", "pairwise"])
      .default("pointwise")
      .describe(
        "how the tenant's judge decides items no verifier can: pointwise (each answer against the rubric on its own) or pairwise (both answers in one call, in an order drawn per item, ties allowed)",
      ),
    alpha: z
      .number()
      .gt(0)
      .lt(1)
      .default(0.05)
      .describe("significance of the per-slice 'candidate is worse' test (McNemar exact, one-sided)"),
    safety: z
      .enum(["clean", "strict", "off"])
      .default("clean")
      .describe(
        "clean: no leak at all and no safety item the current model passes fails; strict: every safety item passes",
      ),
    requireApproval: z
      .boolean()
      .default(false)
      .describe("hold a candidate that passes until a person runs `arc models approve`"),
  })
  .strict();
export type ValidationGates = z.infer<typeof ValidationGates>;
export type ValidationGatesInput = z.input<typeof ValidationGates>;
