import { AdaptiveTeachingRewardConfig, InvalidInputError, toInvalidInputError } from "@arc/core";
import { z } from "zod";
import { LEARNING_RATE_DECAY, readRecipeYaml } from "../recipe/index.ts";
import { STRONG_STUDENT_TEACHING } from "./toolcall-teaching.ts";

/**
 * A teacher-training recipe (`recipes/teacher-sft.yaml`, `recipes/teacher-grpo.yaml`): SFT warm-up
 * on generated teaching examples, or GRPO with the adaptive teaching reward against a frozen student.
 */
export const TeacherRecipe = z
  .object({
    name: z.string().default("teacher").describe("A short name for logs."),
    stage: z
      .enum(["sft", "grpo"])
      .describe("sft: imitate generated teaching examples; grpo: the adaptive teaching reward."),
    teacher: z
      .object({
        path: z
          .string()
          .min(1)
          .optional()
          .describe("HF checkpoint to start from; absent starts fresh weights of `size`."),
        size: z
          .enum(["tiny", "small", "base"])
          .default("small")
          .describe("Size of fresh weights (ignored with `path`)."),
        seed: z.number().int().default(1).describe("Seed of fresh weights."),
      })
      .strict()
      .default({})
      .describe("The teacher to train."),
    student: z
      .object({
        path: z
          .string()
          .min(1)
          .default("models/toolcall-base")
          .describe("HF checkpoint of the frozen student (it is never trained here)."),
      })
      .strict()
      .default({})
      .describe("The student the teacher learns to help."),
    data: z
      .object({
        env: z
          .literal("toolcall")
          .default("toolcall")
          .describe("Task family (teaching labels exist for toolcall)."),
        split: z
          .enum(["train", "eval", "production"])
          .default("production")
          .describe("Split of the tasks the student is probed and taught on."),
        count: z.number().int().positive().default(512).describe("Tasks in the pool."),
        seed: z.number().int().default(1).describe("Seed of the pool and of the data order."),
        sampledProbes: z
          .number()
          .int()
          .nonnegative()
          .default(1)
          .describe("SFT: sampled student probes per task besides the greedy one."),
        syntheticShare: z
          .number()
          .min(0)
          .max(1)
          .default(0.5)
          .describe(
            "SFT: share of tasks that also get a synthetic probe (keeps both diagnoses represented).",
          ),
      })
      .strict()
      .default({})
      .describe("Tasks to teach on."),
    teaching: z
      .object({
        maxProbeTokens: z
          .number()
          .int()
          .positive()
          .default(50)
          .describe("Probe budget in the student's tokens (bytes for the embedded models)."),
        maxSolutionTokens: z
          .number()
          .int()
          .positive()
          .default(128)
          .describe("Budget of each student solution."),
        strongStudentTeaching: z
          .enum(STRONG_STUDENT_TEACHING)
          .default("none")
          .describe(
            "SFT labels: what a student whose probe opens the right call is told: nothing, the request's conversions, or those of the kinds of request measured to gain from them with the frozen student ('measured').",
          ),
      })
      .strict()
      .default({})
      .describe("Protocol settings; the prompts are the toolcall teaching templates."),
    trainer: z
      .object({
        steps: z.number().int().positive().default(200).describe("Optimizer steps."),
        promptsPerStep: z
          .number()
          .int()
          .positive()
          .default(16)
          .describe("SFT: examples; GRPO: tasks per step."),
        samplesPerPrompt: z.number().int().min(2).default(4).describe("GRPO: teacher samples per task (G)."),
        learningRate: z.number().positive().default(1e-3).describe("AdamW peak learning rate."),
        warmupSteps: z.number().int().nonnegative().default(0).describe("Linear warm-up steps."),
        ...LEARNING_RATE_DECAY,
        maxGradNorm: z.number().nonnegative().default(1).describe("Global gradient-norm clip (0 disables)."),
        trainThreads: z
          .number()
          .int()
          .positive()
          .default(1)
          .describe("Threads each step's rows are split between (data-parallel, gradients summed)."),
        temperature: z.number().positive().default(1).describe("GRPO: teacher sampling temperature."),
        maxTokens: z.number().int().positive().default(200).describe("GRPO: budget of each teacher output."),
        clipEpsilon: z.number().positive().default(0.2).describe("GRPO: PPO clip range."),
        klCoef: z.number().nonnegative().default(0).describe("GRPO: weight of KL(policy || reference)."),
        normalization: z.enum(["grpo", "dr-grpo"]).default("grpo").describe("GRPO: advantage normalization."),
        seed: z.number().int().default(1).describe("Seed of sampling."),
        evalEvery: z.number().int().positive().default(50).describe("Log held-out figures every N steps."),
        reward: z
          .object({
            adaptiveTeaching: AdaptiveTeachingRewardConfig.default({}).describe(
              "The adaptive teaching reward (form, degradation penalty/multiplier, efficiency weight).",
            ),
            studentScore: z
              .enum(["verdict", "reference-likelihood"])
              .default("verdict")
              .describe(
                "What the reward compares with and without the teaching: the greedy student's verdict (0 or 1), or its teacher-forced probability of the reference answer (dense; needs form 'delta').",
              ),
          })
          .strict()
          .default({})
          .describe("GRPO: what a teaching earns."),
      })
      .strict()
      .default({})
      .describe("Optimizer and schedule."),
    out: z.string().min(1).describe("Directory the trained teacher is written to (HF layout)."),
  })
  .strict()
  .superRefine((recipe, context) => {
    const { reward } = recipe.trainer;
    if (reward.studentScore === "reference-likelihood" && reward.adaptiveTeaching.form !== "delta")
      context.addIssue({
        code: "custom",
        path: ["trainer", "reward", "adaptiveTeaching", "form"],
        message: `studentScore 'reference-likelihood' needs form 'delta' (a score in [0, 1]), got '${reward.adaptiveTeaching.form}'`,
      });
  });
/** A validated teacher recipe, defaults filled in. */
export type TeacherRecipe = z.infer<typeof TeacherRecipe>;

/** Reads a teacher recipe, applies `key=value` overrides and validates it; errors name the key. */
export async function loadTeacherRecipe(
  path: string,
  overrides: readonly string[] = [],
): Promise<TeacherRecipe> {
  const parsed = TeacherRecipe.safeParse(await readRecipeYaml(path, overrides));
  if (!parsed.success) {
    const error = toInvalidInputError(parsed.error);
    throw new InvalidInputError(`${path}: ${error.message}`, { field: error.field });
  }
  return parsed.data;
}
