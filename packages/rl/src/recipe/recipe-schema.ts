import { AdaptiveTeachingRewardConfig, DEFAULT_BASE_MODEL, DEFAULT_ENV } from "@arc/core";
import { z } from "zod";
import { TEACHER_RUN_ENVS } from "../families/teacher-envs.ts";
import { DEFAULT_MIN_JUDGE_SCORED_SHARE } from "../reward/judge-coverage.ts";

export { TEACHER_RUN_ENVS };

/** What a teacher run's SFT labels tell a student whose probe opens the right call (`teaching.strongStudentTeaching`). */
export const STRONG_STUDENT_TEACHING = ["none", "conversions", "measured"] as const;

/** Which model a run starts from. */
/** The cosine learning-rate decay keys of a trainer block, shared by training and teacher recipes. */
export const LEARNING_RATE_DECAY = {
  decaySteps: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe("Cosine learning-rate decay over this many steps after warm-up (0: constant)."),
  minLearningRate: z.number().nonnegative().default(0).describe("Where the cosine decay ends."),
};

export const ModelBlock = z
  .object({
    path: z
      .string()
      .min(1)
      .default(DEFAULT_BASE_MODEL)
      .describe("HF checkpoint directory of the starting model."),
    init: z
      .object({
        size: z
          .enum(["tiny", "small", "base"])
          .describe("Arc's byte-level Llama of this size (`arc engine init`)."),
        seed: z.number().int().default(1).describe("Seed of the initial weights."),
      })
      .strict()
      .optional()
      .describe(
        "Start from freshly initialised weights instead of `path` (a base model trained from scratch); a `model.path=` override drops it.",
      ),
  })
  .strict()
  .default({})
  .describe("The starting model.");

