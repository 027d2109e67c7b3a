import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { CanaryPolicy, DetectorRegistry, InvalidInputError, solutionsByQuestion, type Task } from "@arc/core";
import { loadChatTokenizer } from "@arc/engine";
import type { WarmUpReport } from "@arc/rl";
import { loadServerConfig } from "../config/server-config.ts";
import { setReleaseSettings } from "../deploy/release-settings.ts";
import { failureRatesBetween } from "../failures/index.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { findTenant } from "../store/tenants.ts";
import { type DemoDatasets, synthesizeDemoDatasets } from "./demo-datasets.ts";
import { DEMO_FAMILY, demoModelName } from "./demo-family.ts";
import { type DemoOptions, demoPaths } from "./demo-options.ts";
import { measureAndSummarize } from "./demo-outcome.ts";
import {
  type DemoPlan,
  demoPlanFor,
  gatesWhy,
  TARGET_SHARE_OF_BASE_RATE,
  TRAIN_THREADS,
  WARMUP_SHARE_OF_TRAINING,
} from "./demo-plan.ts";
import { DemoProgress, LiveLine, sleep } from "./demo-progress.ts";
import type { DemoResult } from "./demo-result.ts";
import { demoRunLineage } from "./demo-runs.ts";
import { trainLoraCandidate } from "./lora-candidate.ts";
import { longestAgentPrompt, ProductionAgent } from "./production-agent.ts";
import { awaitRelease } from "./release-phases.ts";
import { REPO_ROOT } from "./train-candidate.ts";
import { type DpoCandidate, trainDpoCandidate } from "./train-dpo.ts";
import { warmUp } from "./warm-up.ts";

export { type DemoOptions, demoPaths, REPO_ROOT };

/** Refuses a base model whose context cannot hold the agent's prompts (its tools included) and their answers. */
async function checkAgentFits(baseModel: string, tasks: readonly Task[], maxTokens: number): Promise<void> {
  const context = JSON.parse(readFileSync(join(baseModel, "config.json"), "utf8")).max_position_embeddings;
  const longest = longestAgentPrompt(await loadChatTokenizer(baseModel), tasks.slice(0, 256));
  if (typeof context === "number" && longest + maxTokens > context)
    throw new InvalidInputError(
      `base model: ${baseModel}'s chat template renders the agent's prompt with its tools in ${longest} tokens (the longest of 256), which with ${maxTokens} to answer exceeds its context of ${context}`,
      { field: "baseModel" },
    );
}

/** Runs the whole loop once on the embedded defaults and returns what it measured (the caller writes the files). */
export async function runDemo(options: DemoOptions): Promise<{ result: DemoResult; server: RunningServer }> {
  if (!(options.minutes > 0)) {
    throw new InvalidInputError(`--minutes: expected a positive number, got ${options.minutes}`, {
      field: "minutes",
    });
  }
  const baseModel = resolve(options.baseModel);
  if (!existsSync(join(baseModel, "config.json"))) {
    throw new InvalidInputError(`base model: expected a checkpoint (config.json) in ${baseModel}`, {
      field: "baseModel",
    });
  }
  const plan = demoPlanFor(baseModel);
  const tasks: Task[] = DEMO_FAMILY.generate({ split: "production", seed: options.seed, count: 5000 });
  await checkAgentFits(baseModel, tasks, options.maxTokens ?? 96);
  const live = new LiveLine(options.out);
  const progress = new DemoProgress(Date.now(), options.minutes * 60_000, live, options.out);

  // 1. platform
  const home = resolve(options.home);
  for (const part of [
    "data",
    "data.lock",
    "runs",
    "datasets",
    "credentials.json",
    "summary.json",
    "report.html",
  ]) {
    rmSync(join(home, part), { recursive: true, force: true });
  }
  mkdirSync(home, { recursive: true });
  const setupRegistry = (registry: DetectorRegistry) => {
    registry.resolveSolutionsWith(solutionsByQuestion(tasks));
  };
  const server = await startServer(loadServerConfig(process.env, { ...plan.server, home, port: 0 }), {
    release: {
      registryFor: () => new DetectorRegistry().resolveSolutionsWith(solutionsByQuestion(tasks)),
      onEvent: (line) => live.done(`  · ${line}`),
      deployerIntervalMs: 500,
      validatorIntervalMs: 1000,
      judge: {
        maxTokens: options.maxTokens ?? 96,
        ...(plan.validatorConcurrency ? { concurrency: plan.validatorConcurrency } : {}),
      },
    },
    failures: { setupRegistry },
  });
  const stopOnFailure: (() => Promise<void>)[] = [];
  try {
    return {
      result: await demoLoop({ server, tasks, setupRegistry, options, plan, progress, stopOnFailure }),
      server,
    };
  } catch (error) {
    for (const stop of stopOnFailure) await stop().catch(() => {});
    await server.close();
    throw error;
  }
}

