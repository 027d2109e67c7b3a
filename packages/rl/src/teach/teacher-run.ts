import { basename, resolve } from "node:path";
import {
  EngineChatModel,
  generateTasks,
  getTaskFamily,
  type InferenceEngine,
  type Task,
  type TokenCounter,
  type TrainEngine,
} from "@arc/core";
import type { ChatExample } from "../data/index.ts";
import { teachingOf } from "../families/family-teachings.ts";
import type { Recipe } from "../recipe/index.ts";
import type { GroupSampler } from "../rollout/index.ts";
import type { EngineChoice, EngineFactory } from "../run/engine-factory.ts";
import { heldOutTasks, type TrainingData } from "../run/training-data.ts";
import { evaluateTeaching } from "./evaluate-teaching.ts";
import type { ConversionsTold, FamilyTeaching } from "./family-teaching.ts";
import { kindsWorthTelling, measureStrongConversions } from "./measure-strong-conversions.ts";
import { trainEngineReferenceLikelihood } from "./reference-likelihood.ts";
import { generateTeachingExamples } from "./teaching-examples.ts";
import { TeachingRewarder } from "./teaching-rewarder.ts";
import { teachingSampler } from "./teaching-sampler.ts";

/** A held-out evaluation of a teacher: its student's figures when taught by it. */
export interface TeacherEvaluation {
  /** The taught student's accuracy on the held-out tasks. */
  evalAccuracy: number;
  evalFailureRate: number;
  /** NDR (share of tasks the teaching left no worse), the student's accuracy alone, mean teaching tokens. */
  extra: Record<string, number>;
}

/** What a recipe's `teaching` block makes of a run: its data, its rollouts and its held-out evaluation. */
export interface TeacherRun {
  /** Tasks to teach on (the prompt pool), SFT's labelled teachings, and the held-out tasks. */
  data: TrainingData;
  /** GRPO: teachings sampled from the generator, each rewarded by what it does to the frozen student. */
  sampler: GroupSampler;
  /** The frozen student taught by the teacher on `engine`, on the held-out tasks. */
  evaluate(engine: InferenceEngine, signal?: AbortSignal): Promise<TeacherEvaluation>;
  /** What building the data measured (labelled examples, the conversions strong students are told). */
  summary: Record<string, unknown>;
  close(): Promise<void>;
}

/**
 * Which strong students the SFT labels tell their request's conversions (`teaching.strongStudentTeaching`); for
 * `measured`, the kinds of request whose telling clearly out-earned silence with the frozen student on the run's
 * tasks (`kindsWorthTelling`), with the scores measured.
 */
async function strongStudentConversions(
  setting: NonNullable<Recipe["teaching"]>["strongStudentTeaching"],
  tasks: readonly Task[],
  rewarder: TeachingRewarder,
  familyTeaching: FamilyTeaching,
): Promise<{ told: ConversionsTold; measured?: unknown }> {
  if (setting !== "measured") return { told: setting === "conversions" ? "all" : [] };
  const scores = await measureStrongConversions(tasks, rewarder, familyTeaching);
  return { told: kindsWorthTelling(scores), measured: scores };
}

/** A train engine over `modelDir` that is never stepped: the frozen student's teacher-forced log-probs. */
function frozenTrainEngine(
  factory: EngineFactory,
  modelDir: string,
  engine: EngineChoice,
): Promise<TrainEngine> {
  return factory.trainEngine(modelDir, {
    learningRate: 0,
    warmupSteps: 0,
    decaySteps: 0,
    minLearningRate: 0,
    weightDecay: 0,
    maxGradNorm: 0,
    trainThreads: 1,
    engine: { ...engine, lora: undefined, processes: 1 },
  });
}

/** What labelling a teacher run's SFT data works with. */
interface LabellingContext {
  tasks: readonly Task[];
  student: EngineChatModel;
  templates: Parameters<typeof generateTeachingExamples>[0]["templates"];
  tokenCounter: TokenCounter;
  rewarder: TeachingRewarder;
  /** The taught family's teaching: its reference teacher labels the probes. */
  familyTeaching: FamilyTeaching;
}

/**
 * SFT's labelled teachings: the frozen student probed on each task and the teaching its probe calls for, telling
 * strong students the conversions `teaching.strongStudentTeaching` chooses; with what the labelling measured.
 */