/** Low-rank adapters as the only trained weights (Hu et al. 2021); exports merge them. */
const LoraBlock = z
  .object({
    rank: z.number().int().positive().describe("Rank r of each adapter."),
    alpha: z.number().positive().describe("Scale numerator: the update is (alpha / r) B A."),
    targets: z
      .array(z.enum(["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
      .min(1)
      .default(["q_proj", "v_proj"])
      .describe("Projections that get adapters."),
  })
  .strict();

/** Which engine trains and samples, and where it runs. */
export const EngineBlock = z
  .object({
    kind: z
      .enum(["embedded", "torch"])
      .default("embedded")
      .describe(
        "embedded: the TypeScript engine in this process (CPU). torch: a PyTorch worker process (CPU or GPU; packages/engine/python).",
      ),
    device: z
      .string()
      .min(1)
      .default("auto")
      .describe("torch: cpu, cuda, cuda:N, or auto (a GPU when torch sees one)."),
    dtype: z
      .enum(["float32", "bfloat16", "float16"])
      .default("float32")
      .describe("torch: the passes' precision; training keeps float32 master weights."),
    processes: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe("torch: data-parallel training processes under torchrun (one per GPU)."),
    lora: LoraBlock.optional().describe("Train LoRA adapters instead of every weight."),
  })
  .strict()
  .default({})
  .describe("The engine of the run.");

/** Where the torch engine runs: a Ray cluster, or (without an address) local processes. */
export const ClusterBlock = z
  .object({
    address: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A Ray cluster (host:port of its head, or auto): the torch engine's workers run as actors there.",
      ),
    gpusPerWorker: z
      .number()
      .nonnegative()
      .default(0)
      .describe(
        "GPUs each engine actor asks Ray for; on jobsUrl without address, the job asks for them for each training process.",
      ),
    cpusPerWorker: z
      .number()
      .positive()
      .default(1)
      .describe(
        "CPUs each engine actor asks Ray for; on jobsUrl without address, the job asks for them for each training process.",
      ),
    jobsUrl: z
      .string()
      .url()
      .optional()
      .describe(
        "A Ray cluster's dashboard (http://host:8265): a run on the server is submitted there as a Ray job through the Jobs REST API, followed, stopped when cancelled, and its final checkpoint imported (trainer.backend verl needs it).",
      ),
    arcCommand: z
      .string()
      .min(1)
      .optional()
      .describe(
        "trainer.backend arc on jobsUrl: the `arc` the job runs on the cluster (default: this server's, with its Node; a cluster needs Node and Arc's packages where the job's driver runs).",
      ),
  })
  .strict()
  .default({})
  .describe("The cluster the torch engine runs on, and the Ray cluster a run is submitted to as a job.");

/** How a GRPO recipe runs on VERL (`trainer.backend: verl`): what VERL needs that Arc's own trainer does not. */
export const VerlBlock = z
  .object({
    rollout: z.enum(["vllm", "sglang"]).default("vllm").describe("VERL's rollout engine."),
    nodes: z.number().int().positive().default(1).describe("trainer.nnodes: machines of the job."),
    gpusPerNode: z.number().int().positive().default(8).describe("trainer.n_gpus_per_node."),
    tensorParallel: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe("The rollout engine's tensor-parallel size (GPUs per model replica)."),
    gpuMemoryUtilization: z
      .number()
      .positive()
      .max(1)
      .default(0.5)
      .describe("The share of each GPU's memory the rollout engine takes."),
    maxPromptLength: z
      .number()
      .int()
      .positive()
      .default(1024)
      .describe("data.max_prompt_length, in tokens of the model (the agent's tools included)."),
    microBatchPerGpu: z
      .number()
      .int()
      .positive()
      .default(4)
      .describe("Rows of each forward and backward pass on one GPU (actor, reference and log-prob passes)."),
    python: z
      .string()
      .min(1)
      .default("python3")
      .describe("The Python on the cluster that has VERL installed (`pip install 'verl[vllm]'`)."),
    overrides: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Further Hydra overrides of verl.trainer.main_ppo, passed after Arc's (e.g. trainer.val_before_train=false).",
      ),
  })
  .strict()
  .default({})
  .describe("trainer.backend verl: the VERL job's rollout engine, cluster shape and lengths.");

/** An inference server that samples a run's rollouts instead of an engine of the run's own. */
export const GeneratorBlock = z
  .object({
    url: z
      .string()
      .url()
      .optional()
      .describe(
        "The server's OpenAI base URL (vLLM, SGLang or `arc engine serve --allow-weight-updates`, e.g. http://127.0.0.1:8000/v1): rollouts are sampled there over /v1/completions, and each new policy is pushed to it as a checkpoint directory it reads (/update_weights_from_disk).",
      ),
    model: z
      .string()
      .min(1)
      .optional()
      .describe("The served model's name (default: the model directory's name)."),
    apiKeyEnv: z
      .string()
      .min(1)
      .optional()
      .describe("The environment variable that holds the server's API key, if it needs one."),
    weightSync: z
      .enum(["disk", "lora"])
      .default("disk")
      .describe(
        "How each new policy reaches the server: `disk`, whole weights through SGLang's /update_weights_from_disk; `lora`, the run's LoRA adapters (engine.lora) through vLLM's /v1/load_lora_adapter, sampled by adapter name (the server serves the run's starting model).",
      ),
    api: z
      .enum(["completions", "sglang"])
      .default("completions")
      .describe(
        "How rollouts are sampled: `completions`, vLLM's OpenAI /v1/completions with token ids; `sglang`, SGLang's native /generate, with each weight update between /pause_generation (in_place) and /continue_generation (weightSync disk only).",
      ),
  })
  .strict()
  .default({})
  .describe(
    "Where rollouts are sampled: an inference server over HTTP (the run's own engine without a url).",
  );

/** What a run trains on and is judged on. */
export const DataBlock = z
  .object({
    env: z
      .string()
      .min(1)
      .default(DEFAULT_ENV)
      .describe(
        "Task family of the prompts (its env id): a built-in one or one registered by `families`, `arc --family` or ARC_FAMILIES.",
      ),
    split: z
      .enum(["train", "eval", "production"])
      .default("production")
      .describe("Split the training prompts are drawn from."),
    count: z.number().int().positive().default(256).describe("Size of the training prompt pool."),
    prompts: z
      .string()
      .optional()
      .describe(
        "JSONL PromptPool (question/solution/env rows, e.g. `arc datasets export --format jsonl`) to train on instead of the generated split; SFT trains on each row's reference answer.",
      ),
    examples: z
      .string()
      .optional()
      .describe(
        "SFT only: JSONL of chat examples in OpenAI's fine-tuning format (`messages` ending in the assistant reply to learn, optional `tools`), learned instead of the prompts' reference answers.",
      ),
    rehearsal: z
      .string()
      .optional()
      .describe(
        'SFT only: JSONL of prompts unrelated to the task (`{"prompt": ...}` or `{"messages": [...]}` a line). At the run\'s start the starting model answers each (greedy; answers cut off are left out), the answers are kept in the run\'s rehearsal.jsonl, and they are learned beside the task\'s examples, so the model keeps how it answered such prompts.',
      ),
    rehearsalShare: z
      .number()
      .min(0)
      .max(0.9)
      .default(0.2)
      .describe("SFT with rehearsal: share of the examples that rehearse the starting model's own answers."),
    seed: z.number().int().default(1).describe("Seed of the prompt pool and of the data order."),
    skipSteps: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe(
        "SFT: steps of the data order already taken, so a run that continues a model goes on where the model's run stopped (the guided schedule counts them too).",
      ),
    guidedFrom: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe("SFT with guidedEvery: the first step that may be a batch of guided examples."),
    guidedEvery: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .refine((v) => v !== 1, "expected 0 or at least 2 (1 would leave no plain steps)")
      .describe(
        "SFT: 0 mixes guided examples into every batch; k ≥ 2 makes every k-th step from guidedFrom a half-size batch of guided examples only (guided prompts are longer, and a mixed batch pads every row to them).",
      ),
    guidedFraction: z
      .number()
      .min(0)
      .max(1)
      .default(0)
      .describe("SFT only: share of examples whose prompt carries a teacher's guidance."),
    preferences: z
      .string()
      .optional()
      .describe(
        "JSONL of production preference pairs (prompt/chosen/rejected rows): DPO mixes them into its steps; SFT also learns each chosen answer (a human correction, a verified answer).",
      ),
    preferenceMix: z
      .number()
      .min(0)
      .max(1)
      .default(0.25)
      .describe("DPO only: share of each step's pairs taken from `preferences` when given."),
    evalSplit: z
      .enum(["train", "eval", "production"])
      .default("production")
      .describe("Split of the held-out tasks."),
    evalCount: z
      .number()
      .int()
      .nonnegative()
      .default(64)
      .describe("Held-out tasks judged at each evaluation; 0 disables."),
    evalSeed: z
      .number()
      .int()
      .default(999)
      .describe("Seed of the held-out tasks (disjoint from the pool's seed)."),
  })
  .strict()
  .default({})
  .describe("Prompts to train on and held-out tasks.");

/** The keys every trainer block takes, whatever its algorithm: optimizer, schedule, seed and evaluation. */
const COMMON_TRAINER_KEYS = {
  backend: z
    .enum(["arc", "verl"])
    .default("arc")
    .describe(
      "arc: Arc's own trainer (`arc train`, either engine). verl: GRPO compiled into a VERL job (verl.trainer.main_ppo) on a Ray cluster, rewarded by Arc through its API.",
    ),
  steps: z.number().int().positive().default(100).describe("Optimizer steps of the run."),
  promptsPerStep: z
    .number()
    .int()
    .positive()
    .default(8)
    .describe("Prompts (SFT: examples) per optimizer step."),
  learningRate: z.number().positive().default(1e-4).describe("AdamW peak learning rate."),
  warmupSteps: z.number().int().nonnegative().default(0).describe("Linear learning-rate warm-up steps."),
  ...LEARNING_RATE_DECAY,
  weightDecay: z.number().nonnegative().default(0).describe("AdamW decoupled weight decay."),
  maxGradNorm: z.number().nonnegative().default(1).describe("Clip the global gradient norm (0 disables)."),
  trainThreads: z
    .number()
    .int()
    .positive()
    .default(1)
    .describe(
      "Threads that run each step's forward/backward passes: the rows are split between them and the gradients summed (data-parallel; leave 1 when rollouts already take the other core).",
    ),
  maxTokens: z
    .number()
    .int()
    .positive()
    .default(96)
    .describe("Output budget per rollout sample and per held-out answer."),
  seed: z.number().int().default(1).describe("Seed of sampling; with data.seed it fixes the whole run."),
  checkpointEvery: z.number().int().positive().default(25).describe("Write a checkpoint every N steps."),
  evalEvery: z
    .number()
    .int()
    .positive()
    .default(25)
    .describe("Judge the policy on the held-out tasks every N steps."),
  evalFrom: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      "First step after the start that is judged (default: evalEvery); the start and the last step are always judged.",
    ),
};