/**
 * Phase 1: the demo's tenant gets the plan's gates and canary policy, and the base model registered as promoted; the
 * plan and its reasons are said on `progress`.
 */
async function registerDemoBase(
  server: RunningServer,
  plan: DemoPlan,
  baseModel: string,
  progress: DemoProgress,
) {
  const { db } = server;
  const credentials = server.credentials;
  if (!credentials) throw new Error("the demo server made no credentials");
  const tenant = await findTenant(db, credentials.tenant);
  if (!tenant) throw new Error(`the demo's tenant ${credentials.tenant} is not in the store`);
  const tenantId = tenant.id;
  await setReleaseSettings(db, tenantId, { gates: plan.gates, canary: plan.canary });
  const base = await registerModelVersion(db, tenantId, {
    name: demoModelName("base"),
    status: "promoted",
    artifactDir: baseModel,
    actor: "demo",
    metrics: existsSync(join(baseModel, "base-model.json"))
      ? (JSON.parse(readFileSync(join(baseModel, "base-model.json"), "utf8")) as Record<string, unknown>)
      : {},
  });
  progress.say(
    `Arc demo — server ${server.url}, tenant ${credentials.tenant}, base model ${baseModel}${plan.importedModel ? ` (${plan.importedModel}, imported)` : ""}\n  training: ${plan.training}`,
  );
  const gatesExplanation = gatesWhy(base.metrics.productionFailureRate, plan.importedModel);
  const canary = CanaryPolicy.parse(plan.canary);
  progress.say(
    `gates: ${JSON.stringify(plan.gates)}\n  why: ${gatesExplanation}\n` +
      `canary: ${Object.keys(plan.canary).length === 0 ? "the default policy" : `the policy ${JSON.stringify(plan.canary)}`} (ramp ${canary.ramp.map((r) => `${r * 100}%`).join(" → ")}, ${canary.minSamplesPerStage} judged canary calls a stage at least, a sequential test built to catch a failure-rate increase of ${canary.minDetectableIncrease})`,
  );
  progress.endPhase("platform", `server up, base model registered as ${base.id} (promoted)`);
  return { credentials, tenantId, base, gatesExplanation };
}

/** The live progress line: the agent's traffic and each version's failure rate over the last 60 s. */
function trafficLineOf(context: {
  db: RunningServer["db"];
  tenantId: string;
  names: Map<string, string>;
  agent: ProductionAgent;
  progress: DemoProgress;
}): (phase: string) => Promise<string> {
  const { db, tenantId, names, agent, progress } = context;
  return async (phase) => {
    const rates = await failureRatesBetween(db, tenantId, new Date(Date.now() - 60_000)).catch(
      // a busy database (the engine holding the main thread) answers the next line
      () => [],
    );
    const perVersion = rates
      .map((r) => `${names.get(r.modelVersion) ?? r.modelVersion} ${r.failureRate.toFixed(2)} (n=${r.n})`)
      .join(", ");
    const s = agent.stats;
    return `${phase} [${progress.elapsed().toFixed(0)} s] traffic ${s.sent} sent, ${s.answered} answered (${s.toolCalls} tool calls), ${s.errors} errors · failure rate last 60 s: ${perVersion || "waiting for verdicts"}`;
  };
}

/**
 * Phase 2: the base model serves the agent's traffic until the plan's baseline ends (later, up to its latest end,
 * while fewer than `baselineCalls` were answered; a short baseline is said in the notes). Returns when it ended.
 */
async function awaitBaseline(context: {
  agent: ProductionAgent;
  plan: DemoPlan;
  options: DemoOptions;
  progress: DemoProgress;
  trafficLine: (phase: string) => Promise<string>;
}): Promise<number> {
  const { agent, plan, options, progress, trafficLine } = context;
  const baselineShortest = Math.max(progress.at(plan.baselineEndsAt), Date.now() + 8_000);
  const baselineLongest = Math.max(progress.at(plan.baselineEndsAtLatest), baselineShortest);
  while (
    Date.now() < baselineShortest ||
    (agent.stats.answered < plan.baselineCalls && Date.now() < baselineLongest)
  ) {
    progress.live.update(await trafficLine("baseline"));
    await sleep(1000);
  }
  const baselineEnd = Date.now();
  if (agent.stats.answered < plan.baselineCalls)
    progress.notes.push(
      `the baseline gathered ${agent.stats.answered} answered calls by ${(plan.baselineEndsAtLatest * 100).toFixed(0)}% of the budget, fewer than the ${plan.baselineCalls} the warm-up learns well from: it answered ${(agent.stats.answered / ((baselineEnd - progress.began) / 1000)).toFixed(1)} calls a second (--baseline-rate asks ${options.baselineRate}).`,
    );
  progress.endPhase("baseline traffic", await trafficLine("baseline"));
  return baselineEnd;
}

