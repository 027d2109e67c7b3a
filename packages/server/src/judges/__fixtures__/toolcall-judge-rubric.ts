/**
 * The rubric the shipped `toolcall` judge (models/toolcall-judge) was trained on, with the verifier's failure
 * classes as its classes so that its verdicts compare with the verifier's class by class.
 */
export const TOOLCALL_JUDGE_RUBRIC = {
  criteria: ["One call of the requested tool with the user's values."],
  classes: [
    { name: "wrong_tool", description: "another tool, or none", severity: "high" },
    { name: "wrong_argument", description: "a value differs from the request", severity: "medium" },
    { name: "parse_error", description: "not valid JSON", severity: "high" },
    { name: "schema_violation", description: "breaks the tool's schema", severity: "high" },
    { name: "execution_error", description: "a value the tool rejects", severity: "high" },
  ],
} as const;

/** Seed of the production requests the judge's training answers come from. */
export const TOOLCALL_JUDGE_TRAIN_SEED = 7001;
/** Seed of the held-out production requests `bench:judges` measures the judge on (the seed held-out figures use). */
export const TOOLCALL_JUDGE_BENCH_SEED = 1000;