/** The keys of the algorithms that sample the policy and reward its samples (DPO and GRPO). */
const SAMPLING_TRAINER_KEYS = {
  samplesPerPrompt: z
    .number()
    .int()
    .min(2)
    .default(4)
    .describe("k candidates per prompt (DPO) or group size G (GRPO)."),
  temperature: z.number().positive().default(1).describe("Sampling temperature of rollouts."),
  workflow: z
    .enum(["single-turn", "multi-turn"])
    .optional()
    .describe(
      "single-turn answers to each prompt, or multi-turn episodes in the task family's environment (default: multi-turn for a family with a session, else single-turn).",
    ),
  entropyCoef: z
    .number()
    .nonnegative()
    .default(0)
    .describe("Weight of the entropy bonus (DPO: entropy regularization)."),
};

/** SFT: learn reference answers, corrections and chat examples by next-token likelihood. */
export const SftTrainer = z
  .object({ algorithm: z.literal("sft").describe("SFT warm-up."), ...COMMON_TRAINER_KEYS })
  .strict();

/** Semi-online DPO: pairs of the generator's best and worst samples of each prompt. */
export const DpoTrainer = z
  .object({
    algorithm: z.literal("dpo").describe("Semi-online DPO."),
    ...COMMON_TRAINER_KEYS,
    ...SAMPLING_TRAINER_KEYS,
    syncInterval: z
      .union([z.number().int().positive(), z.literal("inf")])
      .default(1)
      .describe(
        "Generator ← policy every s optimizer steps: 1 = online, 'inf' = offline (pairs from the initial model).",
      ),
    syncReference: z
      .boolean()
      .default(false)
      .describe("Make the reference model the policy at each generator sync (avoids length collapse)."),
    beta: z.number().positive().default(0.1).describe("Strength of the implicit KL constraint."),
    loss: z.enum(["sigmoid", "ipo"]).default("sigmoid").describe("sigmoid (DPO) or ipo (IPO) loss."),
    nllCoef: z
      .number()
      .nonnegative()
      .default(0)
      .describe("Weight of the chosen responses' token NLL added to the loss (RPO)."),
  })
  .strict();