/** The loop itself, on a started server: the phases in order, each in its own file, and the results. */
async function demoLoop(context: {
  server: RunningServer;
  tasks: Task[];
  setupRegistry: (registry: DetectorRegistry) => void;
  options: DemoOptions;
  plan: DemoPlan;
  progress: DemoProgress;
  /** What to stop, before the server closes, when the loop fails: a running agent would retry forever. */
  stopOnFailure: (() => Promise<void>)[];
}): Promise<DemoResult> {
  const { server, options, plan, progress } = context;
  const maxTokens = options.maxTokens ?? 96;
  const baseModel = resolve(options.baseModel);
  const home = resolve(options.home);
  const { db } = server;
  const { credentials, tenantId, base, gatesExplanation } = await registerDemoBase(
    server,
    plan,
    baseModel,
    progress,
  );
  const names = new Map<string, string>([[base.id, base.name]]);

  // 2. production traffic on the base model
  const agent = new ProductionAgent({
    serverUrl: server.url,
    apiKey: credentials.tenantKey,
    tasks: context.tasks,
    ratePerSecond: options.baselineRate,
    maxTokens,
    maxInFlight: plan.agentMaxInFlight,
    timeoutMs: plan.agentTimeoutMs,
  });
  agent.start();
  context.stopOnFailure.push(() => agent.stop());
  const trafficLine = trafficLineOf({ db, tenantId, names, agent, progress });
  const baselineEnd = await awaitBaseline({ agent, plan, options, progress, trafficLine });
  agent.setRate(options.trainingRate);

  // 3. failures: verdicts and patterns came by themselves; synthesize datasets
  const datasets = await synthesizeDemoDatasets({ ...context, db, tenantId, home });

  // 4. train a candidate from the production model, as the plan says
  progress.say(
    `  the agent sends ${options.trainingRate} conversation(s) a second while the candidate trains on ${TRAIN_THREADS} threads, ${options.rate} after`,
  );
  const trafficSuffix = () => ` · agent ${agent.stats.sent} sent`;
  const { candidate, warmup } = await trainCandidate({
    db,
    tenantId,
    options,
    plan,
    home,
    maxTokens,
    datasets,
    baseModel,
    baseId: base.id,
    baselineEnd,
    progress,
    trafficSuffix,
  });
  names.set(candidate.id, candidate.name);
  agent.setRate(options.rate);

  // 5-6. validation and canary (the validator and the deployer pick the candidate up by themselves)
  await awaitRelease({ db, tenantId, candidate, progress, trafficLine, plan });

  // 7. measure the production model until the end of the budget, and the results
  return measureAndSummarize({
    db,
    tenantId,
    options,
    progress,
    base,
    candidate,
    warmup: warmup?.report ?? null,
    baselineEnd,
    names,
    datasets: [datasets.evalSet, ...datasets.trainedOn].map((d) => ({
      id: d.id,
      kind: d.kind,
      rows: d.rowCount,
    })),
    gatesWhy: gatesExplanation,
    stopAgent: () => agent.stop(),
    trafficLine,
  });
}

/**
 * Phase 4: a candidate trained from the production model as the plan says: LoRA on an imported model, else the SFT
 * warm-up and semi-online DPO on Arc's own base (its early stop aimed at a share of the baseline's failure rate).
 */
async function trainCandidate(context: {
  db: RunningServer["db"];
  tenantId: string;
  options: DemoOptions;
  plan: DemoPlan;
  home: string;
  maxTokens: number;
  datasets: DemoDatasets;
  baseModel: string;
  baseId: string;
  baselineEnd: number;
  progress: DemoProgress;
  trafficSuffix: () => string;
}): Promise<{ candidate: DpoCandidate; warmup: { report: WarmUpReport } | null }> {
  const { db, tenantId, options, plan, home, maxTokens, datasets, baseModel, baseId, baselineEnd, progress } =
    context;
  const { trafficSuffix } = context;
  const trainDeadline = Math.max(progress.at(plan.trainingEndsAt), Date.now() + 20_000);
  const baseline = (
    await failureRatesBetween(db, tenantId, new Date(progress.began), new Date(baselineEnd))
  ).find((r) => r.modelVersion === baseId);
  const store = { db, tenantId, baseModelId: baseId };
  return plan.base === "imported"
    ? await trainLoraCandidate({
        db,
        tenantId,
        options,
        home,
        baseModel,
        datasets,
        baseId,
        deadline: trainDeadline,
        progress,
        trafficSuffix,
        runs: demoRunLineage(store, [datasets.warmupPool ?? datasets.pool], [datasets.evalSet]),
      }).then((trained) => ({ candidate: trained.candidate, warmup: { report: trained.report } }))
    : await trainToyCandidate({
        db,
        tenantId,
        options,
        home,
        maxTokens,
        datasets,
        baseModel,
        baseId,
        trainDeadline,
        heldOutTarget: baseline && baseline.n > 0 ? baseline.failureRate * TARGET_SHARE_OF_BASE_RATE : null,
        progress,
        trafficSuffix,
        store,
      });
}

