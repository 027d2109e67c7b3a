// npm run bench:judges: the shipped toolcall judge (models/toolcall-judge) against the toolcall verifier, and GRPO
// rewarded by each.
//  1. Agreement. The toolcall base answers held-out production requests (seed 1000, greedy, as the demo's agent asks
//     them), the verifier labels the first 512 distinct answers it can decide, and the judge, served by `arc engine
//     serve` and asked through the judge detector (its rubric, structured output), judges the same answers:
//     agreement, Cohen's kappa, precision and recall per class, and judge calls a second at 4 in flight.
//     The same judge and rubric on a family whose tools it never saw (the order desk's: `--unseen` answers, half of
//     them another action than the desk's policy allows, labelled by that family's verifier): its kappa there, and
//     whether the trust gate (at least 50 judged, kappa at or above the default judgeMinKappa) refuses it.
//  2. GRPO. recipes/toolcall-grpo.yaml from the toolcall base, the same steps, rewarded by the verifier and by the
//     judge (pointwise, 8 calls in flight through the run's judge queue, as the judge server batches 8, each by a
//     120 s deadline, as the agreement's calls wait); each final
//     checkpoint judged by the verifier on 512 held-out production tasks (seed 1000).
// Usage: npm run bench:judges [-- --traces 512] [-- --unseen 256] [-- --grpo-steps 60]
// Writes bench/results/judges.json.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  calibrationReport,
  createJudgeDetector,
  DetectionConfig,
  openAIJudgeClient,
  parseRubric,
} from "@arc/core";
import { generateToolcallTasks } from "@arc/core/families";
import { EmbeddedInferenceEngine, startEngineServer } from "@arc/engine";
import { evaluate, loadRecipe, startRun } from "@arc/rl";
import { engineFactory } from "@arc/rl/embedded";
import {
  judgeLabelledTraces,
  sampleLabelledTraces,
} from "../packages/server/src/judges/__fixtures__/toolcall-judge-data.ts";
import {
  TOOLCALL_JUDGE_BENCH_SEED,
  TOOLCALL_JUDGE_RUBRIC,
} from "../packages/server/src/judges/__fixtures__/toolcall-judge-rubric.ts";
import {
  UNSEEN_FAMILY,
  unseenFamilyLabelledTraces,
} from "../packages/server/src/judges/__fixtures__/unseen-family-data.ts";
import { calibrationRefusal } from "../packages/server/src/judges/judge-trust.ts";
import { writeBenchResults } from "./results-file.ts";

const { values } = parseArgs({
  options: {
    traces: { type: "string", default: "512" },
    unseen: { type: "string", default: "256" },
    "grpo-steps": { type: "string", default: "60" },
  },
});
const traceCount = Number(values.traces);
const unseenCount = Number(values.unseen);
/** The production seed of the unseen family's requests: the held-out seed every figure here uses. */
const UNSEEN_FAMILY_SEED = 1000;
const grpoSteps = Number(values["grpo-steps"]);
const BASE = "models/toolcall-base";
const JUDGE = "models/toolcall-judge";
/** Most tokens of a verdict: the shipped judge writes about 90, and its context holds the prompt and them. */
const VERDICT_TOKENS = 128;
const KEY = "bench-judges";

const rubric = parseRubric(TOOLCALL_JUDGE_RUBRIC);
const work = await mkdtemp(join(tmpdir(), "arc-bench-judges-"));
/** Held-out requests drawn: a fifth more than the traces measured, as repeated and undecidable answers are left out. */
const heldOut = generateToolcallTasks({
  split: "production",
  seed: TOOLCALL_JUDGE_BENCH_SEED,
  count: Math.ceil(traceCount * 1.2),
});
/** The held-out tasks GRPO's checkpoints are judged on by the verifier: those every held-out figure uses. */
const GRPO_HELD_OUT = generateToolcallTasks({ split: "production", seed: 1000, count: 512 });

/** The verifier's failure rate of a checkpoint on `GRPO_HELD_OUT`, greedy. */
async function heldOutFailureRate(dir: string): Promise<number> {
  const engine = await EmbeddedInferenceEngine.load(dir, { maxBatchSize: 64 });
  return (await evaluate(engine, GRPO_HELD_OUT, { maxTokens: 96 })).failureRate;
}

// 1. the base model's answers, labelled by the verifier
const base = await startEngineServer(await EmbeddedInferenceEngine.load(BASE), {
  modelId: "toolcall-base",
  apiKey: KEY,
});
const labelled = await sampleLabelledTraces({
  baseURL: base.baseURL,
  apiKey: KEY,
  model: "toolcall-base",
  tasks: heldOut,
  temperatures: [0],
}).then((traces) => traces.slice(0, traceCount));
await base.close();
if (labelled.length < traceCount)
  throw new Error(`only ${labelled.length} distinct decidable answers of ${heldOut.length} requests`);