/** GRPO: group-relative advantages under a clipped policy ratio, on-policy or from a bounded-stale generator. */
export const GrpoTrainer = z
  .object({
    algorithm: z.literal("grpo").describe("GRPO."),
    ...COMMON_TRAINER_KEYS,
    ...SAMPLING_TRAINER_KEYS,
    clipEpsilon: z.number().positive().default(0.2).describe("PPO clip range."),
    klCoef: z.number().nonnegative().default(0).describe("Weight of KL(policy || reference); 0 disables."),
    normalization: z
      .enum(["grpo", "dr-grpo"])
      .default("grpo")
      .describe("Advantages (r - mean) / std, or Dr.GRPO (r - mean, constant-length loss)."),
    maxStaleness: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe("Rollouts may be at most this many versions older than the policy; 0 = synchronous."),
    decoupled: z
      .boolean()
      .default(false)
      .describe(
        "AReaL's decoupled PPO objective for stale rollouts (clip against the proximal policy, weight by pi_prox/pi_behaviour); needs temperature 1.",
      ),
    behaviourWeightCap: z
      .number()
      .positive()
      .optional()
      .describe("With decoupled: tokens whose pi_prox/pi_behaviour exceeds this are left out."),
    ppoEpochs: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe(
        "Optimizer updates on each rollout batch (TRL's num_iterations, VERL's ppo_epochs); every update clips against the policy the batch's first update started from. Warm-up and decay still count steps.",
      ),
    asyncRollouts: z
      .boolean()
      .default(false)
      .describe(
        "Generate while the trainer trains (AReaLite): in a worker thread on the embedded engine, in the generator's own process on torch.",
      ),
    maxConcurrentRollouts: z
      .number()
      .int()
      .positive()
      .default(32)
      .describe("Async: most episodes in flight at once."),
  })
  .strict();

