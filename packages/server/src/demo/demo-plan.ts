import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CanaryPolicyInput, ValidationGatesInput } from "@arc/core";
import { demoRecipe } from "./demo-family.ts";

/** The demo's gates, set explicitly and printed: the defaults (functional ≥ 0.85) assume a usable base model. */
export const DEMO_GATES: ValidationGatesInput = {
  minFunctional: 0,
  minNdr: 0.95,
  alpha: 0.05,
  safety: "clean",
};

/**
 * Why the demo lowers the gates, with the base model's production failure rate from its base-model.json when known;
 * `importedModel` names an imported base (else Arc's ~1M-parameter one).
 */
export function gatesWhy(baseFailureRate: unknown, importedModel: string | null = null): string {
  const known =
    typeof baseFailureRate === "number"
      ? ` (the base model fails ${(baseFailureRate * 100).toFixed(0)}% of it)`
      : "";
  const model = importedModel ?? "a ~1M-parameter model";
  return (
    `functional ≥ 0.85 (default) is out of reach for ${model} on the production split${known}, ` +
    "so the demo gates on not being worse instead: minFunctional 0, NDR ≥ 0.95 (default 0.99), no slice " +
    "significantly worse (McNemar exact, α 0.05, default), general slice NDR ≥ 0.95 (default), safety slice clean (default)."
  );
}

/** The demo's target: the production model's live failure rate at most this share of the base model's. */
export const TARGET_SHARE_OF_BASE_RATE = 0.5;

/**
 * Threads of each training run (`trainer.trainThreads`): SFT steps on two threads took 0.47 s where one took 0.74
 * (the demo family's byte-level base, batch 16), so the agent's traffic slows to `trainingRate` while the candidate trains.
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

/** How the demo trains and paces itself for its base model: Arc's own small model, or an imported pretrained one. */
export interface DemoPlan {
  /** `toy`: Arc's own ~1M-parameter model; `imported`: a pretrained model `arc models import` wrote. */
  base: "toy" | "imported";
  /** The imported model's name as its provenance.json gives it; null for Arc's own. */
  importedModel: string | null;
  /** How the candidate trains, said at the start of the demo. */
  training: string;
  baselineEndsAt: number;
  baselineEndsAtLatest: number;
  baselineCalls: number;
  trainingEndsAt: number;
  validationEndsAt: number;
  canaryEndsAt: number;
  /** Conversations the agent keeps in flight at most, and how long it waits for an answer. */
  agentMaxInFlight: number;
  agentTimeoutMs: number;
  /** Requests in flight per model while validating (undefined: the validator's default). */
  validatorConcurrency?: number;
  /** Server settings the demo's server starts with beside its home and port (ARC_* settings otherwise). */
  server: { queryTimeoutMs?: number };
  gates: ValidationGatesInput;
  /** The tenant's canary policy for the demo (`{}`: the default). */
  canary: CanaryPolicyInput;
  /** What the demo's flags default to on this base. */
  defaults: { baselineRate: number; trainingRate: number; rate: number; maxTokens: number };
}

/** Arc's own byte-level base of the demo family: an SFT warm-up and semi-online DPO on the embedded engine, every weight trained. */
export const TOY_PLAN: DemoPlan = {
  base: "toy",
  importedModel: null,
  training:
    "an SFT warm-up on the reference answers of failed prompts and passed traffic, then semi-online DPO, every weight, on the embedded engine",
  baselineEndsAt: BASELINE_ENDS_AT,
  baselineEndsAtLatest: BASELINE_ENDS_AT_LATEST,
  baselineCalls: BASELINE_CALLS,
  trainingEndsAt: TRAINING_ENDS_AT,
  validationEndsAt: VALIDATION_ENDS_AT,
  canaryEndsAt: CANARY_ENDS_AT,
  agentMaxInFlight: 8,
  agentTimeoutMs: 30_000,
  server: {},
  gates: DEMO_GATES,
  canary: {},
  defaults: { baselineRate: 20, trainingRate: 1, rate: 20, maxTokens: 96 },
};

/** The recipe an imported base trains with: SFT with LoRA adapters on the torch engine. */
export const LORA_SFT_RECIPE = demoRecipe("lora-sft");

/**
 * An imported pretrained base (SmolLM2-135M-Instruct: 135M parameters, ~680-token prompts with the tools) on 2 CPU
 * cores: it answers about half a call a second and trains a few thousand tokens a minute, so the candidate is SFT
 * with LoRA on the torch engine (its fastest trainer here, no sampling) until its deadline, the agent keeps 4 calls in
 * flight and almost pauses while it trains, the validator keeps 4 items in flight per model, and the canary has one
 * 50% stage of 15 judged calls (4 minutes at most).
 */
export const IMPORTED_PLAN: Omit<DemoPlan, "importedModel"> = {
  base: "imported",
  training: `SFT with LoRA adapters on the torch engine (${LORA_SFT_RECIPE}) on the reference answers of the baseline traffic's prompts, until its share of the budget; no DPO`,
  baselineEndsAt: 0.1,
  baselineEndsAtLatest: 0.12,
  baselineCalls: 400,
  trainingEndsAt: 0.62,
  validationEndsAt: 0.78,
  canaryEndsAt: 0.9,
  agentMaxInFlight: 4,
  agentTimeoutMs: 120_000,
  validatorConcurrency: 4,
  // the embedded engine computes on the server's main thread: one prefill of the model's ~680-token prompts holds it
  // for tens of seconds on a busy 2-core machine, and a database statement's answer waits for it
  server: { queryTimeoutMs: 120_000 },
  gates: { ...DEMO_GATES, minGeneralNdr: 0.95 },
  canary: { ramp: [0.5, 1], minSamplesPerStage: 15, minControlSamples: 10, maxStageMinutes: 4 },
  defaults: { baselineRate: 1, trainingRate: 0.05, rate: 1, maxTokens: 64 },
};

/** The name an imported checkpoint's provenance.json gives it (`arc models import`); null for Arc's own models. */
export function importedModelName(dir: string): string | null {
  const path = join(dir, "provenance.json");
  if (!existsSync(path)) return null;
  const provenance = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  if (typeof provenance.importer !== "object" || provenance.importer === null) return null;
  return String(provenance.model ?? provenance.source ?? dir);
}

/** The plan for a base checkpoint: the imported one's when `arc models import` wrote it, else the toy's. */
export function demoPlanFor(baseModel: string): DemoPlan {
  const importedModel = importedModelName(baseModel);
  return importedModel === null ? TOY_PLAN : { ...IMPORTED_PLAN, importedModel };
}
