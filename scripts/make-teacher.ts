/**
 * Trains the adaptive teacher of the `toolcall` environment against its frozen base student
 * (models/toolcall-base): SFT warm-up on generated teaching examples, then GRPO with the adaptive
 * teaching reward. Each stage is a teacher recipe; `key=value` overrides apply to every recipe given.
 *
 *   node --import tsx scripts/make-teacher.ts [recipes/teacher-sft.yaml recipes/teacher-grpo.yaml] [trainer.steps=50]
 *
 * Writes each recipe's `out` (HF layout) with a teacher.json beside the weights (recipe, figures, time).
 * Why a script and not `arc train`: the RL run loop trains one policy against a verifier reward; a
 * teacher run needs a second, frozen model inside the reward and its own data (probes of that model).
 */
import { writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import {
  generateTasks,
  getTaskFamily,
  parseTeacherOutput,
  type Task,
  type TeachingTemplatesInput,
} from "@arc/core";
import {
  byteTokenCounter,
  configForSize,
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  EngineChatModel,
  initWeights,
  readHfCheckpoint,
  renderChatExample,
  writeHfCheckpoint,
} from "@arc/engine";
import {
  type ConversionsTold,
  generateTeachingExamples,
  kindsWorthTelling,
  loadTeacherRecipe,
  measureStrongConversions,
  type TeacherRecipe,
  TeachingRewarder,
  TOOLCALL_TEACHING_TEMPLATES,
  toolcallAnswers,
  trainEngineReferenceLikelihood,
  trainTeacherGrpo,
  trainTeacherSft,
  verifyToolcallAttempt,
} from "@arc/rl";

const args = process.argv.slice(2);
const overrides = args.filter((a) => a.includes("="));
const paths = args.filter((a) => !a.includes("="));
const recipes = paths.length > 0 ? paths : ["recipes/teacher-sft.yaml", "recipes/teacher-grpo.yaml"];
const log = (line: string) => console.error(`[make-teacher] ${line}`);

async function teacherEngines(recipe: TeacherRecipe) {
  const settings = {
    learningRate: recipe.trainer.learningRate,
    warmupSteps: recipe.trainer.warmupSteps,
    decaySteps: recipe.trainer.decaySteps,
    minLearningRate: recipe.trainer.minLearningRate,
    maxGradNorm: recipe.trainer.maxGradNorm,
    trainThreads: recipe.trainer.trainThreads,
  };
  if (recipe.teacher.path) {
    const { config } = await readHfCheckpoint(recipe.teacher.path);
    return {
      config,
      trainer: await EmbeddedTrainEngine.fromCheckpoint(recipe.teacher.path, settings),
      generator: await EmbeddedInferenceEngine.load(recipe.teacher.path, { maxBatchSize: 64 }),
    };
  }
  const config = configForSize(recipe.teacher.size);
  const weights = initWeights(config, recipe.teacher.seed);
  return {
    config,
    trainer: await EmbeddedTrainEngine.create(config, weights, settings),
    generator: await EmbeddedInferenceEngine.create(config, weights, { maxBatchSize: 64 }),
  };
}

/**
 * Which strong students the SFT labels tell their request's conversions (`teaching.strongStudentTeaching`); for
 * `measured`, the kinds of request whose telling clearly out-earned silence with the frozen student on the recipe's
 * tasks (`kindsWorthTelling`).
 */
async function strongStudentConversions(
  recipe: TeacherRecipe,
  tasks: Task[],
  rewarder: TeachingRewarder,
): Promise<ConversionsTold> {
  const setting = recipe.teaching.strongStudentTeaching;
  if (setting !== "measured") return setting === "conversions" ? "all" : [];
  const scores = await measureStrongConversions(tasks, rewarder);
  for (const s of scores)
    log(
      `strong students told ${s.kind}: ${s.students} students, ${s.fixed} fixed, ${s.broken} broken, mean reward ${s.meanReward.toFixed(3)} ± ${s.rewardStandardError.toFixed(3)} (silence ${s.silentMeanReward.toFixed(3)})`,
    );
  const kinds = kindsWorthTelling(scores);
  log(`strong students told their conversions for: ${kinds.length > 0 ? kinds.join(", ") : "no kind"}`);
  return kinds;
}

async function run(path: string): Promise<void> {
  const recipe = await loadTeacherRecipe(path, overrides);
  const started = performance.now();
  const secs = () => Math.round((performance.now() - started) / 1000);
  const templates: TeachingTemplatesInput = {
    ...TOOLCALL_TEACHING_TEMPLATES,
    maxProbeTokens: recipe.teaching.maxProbeTokens,
  };
  const studentEngine = await EmbeddedInferenceEngine.load(recipe.student.path, { maxBatchSize: 64 });
  const student = new EngineChatModel(studentEngine, {
    model: basename(recipe.student.path),
    seed: recipe.data.seed,
  });
  const family = getTaskFamily(recipe.data.env);
  const tasks: Task[] = generateTasks(family, {
    split: recipe.data.split,
    seed: recipe.data.seed,
    count: recipe.data.count,
  });
  const { config, trainer, generator } = await teacherEngines(recipe);
  // the frozen student once more, as a train engine that is never stepped: its teacher-forced log-probs
  const likelihoodStudent =
    recipe.trainer.reward.studentScore === "reference-likelihood"
      ? await EmbeddedTrainEngine.fromCheckpoint(recipe.student.path)
      : undefined;
  const figures: Record<string, unknown> = {};
  const rewarder = new TeachingRewarder({
    student,
    verify: verifyToolcallAttempt,
    templates,
    reward: recipe.trainer.reward.adaptiveTeaching,
    tokenCounter: byteTokenCounter,
    maxSolutionTokens: recipe.teaching.maxSolutionTokens,
    answersOf: toolcallAnswers,
    // the run-time guard the teacher will serve under: a conversion the request does not support never reaches the
    // student, so a teacher earns nothing from stating one
    ungroundedClaims: family.ungroundedClaims,
    ...(likelihoodStudent
      ? {
          referenceLikelihood: trainEngineReferenceLikelihood(
            likelihoodStudent,
            renderChatExample,
            (task) => family.reference(task)[0],
          ),
        }
      : {}),
  });

  if (recipe.stage === "sft") {
    const conversionsTold = await strongStudentConversions(recipe, tasks, rewarder);
    figures.conversionsTold = conversionsTold;
    const examples = await generateTeachingExamples({
      tasks,
      student,
      templates,
      tokenCounter: byteTokenCounter,
      sampledProbes: recipe.data.sampledProbes,
      syntheticShare: recipe.data.syntheticShare,
      seed: recipe.data.seed,
      conversionsTold,
    });
    const weak = examples.filter((e) => e.diagnosis === "weak").length;
    log(
      `${path}: ${examples.length} teaching examples (${weak} weak, ${examples.length - weak} strong) in ${secs()}s`,
    );
    Object.assign(figures, { examples: examples.length, weakExamples: weak });
    const held = examples.filter((e) => e.source === "student").slice(0, 48);
    await trainTeacherSft({
      trainer,
      examples,
      render: renderChatExample,
      steps: recipe.trainer.steps,
      batchSize: recipe.trainer.promptsPerStep,
      seed: recipe.data.seed,
      onStep: async (step, m) => {
        if (step % recipe.trainer.evalEvery !== 0 && step !== recipe.trainer.steps) return;
        await generator.setWeights(step, trainer.weights());
        const outs = await generator.generate(
          held.map((e) => ({ messages: e.messages, maxTokens: recipe.trainer.maxTokens, temperature: 0 })),
        );
        const agree = outs.filter(
          (o, i) => parseTeacherOutput(o.text).diagnosis === held[i].diagnosis,
        ).length;
        const exact = outs.filter((o, i) => o.text === held[i].reply).length;
        log(
          `sft step ${step} loss ${m.loss.toFixed(3)} diagnosis agreement ${agree}/${held.length} exact ${exact}/${held.length} (${secs()}s)`,
        );
        Object.assign(figures, { sftLoss: m.loss, diagnosisAgreement: agree / held.length });
      },
    });
  } else {
    await trainTeacherGrpo({
      generator,
      trainer,
      rewarder,
      tasks,
      steps: recipe.trainer.steps,
      promptsPerStep: recipe.trainer.promptsPerStep,
      seed: recipe.trainer.seed,
      settings: {
        samplesPerPrompt: recipe.trainer.samplesPerPrompt,
        temperature: recipe.trainer.temperature,
        maxTokens: recipe.trainer.maxTokens,
        normalization: recipe.trainer.normalization,
        clipEpsilon: recipe.trainer.clipEpsilon,
        klCoef: recipe.trainer.klCoef,
      },
      onStep: (step, r) => {
        log(
          `grpo step ${step} reward ${r.meanReward.toFixed(3)} ndr ${r.ndr.toFixed(3)} taught acc ${r.taughtAccuracy.toFixed(2)} teaching tokens ${r.meanTeachingTokens.toFixed(1)}${r.meanLikelihoodGain === null ? "" : ` likelihood gain ${r.meanLikelihoodGain.toFixed(4)}`} groups ${r.groups}/${r.groups + r.uniform}${r.metrics ? ` loss ${r.metrics.loss.toFixed(4)}` : " (no signal, no step)"} (${secs()}s)`,
        );
        Object.assign(figures, { lastMeanReward: r.meanReward, lastNdr: r.ndr });
      },
    });
  }
  await trainer.close();
  await likelihoodStudent?.close();
  await writeHfCheckpoint(recipe.out, config, trainer.exportTensors());
  const record = {
    recipe,
    command: `node --import tsx scripts/make-teacher.ts ${[path, ...overrides].join(" ")}`,
    figures,
    trainSeconds: secs(),
  };
  await writeFile(join(recipe.out, "teacher.json"), `${JSON.stringify(record, null, 2)}\n`);
  log(`${path}: wrote ${recipe.out} in ${secs()}s`);
}

for (const path of recipes) await run(path);