/** The trainer blocks by algorithm: each takes its own keys only, and refuses another algorithm's by name. */
export const TRAINER_BY_ALGORITHM = { sft: SftTrainer, dpo: DpoTrainer, grpo: GrpoTrainer } as const;

/**
 * The `key=value` overrides a recipe of `algorithm` takes: every override outside `trainer`, and those of the trainer
 * keys of that algorithm, so that one list written for a DPO run can also set up its SFT warm-up.
 */
export function overridesForAlgorithm(
  algorithm: keyof typeof TRAINER_BY_ALGORITHM,
  overrides: readonly string[],
): string[] {
  const keys = TRAINER_BY_ALGORITHM[algorithm].shape;
  return overrides.filter((override) => {
    const [block, key] = override.slice(0, override.indexOf("=")).trim().split(".");
    return block !== "trainer" || key in keys;
  });
}

/** The algorithm a trainer block without one trains with. */
export const DEFAULT_ALGORITHM = "dpo";

/** How the trainer optimizes: a block per algorithm (`trainer.algorithm`, default dpo). */
export const TrainerBlock = z
  .preprocess(
    (raw) =>
      raw === undefined
        ? { algorithm: DEFAULT_ALGORITHM }
        : typeof raw === "object" && raw !== null && !Array.isArray(raw) && !("algorithm" in raw)
          ? { ...raw, algorithm: DEFAULT_ALGORITHM }
          : raw,
    z
      .discriminatedUnion("algorithm", [SftTrainer, DpoTrainer, GrpoTrainer])
      .refine((t) => t.algorithm !== "grpo" || !t.decoupled || t.temperature === 1, {
        message: "needs trainer.temperature 1 (the behaviour log-probs must be the policy's own)",
        path: ["decoupled"],
      }),
  )
  .describe("Optimizer, algorithm and schedule.");
/** What a sample earns. */
/** The judge model of `reward.kind: judge`. */
export const JudgeRewardBlock = z
  .object({
    baseUrl: z.string().url().describe("An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."),
    model: z.string().min(1).describe("The judge model's name, as the endpoint knows it."),
    apiKeyEnv: z.string().min(1).optional().describe("Environment variable holding the endpoint's key."),
    rubric: z
      .string()
      .min(1)
      .describe(
        "Path of the rubric's JSON file: {criteria, classes, instructions?}, as `arc judges set` takes.",
      ),
    mode: z
      .enum(["pointwise", "group"])
      .default("pointwise")
      .describe(
        "pointwise: each sample judged alone; group: a prompt's samples scored together in one call (RULER).",
      ),
    callsPerMinute: z.number().int().positive().optional().describe("Judge calls a minute at most."),
    tokensPerMinute: z.number().int().positive().optional().describe("Judge tokens a minute at most."),
    concurrency: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Judge calls in flight at once, the rest wait in the run's judge queue (default 1)."),
    deadlineMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "A judge call's deadline from when it is queued, retries included; past it the sample is unjudged (default 30000).",
      ),
    retries: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Tries after the first for a transient failure (no connection, 429, 5xx), backing off (default 2).",
      ),
    minScoredShare: z
      .number()
      .min(0)
      .max(1)
      .default(DEFAULT_MIN_JUDGE_SCORED_SHARE)
      .describe(
        "The share of the run's samples the judge must score; under it (or with none scored) the run fails and registers no candidate.",
      ),
  })
  .strict();

export const RewardBlock = z
  .object({
    kind: z
      .enum(["verifier", "partial", "judge"])
      .default("partial")
      .describe(
        "verifier: 1 pass / 0 fail; partial: partial credit by failure class (wrong argument > wrong tool); judge: the rubric score a judge model gives each sample, in [0, 1].",
      ),
    judge: JudgeRewardBlock.optional().describe("The judge model and rubric of `kind: judge`."),
    truncatedPenalty: z
      .number()
      .nonnegative()
      .default(0)
      .describe("Subtracted when a sample hits maxTokens."),
    module: z
      .string()
      .optional()
      .describe("Path of an ES module whose default export is a RewardFn; replaces `kind`."),
  })
  .strict()
  .default({})
  .describe("Reward of a sample.");

