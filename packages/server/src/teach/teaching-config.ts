import { NdrMonitorConfig, TeachingTemplates, toInvalidInputError } from "@arc/core";
import { z } from "zod";

/**
 * A tenant's run-time teaching (`PUT /v1/teaching`): its traffic, or only the listed patterns' traffic,
 * is answered by the student under a teacher with the adaptive teaching protocol.
 */
export const TeachingConfig = z
  .object({
    teacher: z
      .string()
      .min(1, "must name a model version")
      .describe("Model version id or name of the teacher in the tenant's registry (embedded or upstream)."),
    mode: z
      .enum(["adaptive", "always", "off"])
      .default("adaptive")
      .describe("adaptive: probe, then teach only as needed; always: full teaching; off: no teaching."),
    patterns: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Only requests of these failure patterns are taught; absent teaches all of the tenant's traffic.",
      ),
    baselineShare: z
      .number()
      .min(0, "must be in [0, 1]")
      .max(1, "must be in [0, 1]")
      .default(0.1)
      .describe("Share of taught requests that also run the student alone, so NDR can be measured live."),
    ndr: z
      .custom<z.input<typeof NdrMonitorConfig>>((value) => NdrMonitorConfig.safeParse(value ?? {}).success, {
        message: "invalid NDR monitor config (gate in (0, 1], minSamples <= window)",
      })
      .default({})
      .describe(
        "When to switch teaching off for a pattern: its NDR gate, samples, window, confidence bound.",
      ),
    templates: z
      .custom<z.input<typeof TeachingTemplates>>(
        (value) => TeachingTemplates.safeParse(value ?? {}).success,
        {
          message: "invalid teaching templates (each needs its placeholders)",
        },
      )
      .default({})
      .describe(
        "Prompt templates of the protocol (probe, teacher, guided student, baseline, maxProbeTokens).",
      ),
    maxTeacherTokens: z.number().int().positive().default(256).describe("Budget of the teacher's output."),
    maxSolutionTokens: z.number().int().positive().default(512).describe("Budget of the student's answer."),
  })
  .strict();
/** Validated teaching config, defaults filled in. */
export type TeachingConfig = z.infer<typeof TeachingConfig>;
/** Teaching config as a client writes it. */
export type TeachingConfigInput = z.input<typeof TeachingConfig>;

/** Validates a teaching config; throws InvalidInputError naming the field. */
export function parseTeachingConfig(input: unknown): TeachingConfig {
  const parsed = TeachingConfig.safeParse(input);
  if (!parsed.success) throw toInvalidInputError(parsed.error, "teaching");
  return parsed.data;
}
