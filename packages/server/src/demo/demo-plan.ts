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

/** Share of the budget the baseline traffic takes at least (and at least 8 s): the traffic the candidate learns from. */
export const BASELINE_ENDS_AT = 0.1;
/**
 * Answered calls the baseline gathers before training starts, when a slow machine answers fewer in its share: the
 * warm-up learns with the number of production prompts it sees (from 1,000 prompts it ends well above what 1,600
 * give it), so the baseline runs on for them until `BASELINE_ENDS_AT_LATEST`.
 */
export const BASELINE_CALLS = 1600;
/** Share of the budget by which the baseline ends, however many calls it gathered. */
export const BASELINE_ENDS_AT_LATEST = 0.15;
/**
 * Share of the demo's budget by which training ends at the latest. After it the agent is back at full rate,
 * validation takes seconds and the canary well under a minute, which leaves about a minute and a half (~1,500
 * calls) to measure the promoted model live; a warm-up that reaches its target sooner leaves more.
 */
export const TRAINING_ENDS_AT = 0.84;
/**
 * Share of the training phase's time the SFT warm-up may take before DPO starts: the warm-up's steps are what
 * halves the failure rate (on 1,700 production prompts, 1,000 steps judged 0.080 on 512 held-out tasks and 1,500
 * steps 0.043, base 0.176), and DPO after it holds its gain and adds little, so the warm-up gets most of it.
 */
export const WARMUP_SHARE_OF_TRAINING = 0.9;
/** Share of the budget by which the demo stops waiting for the validator's verdict (it takes ~10 s). */
export const VALIDATION_ENDS_AT = 0.88;
/** Share of the budget by which the canary should have decided (it decides in about 20-40 s); measuring follows. */
export const CANARY_ENDS_AT = 0.94;
/** How long the demo measures the serving model at the least (all it does when the candidate serves no traffic). */
export const MIN_MEASURE_MS = 20_000;
/** Time kept at the end of the budget for the last verdicts, the results and the files. */
export const WRAP_UP_MS = 15_000;