/** When a planned SFT warm-up judges its held-out tasks, and the failure rate that ends it early. */
export const WarmUpStopBlock = z
  .object({
    failureRate: z
      .number()
      .min(0)
      .max(1)
      .describe(
        "Stop at the first held-out judgement whose 95% Wilson upper bound is at most this; that step's checkpoint is handed on.",
      ),
    evalCount: z
      .number()
      .int()
      .positive()
      .default(256)
      .describe("Held-out tasks each judgement draws (the recipe's held-out split and seed)."),
    evalEvery: z
      .number()
      .int()
      .positive()
      .default(200)
      .describe("Steps between judgements; each judged step writes the checkpoint it would hand on."),
    evalFrom: z
      .number()
      .int()
      .positive()
      .default(600)
      .describe("The first judged step after the start (a re-planned part judges from evalEvery on)."),
  })
  .strict();

/** SFT steps a DPO or GRPO run takes first, on its own data; planned to a time budget and stopped early when asked. */
export const SftWarmUpBlock = z
  .object({
    steps: z
      .number()
      .int()
      .positive()
      .describe("SFT steps before the algorithm's (with budgetS, the most it may plan)."),
    learningRate: z.number().positive().default(0.001).describe("Their peak learning rate."),
    promptsPerStep: z.number().int().positive().default(16).describe("Examples a step."),
    warmupSteps: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe(
        "Linear learning-rate ramp at its start (a re-planned part, whose optimizer starts afresh, ramps twice as long).",
      ),
    minLearningRate: z
      .number()
      .nonnegative()
      .optional()
      .describe(
        "With it, the rate decays along a cosine to this by the last planned step; without it, the rate is constant.",
      ),
    budgetS: z
      .number()
      .positive()
      .optional()
      .describe(
        "Seconds the warm-up may take: a probe of a few steps times the machine, the steps that fit are planned (steps at most), and a part that would overrun goes on from its last checkpoint with a new plan.",
      ),
    stopAt: WarmUpStopBlock.optional().describe(
      "Judge the held-out tasks as it trains and stop once the failure rate is surely at most a target.",
    ),
  })
  .strict();

/** The keys of a teacher run's `teaching` block that both teaching modes take. */
const TeachingCommon = z.object({
  student: z
    .string()
    .min(1)
    .describe("HF checkpoint of the frozen student the teacher learns to help (it is never trained)."),
  maxProbeTokens: z
    .number()
    .int()
    .positive()
    .default(50)
    .describe("The probe budget, in the student's tokens: how much of its approach the teacher sees."),
  maxSolutionTokens: z.number().int().positive().default(128).describe("Budget of each student solution."),
});

/** The teaching block of a teacher trained by SFT on labelled teachings of the student's probes. */
export const SftTeaching = TeachingCommon.extend({
  strongStudentTeaching: z
    .enum(STRONG_STUDENT_TEACHING)
    .default("none")
    .describe(
      "SFT labels: what a student whose probe opens the right call is told: nothing, the request's conversions, or those of the kinds of request measured to gain from them with the frozen student ('measured').",
    ),
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
    .describe("SFT: share of tasks that also get a synthetic probe (keeps both diagnoses represented)."),
}).strict();

/** The teaching block of a teacher trained by GRPO, each sampled teaching rewarded by what it does to the student. */
export const GrpoTeaching = TeachingCommon.extend({
  studentScore: z
    .enum(["verdict", "reference-likelihood"])
    .default("verdict")
    .describe(
      "GRPO: what the reward compares with and without the teaching: the greedy student's verdict (0 or 1), or its teacher-forced probability of the reference answer (dense; needs reward form 'delta').",
    ),
  reward: AdaptiveTeachingRewardConfig.default({}).describe(
    "GRPO: the adaptive teaching reward (form, degradation penalty or multiplier, efficiency weight).",
  ),
}).strict();

