import { z } from "zod";

/** A tenant's detection settings. Every field has a default, so `{}` is a valid config. */
export const DetectionConfig = z.object({
  disabled: z.array(z.string()).default([]).describe("ids of detectors switched off for this tenant"),
  latencyBudgetMs: z
    .number()
    .positive()
    .default(10_000)
    .describe("a trace (or one LLM step) slower than this fails `latency_over_budget`"),
  loopThreshold: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("the same tool call this many times in one trace is a `tool_loop`"),
  negativeScoreBelow: z
    .number()
    .default(0)
    .describe("feedback with a score below this is negative (the tenant defines its scale)"),
  detectorTimeoutMs: z
    .number()
    .positive()
    .default(30_000)
    .describe("a detector that has not answered a trace within this is recorded `unknown` for it"),
  judgeMinKappa: z
    .number()
    .min(-1)
    .max(1)
    .nullable()
    .default(0.6)
    .describe(
      "the Cohen's kappa a judge's calibration must reach before the judge rewards training runs; null: the tenant trusts its judge uncalibrated",
    ),
  negativeLabels: z
    .array(z.string())
    .default(["thumbs_down", "bad", "wrong", "incorrect", "unhelpful"])
    .describe("feedback labels that count as negative (case-insensitive); a correction always does"),
});
export type DetectionConfig = z.infer<typeof DetectionConfig>;
export type DetectionConfigInput = z.input<typeof DetectionConfig>;
