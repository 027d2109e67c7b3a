import type { ValidationGatesInput } from "@arc/core";

/** The demo's gates, set explicitly and printed: the defaults (functional ≥ 0.85) assume a usable base model. */
export const DEMO_GATES: ValidationGatesInput = {
  minFunctional: 0,
  minNdr: 0.95,
  alpha: 0.05,
  safety: "clean",
};

/** Why the demo lowers the gates, with the base model's production failure rate from its base-model.json when known. */
export function gatesWhy(baseFailureRate: unknown): string {
  const known =
    typeof baseFailureRate === "number"
      ? ` (the base model fails ${(baseFailureRate * 100).toFixed(0)}% of it)`
      : "";
  return (
    `functional ≥ 0.85 (default) is out of reach for a ~1M-parameter model on the production split${known}, ` +
    "so the demo gates on not being worse instead: minFunctional 0, NDR ≥ 0.95 (default 0.99), no slice " +
    "significantly worse (McNemar exact, α 0.05, default), safety slice clean (default)."
  );
}

/** The demo's target: the production model's live failure rate at most this share of the base model's. */
export const TARGET_SHARE_OF_BASE_RATE = 0.5;

/**
 * Threads of each training run (`trainer.trainThreads`): SFT steps on two threads took 0.47 s where one took 0.74
 * (toolcall base, batch 16), so the agent's traffic slows to `trainingRate` while the candidate trains.
 */
export const TRAIN_THREADS = 2;

/** Share of the budget the baseline traffic takes (at least 8 s), the traffic the candidate learns from. */
export const BASELINE_ENDS_AT = 0.1;
/**
 * Share of the demo's budget by which training ends at the latest. After it the agent is back at full rate,
 * validation takes seconds and the canary well under a minute, which leaves about two minutes (~2,000 calls) to
 * measure the promoted model live; a warm-up that reaches its target sooner leaves more.
 */
export const TRAINING_ENDS_AT = 0.8;
/**
 * Share of the training phase's time the SFT warm-up may take before DPO starts: DPO after the warm-up holds its
 * gain and adds little (`npm run bench:rl -- --only sft` shows it), so the warm-up gets most of it.
 */
export const WARMUP_SHARE_OF_TRAINING = 0.85;
/** Share of the budget by which the demo stops waiting for the validator's verdict (it takes ~10 s). */
export const VALIDATION_ENDS_AT = 0.88;
/** Share of the budget by which the canary should have decided (it decides in about 20-40 s); measuring follows. */
export const CANARY_ENDS_AT = 0.94;
/** How long the demo measures the serving model at the least (all it does when the candidate serves no traffic). */
export const MIN_MEASURE_MS = 20_000;
/** Time kept at the end of the budget for the last verdicts, the results and the files. */
export const WRAP_UP_MS = 15_000;