/**
 * The teaching blocks by teaching mode (the teacher's `trainer.algorithm`): each takes its own keys only, and refuses
 * the other mode's by name.
 */
export const TEACHING_BY_MODE = { sft: SftTeaching, grpo: GrpoTeaching } as const;

/**
 * A teacher run: the model learns to teach a frozen student (adaptive teaching). SFT learns labelled teachings of the
 * student's probes; GRPO samples teachings and rewards each by what it does to the student. The held-out tasks are
 * judged as the student taught by the policy. A validated block holds both modes' keys, the other mode's at their
 * defaults (the SFT labelling measures its conversions with the GRPO reward).
 */
export const TeachingBlock = SftTeaching.merge(GrpoTeaching).strict();

/** The blocks of a recipe, each validated on its own. */
export const RecipeBlocks = z
  .object({
    name: z.string().default("run").describe("A short name for the run."),
    families: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Task-family modules to register before the run (paths relative to the recipe file), each default-exporting a family or a list of them.",
      ),
    model: ModelBlock,
    engine: EngineBlock,
    cluster: ClusterBlock,
    generator: GeneratorBlock,
    data: DataBlock,
    trainer: TrainerBlock,
    reward: RewardBlock,
    teaching: TeachingBlock.optional().describe(
      "Train the model as the adaptive teacher of a frozen student (the families of TEACHER_RUN_ENVS): SFT on labelled teachings or GRPO with the adaptive teaching reward, in place of the run's reward block.",
    ),
    verl: VerlBlock,
    sftWarmUp: SftWarmUpBlock.optional().describe(
      "A DPO or GRPO run's SFT warm-up: steps on the pool's reference answers and the preference rows' chosen answers (human corrections), in `<run>/sft-warm-up/`, planned to `budgetS` and stopped at `stopAt` when given; the algorithm then starts from the checkpoint it hands on (DPO's reference model too) with its own optimizer.",
    ),
  })
  .strict();

/**
 * Refuses the keys of a raw `teaching` block that its teaching mode (the raw trainer's algorithm) does not take, as an
 * unrecognized key of `teaching` each; the block's own schema checks the rest.
 */
function refuseForeignTeachingKeys(raw: unknown, ctx: z.RefinementCtx): unknown {
  const blocks = raw as { teaching?: unknown; trainer?: { algorithm?: unknown } } | null;
  const teaching = blocks?.teaching;
  const mode = blocks?.trainer?.algorithm;
  if (typeof teaching !== "object" || teaching === null || (mode !== "sft" && mode !== "grpo")) return raw;
  const own = TEACHING_BY_MODE[mode].shape;
  const foreign = Object.keys(teaching).filter((key) => !(key in own) && key in TeachingBlock.shape);
  if (foreign.length > 0)
    ctx.addIssue({ code: z.ZodIssueCode.unrecognized_keys, keys: foreign, path: ["teaching"] });
  return raw;
}

/** A whole run, as a recipe file describes it: its blocks, and the blocks that only some algorithms take. */
export const Recipe = z.preprocess(
  refuseForeignTeachingKeys,
  RecipeBlocks.superRefine((recipe, ctx) => {
    const refuse = (path: string, message: string) =>
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: path.split("."), message });
    const { trainer, teaching } = recipe;
    if (recipe.sftWarmUp && trainer.algorithm === "sft")
      refuse("sftWarmUp", "an SFT run has no SFT warm-up; give its steps to trainer.steps");
    if (!teaching) return;
    if (trainer.algorithm === "dpo")
      refuse(
        "trainer.algorithm",
        "a teacher trains by sft (labelled teachings) or grpo (the teaching reward)",
      );
    if (trainer.algorithm === "grpo" && trainer.workflow === "multi-turn")
      refuse("trainer.workflow", "a teacher answers one prompt per task (single-turn)");
    if (trainer.algorithm === "grpo" && trainer.asyncRollouts)
      refuse("trainer.asyncRollouts", "teacher GRPO samples on-policy, in step with the trainer");
    if (teaching.studentScore === "reference-likelihood" && teaching.reward.form !== "delta")
      refuse(
        "teaching.reward.form",
        `studentScore 'reference-likelihood' needs form 'delta' (a score in [0, 1]), got '${teaching.reward.form}'`,
      );
    if (recipe.generator.url) refuse("generator.url", "a teacher run samples with its own engine");
    if (recipe.reward.judge) refuse("reward.judge", "a teacher run is rewarded by teaching.reward");
    if (recipe.reward.module) refuse("reward.module", "a teacher run is rewarded by teaching.reward");
  }),
);