async function labelledTeachings(
  recipe: Recipe,
  { tasks, student, templates, tokenCounter, rewarder, familyTeaching }: LabellingContext,
): Promise<{ examples: ChatExample[]; summary: Record<string, unknown> }> {
  const teaching = recipe.teaching as NonNullable<Recipe["teaching"]>;
  const conversions = await strongStudentConversions(
    teaching.strongStudentTeaching,
    tasks,
    rewarder,
    familyTeaching,
  );
  const labelled = await generateTeachingExamples({
    tasks,
    teaching: familyTeaching,
    student,
    templates,
    tokenCounter,
    sampledProbes: teaching.sampledProbes,
    syntheticShare: teaching.syntheticShare,
    seed: recipe.data.seed,
    conversionsTold: conversions.told,
  });
  return {
    examples: labelled.map((e) => ({ messages: e.messages, reply: e.reply, guided: false })),
    summary: {
      examples: labelled.length,
      weakExamples: labelled.filter((e) => e.diagnosis === "weak").length,
      conversionsTold: conversions.told,
      ...(conversions.measured ? { strongStudentsTold: conversions.measured } : {}),
    },
  };
}

/** A held-out teaching evaluation's figures as a step's record carries them. */
function teacherEvaluation(
  overall: Awaited<ReturnType<typeof evaluateTeaching>>["overall"],
): TeacherEvaluation {
  const accuracy = overall.taughtAccuracy ?? 0;
  return {
    evalAccuracy: accuracy,
    evalFailureRate: 1 - accuracy,
    extra: {
      evalNdr: overall.ndr ?? 1,
      evalStudentAloneAccuracy: overall.baselineAccuracy ?? 0,
      evalTeachingTokens: overall.meanTeachingTokens ?? 0,
    },
  };
}

/**
 * Opens a teacher run: loads the frozen student on the run's engine (and, for the reference-likelihood score, once
 * more as a train engine that is never stepped, for its teacher-forced log-probs), builds the rewarder the SFT
 * labels and the GRPO reward share, and for SFT probes the student to label its teachings.
 */
export async function openTeacherRun(
  recipe: Recipe,
  factory: EngineFactory,
  engine: EngineChoice,
): Promise<TeacherRun> {
  const teaching = recipe.teaching as NonNullable<Recipe["teaching"]>;
  const family = getTaskFamily(recipe.data.env);
  const familyTeaching = teachingOf(recipe.data.env);
  const studentDir = resolve(teaching.student);
  const studentEngine = await factory.inferenceEngine(studentDir, 0, engine);
  let likelihoodStudent: TrainEngine | undefined;
  try {
    const student = new EngineChatModel(studentEngine, {
      model: basename(studentDir),
      seed: recipe.data.seed,
    });
    const tokenCounter = await factory.tokenCounter(studentDir);
    const templates = { ...familyTeaching.templates, maxProbeTokens: teaching.maxProbeTokens };
    if (teaching.studentScore === "reference-likelihood")
      likelihoodStudent = await frozenTrainEngine(factory, studentDir, engine);
    const studentRender = await factory.renderExample(studentDir);
    const rewarder = new TeachingRewarder({
      student,
      verify: familyTeaching.verify,
      templates,
      reward: teaching.reward,
      tokenCounter,
      maxSolutionTokens: teaching.maxSolutionTokens,
      answersOf: familyTeaching.answersOf,
      // the run-time guard the teacher serves under: a conversion the request does not support never reaches the
      // student, so a teacher earns nothing from stating one
      ungroundedClaims: family.ungroundedClaims,
      ...(likelihoodStudent
        ? {
            referenceLikelihood: trainEngineReferenceLikelihood(
              likelihoodStudent,
              studentRender,
              (task) => family.reference(task)[0],
            ),
          }
        : {}),
    });
    const tasks = generateTasks(family, {
      split: recipe.data.split,
      seed: recipe.data.seed,
      count: recipe.data.count,
    });
    const evalTasks = heldOutTasks(recipe);
    const labelled =
      recipe.trainer.algorithm === "sft"
        ? await labelledTeachings(recipe, {
            tasks,
            student,
            templates,
            tokenCounter,
            rewarder,
            familyTeaching,
          })
        : { examples: [], summary: {} };
    return {
      data: { prompts: tasks, examples: labelled.examples, preferences: [], evalTasks },
      sampler: teachingSampler(rewarder),
      async evaluate(teacherEngine, signal) {
        const result = await evaluateTeaching({
          student,
          teacher: new EngineChatModel(teacherEngine, { model: "teacher", seed: recipe.trainer.seed }),
          mode: "adaptive",
          tasks: evalTasks,
          verify: familyTeaching.verify,
          templates,
          tokenCounter,
          maxTeacherTokens: recipe.trainer.maxTokens,
          maxSolutionTokens: teaching.maxSolutionTokens,
          completed: familyTeaching.completed,
          answersOf: familyTeaching.answersOf,
          ungroundedClaims: family.ungroundedClaims,
          concurrency: 32,
          signal,
        });
        return teacherEvaluation(result.overall);
      },
      summary: labelled.summary,
      async close() {
        await likelihoodStudent?.close?.();
        await studentEngine.close?.();
      },
    };
  } catch (error) {
    await likelihoodStudent?.close?.();
    await studentEngine.close?.();
    throw error;
  }
}