// ... judged by the judge
const judgeServer = await startEngineServer(await EmbeddedInferenceEngine.load(JUDGE, { maxBatchSize: 8 }), {
  modelId: "toolcall-judge",
  apiKey: KEY,
});
const judge = createJudgeDetector({
  rubric,
  model: "toolcall-judge",
  client: openAIJudgeClient({ baseUrl: judgeServer.baseURL, apiKey: KEY, timeoutMs: 120_000 }),
  maxTokens: VERDICT_TOKENS,
});
const judgingStarted = performance.now();
const items = await judgeLabelledTraces(judge, labelled, 4);
const judgingS = (performance.now() - judgingStarted) / 1000;
const report = calibrationReport(items);
console.log(
  `judge vs verifier on ${report.items} distinct held-out answers (${labelled.filter((t) => t.label.failed).length} failed): agreement ${report.agreement?.toFixed(3)}, kappa ${report.kappa?.toFixed(3)}, unjudged ${report.unjudged}, ${(labelled.length / judgingS).toFixed(2)} calls/s`,
);
for (const c of report.classes)
  console.log(
    `  ${c.name}: labelled ${c.labelled}, flagged ${c.flagged}, precision ${c.precision?.toFixed(2) ?? "–"}, recall ${c.recall?.toFixed(2) ?? "–"}`,
  );

// ... and on a family whose tools it never saw, against that family's verifier, through the trust gate
const unseenReport = calibrationReport(
  await judgeLabelledTraces(judge, unseenFamilyLabelledTraces(UNSEEN_FAMILY_SEED, unseenCount), 4),
);
const minKappa = DetectionConfig.parse({}).judgeMinKappa ?? 0;
const unseenRefusal = calibrationRefusal(unseenReport, minKappa);
console.log(
  `judge vs the ${UNSEEN_FAMILY} verifier on ${unseenReport.items} answers with tools it never saw: agreement ${unseenReport.agreement?.toFixed(3)}, kappa ${unseenReport.kappa?.toFixed(3)}, unjudged ${unseenReport.unjudged}; gate: ${unseenRefusal ?? "trusted"}`,
);

// 2. GRPO rewarded by the verifier and by the judge, the same budget
const rubricPath = join(work, "rubric.json");
await writeFile(rubricPath, JSON.stringify(TOOLCALL_JUDGE_RUBRIC));
process.env.ARC_BENCH_JUDGE_KEY = KEY;
const grpo = [
  "data.evalCount=0",
  `trainer.steps=${grpoSteps}`,
  `trainer.checkpointEvery=${grpoSteps}`,
  "trainer.asyncRollouts=false",
  "trainer.decoupled=false",
];
async function grpoFailureRate(reward: string[]): Promise<{ rate: number; minutes: number }> {
  const started = performance.now();
  const result = await startRun(await loadRecipe("recipes/toolcall-grpo.yaml", [...grpo, ...reward]), {
    runsDir: join(work, "runs"),
    factory: engineFactory,
  });
  if (result.status !== "completed" || !result.lastCheckpoint)
    throw new Error(`GRPO (${reward.join(" ")}): ${result.status}`);
  const minutes = (performance.now() - started) / 60_000;
  return { rate: await heldOutFailureRate(join(result.dir, result.lastCheckpoint)), minutes };
}
const baseRate = await heldOutFailureRate(BASE);
const byVerifier = await grpoFailureRate(["reward.kind=verifier"]);
const byJudge = await grpoFailureRate([
  "reward.kind=judge",
  `reward.judge.baseUrl=${judgeServer.baseURL}`,
  "reward.judge.model=toolcall-judge",
  `reward.judge.rubric=${rubricPath}`,
  "reward.judge.apiKeyEnv=ARC_BENCH_JUDGE_KEY",
  "reward.judge.concurrency=8",
  "reward.judge.deadlineMs=120000",
]);
await judgeServer.close();
await rm(work, { recursive: true, force: true });
console.log(
  `GRPO ${grpoSteps} steps from the toolcall base (held-out failure rate ${baseRate.toFixed(3)} on 512): verifier's reward ${byVerifier.rate.toFixed(3)} (${byVerifier.minutes.toFixed(1)} min), judge's reward ${byJudge.rate.toFixed(3)} (${byJudge.minutes.toFixed(1)} min)`,
);

// the judge-rewarded run's reduction of the held-out failure rate as a share of the verifier-rewarded run's; null
// when the verifier's reward reduces nothing (there is no gain to take a share of)
const verifierGain = baseRate - byVerifier.rate;
writeBenchResults("judges", {
  judge_agreement: report.agreement,
  judge_kappa: report.kappa,
  judge_kappa_vs_verifier_heldout: report.kappa,
  judge_path_gain_ratio: verifierGain > 0 ? (baseRate - byJudge.rate) / verifierGain : null,
  judge_calls_per_s: labelled.length / judgingS,
  unseen_family: UNSEEN_FAMILY,
  judge_kappa_unseen_family: unseenReport.kappa,
  judge_agreement_unseen_family: unseenReport.agreement,
  unseen_family_answers: unseenReport.items,
  unseen_family_unjudged: unseenReport.unjudged,
  unseen_family_gate: unseenRefusal ? `refused: ${unseenRefusal}` : "trusted",
  judge_min_kappa: minKappa,
  grpo_judge_reward_failure_rate: byJudge.rate,
  grpo_verifier_reward_failure_rate: byVerifier.rate,
  base_failure_rate: baseRate,
  held_out_traces: report.items,
  held_out_failed: labelled.filter((t) => t.label.failed).length,
  judge_unjudged: report.unjudged,
  judge_failed_precision: report.failed.precision,
  judge_failed_recall: report.failed.recall,
  judge_classes: report.classes,
  grpo_steps: grpoSteps,
  grpo_minutes: { verifier: byVerifier.minutes, judge: byJudge.minutes },
});