/** A validated recipe, every default filled in. */
export type Recipe = z.infer<typeof Recipe>;
/** A validated trainer block of any algorithm. */
export type TrainerBlock = z.infer<typeof TrainerBlock>;
/** A validated trainer block of one algorithm. */
export type SftTrainer = z.infer<typeof SftTrainer>;
export type DpoTrainer = z.infer<typeof DpoTrainer>;
export type GrpoTrainer = z.infer<typeof GrpoTrainer>;
/** A trainer block of an algorithm that samples the policy (DPO or GRPO). */
export type SamplingTrainer = DpoTrainer | GrpoTrainer;
/** A validated SFT warm-up block. */
export type SftWarmUp = z.infer<typeof SftWarmUpBlock>;
/** A recipe as written: every field optional. */
export type RecipeInput = z.input<typeof Recipe>;

/** The largest seed a run request may set (a signed 32-bit integer). */
const MAX_SEED = 2 ** 31 - 1;
/** The most steps a run request may ask for: 5x the longest shipped run recipe (200 steps). */
const MAX_STEPS = 1000;

/**
 * The recipe keys a tenant's run request may override, each with the most a request may set it to (null: a choice
 * or a flag, which the schema bounds). The keys are optimizer, schedule, sampling, algorithm coefficients, seeds and
 * data sizes. Not the recipe's choices (name, algorithm, task family), not paths (model, data files, reward module:
 * the server or the operator's recipe file sets them), and not what sizes the server's share of a run (trainer
 * threads, asynchronous rollouts). The caps of what costs compute or memory (steps, batch, samples, tokens, data
 * sizes, epochs) are a few times the most a shipped recipe under recipes/ uses; the coefficients' are past any
 * sensible setting.
 */
export const TUNABLE_RECIPE_KEYS: ReadonlyMap<string, number | null> = new Map<string, number | null>([
  ["data.count", 16384],
  ["data.seed", MAX_SEED],
  ["data.guidedFraction", 1],
  ["data.preferenceMix", 1],
  ["data.rehearsalShare", 0.9],
  ["data.evalCount", 512],
  ["data.evalSeed", MAX_SEED],
  ["trainer.steps", MAX_STEPS],
  ["trainer.promptsPerStep", 64],
  ["trainer.samplesPerPrompt", 16],
  ["trainer.learningRate", 1],
  ["trainer.warmupSteps", MAX_STEPS],
  ["trainer.decaySteps", MAX_STEPS],
  ["trainer.minLearningRate", 1],
  ["trainer.weightDecay", 1],
  ["trainer.maxGradNorm", 100],
  ["trainer.temperature", 2],
  ["trainer.maxTokens", 512],
  ["trainer.seed", MAX_SEED],
  ["trainer.syncInterval", MAX_STEPS],
  ["trainer.syncReference", null],
  ["trainer.beta", 10],
  ["trainer.loss", null],
  ["trainer.clipEpsilon", 1],
  ["trainer.klCoef", 10],
  ["trainer.entropyCoef", 10],
  ["trainer.nllCoef", 10],
  ["trainer.normalization", null],
  ["trainer.maxStaleness", 8],
  ["trainer.decoupled", null],
  ["trainer.behaviourWeightCap", 100],
  ["trainer.ppoEpochs", 8],
  ["trainer.checkpointEvery", MAX_STEPS],
  ["trainer.evalEvery", MAX_STEPS],
  ["trainer.evalFrom", MAX_STEPS],
  ["sftWarmUp.steps", MAX_STEPS],
  ["sftWarmUp.learningRate", 1],
  ["sftWarmUp.promptsPerStep", 64],
  ["sftWarmUp.warmupSteps", MAX_STEPS],
  ["sftWarmUp.minLearningRate", 1],
  ["reward.kind", null],
  ["reward.truncatedPenalty", 10],
]);