/** Phase 4 on Arc's own base: the SFT warm-up, then semi-online DPO from its checkpoint (or the base model's). */
async function trainToyCandidate(context: {
  db: RunningServer["db"];
  tenantId: string;
  options: DemoOptions;
  home: string;
  maxTokens: number;
  datasets: Awaited<ReturnType<typeof synthesizeDemoDatasets>>;
  baseModel: string;
  baseId: string;
  trainDeadline: number;
  /** The held-out failure rate that meets the demo's target; null: no early stop. */
  heldOutTarget: number | null;
  progress: DemoProgress;
  trafficSuffix: () => string;
  store: { db: RunningServer["db"]; tenantId: string; baseModelId: string };
}): Promise<{ candidate: DpoCandidate; warmup: { report: WarmUpReport; checkpoint: string | null } | null }> {
  const { options, datasets, progress, baseModel, home, store, trainDeadline } = context;
  const trainStart = Date.now();
  const trainingMs = trainDeadline - trainStart;
  const warmup =
    datasets.warmupPoolPath !== null && datasets.warmupPool !== null
      ? await warmUp({
          poolPath: datasets.warmupPoolPath,
          baseModel,
          home,
          options,
          deadline: trainStart + trainingMs * WARMUP_SHARE_OF_TRAINING,
          heldOutTarget: context.heldOutTarget,
          live: progress.live,
          progress: (line) => `${line}${context.trafficSuffix()}`,
          runs: demoRunLineage(store, [datasets.warmupPool]),
        })
      : null;
  if (warmup) reportWarmup(warmup, progress);
  // DPO keeps its own share of the training time: what an early warm-up leaves goes to measuring the new model
  const candidate = await trainDpoCandidate({
    db: context.db,
    tenantId: context.tenantId,
    options,
    home,
    maxTokens: context.maxTokens,
    datasets,
    startFrom: warmup?.checkpoint ?? baseModel,
    baseId: context.baseId,
    warmupRunId: warmup?.checkpoint ? warmup.report.runId : null,
    deadline: warmup
      ? Math.min(trainDeadline, Date.now() + trainingMs * (1 - WARMUP_SHARE_OF_TRAINING))
      : trainDeadline,
    progress,
    trafficSuffix: context.trafficSuffix,
    runs: demoRunLineage(
      store,
      [datasets.pool, ...(datasets.preferences ? [datasets.preferences] : [])],
      [datasets.evalSet],
    ),
  });
  return { candidate, warmup };
}

/** Ends the SFT warm-up's phase with how it went against its plan and its target. */
function reportWarmup(
  warmup: { report: WarmUpReport; checkpoint: string | null },
  progress: DemoProgress,
): void {
  const { report } = warmup;
  const heldOut = report.records.filter((r) => r.evalFailureRate !== undefined);
  const ending =
    report.targetReachedAtStep !== null
      ? ` (held-out target reached at step ${report.targetReachedAtStep}, whose checkpoint DPO starts from)`
      : report.stoppedAtDeadline
        ? " (stopped at its time budget)"
        : "";
  const replanned = report.replans
    .map(
      (r) =>
        `; re-planned at step ${r.atStep} (${r.secondsPerStep.toFixed(2)} s a step) to ${r.plannedSteps}`,
    )
    .join("");
  progress.endPhase(
    "SFT warm-up",
    `run ${report.runId}: ${report.steps} of ${report.plannedSteps} planned steps${replanned}${ending}, held-out failure ${heldOut[0]?.evalFailureRate?.toFixed(2) ?? "–"} → ${heldOut.at(-1)?.evalFailureRate?.toFixed(2) ?? "–"}${warmup.checkpoint ? "" : "; it wrote no checkpoint, so DPO starts from the base model"}`,
  );
  if (report.stoppedAtDeadline)
    progress.notes.push("the SFT warm-up was stopped at its share of the training phase's time.");
}
