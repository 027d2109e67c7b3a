import { z } from "zod";

/** How a canary ramps and when the live evidence is enough to move it. */
export const CanaryPolicy = z
  .object({
    ramp: z
      .array(z.number().gt(0).max(1))
      .min(1)
      .default([0.1, 0.5, 1])
      .refine((r) => r.every((x, i) => i === 0 || x > r[i - 1]) && r[r.length - 1] === 1, {
        message: "must rise strictly and end at 1 (the last step is the promotion)",
      })
      .describe("traffic shares of the canary, stage by stage; reaching 1 promotes it"),
    minSamplesPerStage: z
      .number()
      .int()
      .min(1)
      .default(30)
      .describe("judged canary requests a stage needs before it may advance or roll back"),
    maxSamplesPerStage: z
      .number()
      .int()
      .min(1)
      .default(200)
      .describe(
        "judged canary requests after which a stage that the sequential test has not decided ends by the truncation rule",
      ),
    maxStageMinutes: z
      .number()
      .gt(0)
      .default(24 * 60)
      .describe("minutes after which a stage ends by the truncation rule, however few requests it gathered"),
    minControlSamples: z
      .number()
      .int()
      .min(1)
      .default(20)
      .describe("judged control requests needed before the control's failure rate is trusted"),
    minDetectableIncrease: z
      .number()
      .gt(0)
      .lt(1)
      .default(0.1)
      .describe("absolute failure-rate increase the sequential test is built to catch (its H1)"),
    alpha: z
      .number()
      .gt(0)
      .lt(0.5)
      .default(0.05)
      .describe("chance of rolling back a canary that is not worse"),
    beta: z
      .number()
      .gt(0)
      .lt(0.5)
      .default(0.1)
      .describe("chance of advancing a canary that is worse by the increase"),
    autoStart: z
      .boolean()
      .default(true)
      .describe("start a canary by itself for a validated (or approved) model"),
  })
  .strict()
  .refine((p) => p.maxSamplesPerStage >= p.minSamplesPerStage, {
    message: "maxSamplesPerStage must be at least minSamplesPerStage",
    path: ["maxSamplesPerStage"],
  });
export type CanaryPolicy = z.infer<typeof CanaryPolicy>;
export type CanaryPolicyInput = z.input<typeof CanaryPolicy>;
