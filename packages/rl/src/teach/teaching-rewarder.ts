import {
  type AdaptiveTeachingRewardConfigInput,
  adaptiveTeachingReward,
  adaptiveTeachingRewardConfig,
  approximateTokenCounter,
  type ChatModel,
  InvalidInputError,
  type ProbeJudgement,
  parseStudentOutput,
  parseTeacherOutput,
  renderTemplate,
  solutionAnswers,
  type Task,
  type TeachingTemplates,
  type TeachingTemplatesInput,
  type TeachMessage,
  type TokenCounter,
  teachingTemplates,
  truncateProbe,
  type UngroundedClaims,
  type Verify,
} from "@arc/core";
import { probeMessages } from "./teacher-messages.ts";

/** What one teacher output earned against the frozen student. */
export interface TeachingScore {
  /** The adaptive teaching reward (`trainer.reward.adaptiveTeaching`). */
  reward: number;
  /** The guidance the student saw after parsing and leak handling; empty for none. */
  teaching: string;
  /** Its length in the counter's tokens. */
  teachingTokens: number;
  /** The student's score with the teaching (the baseline's when the teaching is empty). */
  taughtScore: number;
  /** The student's score alone. */
  baselineScore: number;
  /** With `referenceLikelihood`: the student's probability of writing the reference answer with the teaching / alone. */
  likelihood?: { taught: number; baseline: number };
  /** The teacher's stated diagnosis; `unknown` when it stated none. */
  judgement: ProbeJudgement;
}

/** One cache entry per task and distinct teaching. */
const cacheKey = (task: Task, teaching: string) => `${task.id}\u0000${teaching}`;

interface Attempt {
  score: number;
  tokens: number;
}

/** Options of a TeachingRewarder. */
export interface TeachingRewarderOptions {
  /** The frozen student; it answers greedily, so its probe, baseline and guided answers are cached. */
  student: ChatModel;
  /** Judges the student's attempts. */
  verify: Verify<Task>;
  /** Protocol templates (probe budget included). */
  templates?: TeachingTemplatesInput;
  /** `trainer.reward.adaptiveTeaching`. */
  reward?: AdaptiveTeachingRewardConfigInput;
  /** Counts teaching and probe tokens in the student's units (default approximateTokenCounter). */
  tokenCounter?: TokenCounter;
  /** Budget of each student solution (default 128). */
  maxSolutionTokens?: number;
  /** The values a task's teaching must not reveal (redacted when it does); default: as `runTeaching` derives them. */
  answersOf?: (task: Task) => string[];
  /** The claims of a teaching its question does not support, cut out before the student reads it (see `runTeaching`). */
  ungroundedClaims?: UngroundedClaims;
  /**
   * Rewards a teaching by how much likelier it makes the student to write the reference answer, instead of by its
   * greedy verdict: dense where the verdict is sparse (a teaching that moves the right token from 0.2 to 0.5 earns
   * even when the greedy answer stays wrong). Needs the reward's `delta` form; the verdicts are still reported.
   */
  referenceLikelihood?: ReferenceLikelihood;
}

/** The frozen student's probability of the right answer, teacher-forced (see `TeachingRewarderOptions.referenceLikelihood`). */
export interface ReferenceLikelihood {
  /** The reply the student should write for a task (e.g. the family's reference answer). */
  reference(task: Task): string;
  /** The student's probability of writing `reply` after `messages`: the product of its token probabilities. */
  probability(messages: TeachMessage[], reply: string): Promise<number>;
}

/**
 * The reward side of teacher GRPO: runs the frozen student with and without a teacher's guidance
 * and scores the teaching with the adaptive teaching reward, exactly as `runTeaching` would (same
 * prompts, same parsing, same leak and claim handling). The student decodes greedily, so its probe and
 * baseline are computed once per task and its guided answer once per distinct teaching: a group of G
 * teacher samples that agree costs one student call.
 */
export class TeachingRewarder {
  /** The validated templates every prompt is rendered from. */
  readonly templates: TeachingTemplates;
  private readonly counter: TokenCounter;
  private readonly probes = new Map<string, Promise<string>>();
  private readonly attempts = new Map<string, Promise<Attempt>>();
  private readonly likelihoods = new Map<string, Promise<number>>();

  constructor(private readonly options: TeachingRewarderOptions) {
    this.templates = teachingTemplates(options.templates);
    this.counter = options.tokenCounter ?? approximateTokenCounter;
    const { form } = adaptiveTeachingRewardConfig(options.reward);
    if (options.referenceLikelihood && form !== "delta")
      throw new InvalidInputError(
        `trainer.reward.adaptiveTeaching.form: a reward on the reference's likelihood needs form 'delta' (a score in [0, 1]), got '${form}'`,
        { field: "trainer.reward.adaptiveTeaching.form" },
      );
  }

  /** The student's probe of a task, held to maxProbeTokens (cached). */
  probe(task: Task): Promise<string> {
    let probe = this.probes.get(task.id);
    if (!probe) {
      const budget = this.templates.maxProbeTokens;
      probe = this.options.student
        .complete(probeMessages(this.templates, task.question), { maxTokens: budget, temperature: 0 })
        .then(
          (reply) =>
            truncateProbe(reply.text, budget, {
              reportedTokens: reply.completionTokens,
              counter: this.counter,
            }).approach,
        );
      this.probes.set(task.id, probe);
    }
    return probe;
  }

  /** Scores one teacher output for a task against the student's unguided baseline. */
  async score(task: Task, teacherOutput: string): Promise<TeachingScore> {
    const ungrounded = this.options.ungroundedClaims;
    const read = parseTeacherOutput(teacherOutput, {
      answers: this.options.answersOf?.(task) ?? solutionAnswers(task.solution),
      ...(ungrounded ? { ungroundedClaims: (text: string) => ungrounded(task.question, text) } : {}),
    });
    const [baseline, taught] = await Promise.all([this.attempt(task, ""), this.attempt(task, read.teaching)]);
    const likelihood = this.options.referenceLikelihood
      ? await Promise.all([this.likelihood(task, read.teaching), this.likelihood(task, "")]).then(
          ([taught, baseline]) => ({ taught, baseline }),
        )
      : undefined;
    const teachingTokens = read.teaching ? this.counter.count(read.teaching) : 0;
    const reward = adaptiveTeachingReward(
      {
        taughtScore: likelihood?.taught ?? taught.score,
        baselineScore: likelihood?.baseline ?? baseline.score,
        teachingTokens,
        taughtTokens: taught.tokens,
        baselineTokens: baseline.tokens,
      },
      this.options.reward,
    );
    return {
      reward,
      teaching: read.teaching,
      teachingTokens,
      taughtScore: taught.score,
      baselineScore: baseline.score,
      ...(likelihood ? { likelihood } : {}),
      judgement: read.diagnosis ?? "unknown",
    };
  }

  /** What the student reads: the baseline prompt for an empty teaching, else the guided one. */
  private studentMessages(task: Task, teaching: string): TeachMessage[] {
    const content = teaching
      ? renderTemplate(this.templates.studentWithGuidance, { question: task.question, teaching })
      : renderTemplate(this.templates.baseline, { question: task.question });
    return [
      ...(this.templates.studentSystem
        ? [{ role: "system" as const, content: this.templates.studentSystem }]
        : []),
      { role: "user", content },
    ];
  }

  private likelihood(task: Task, teaching: string): Promise<number> {
    const key = cacheKey(task, teaching);
    let likelihood = this.likelihoods.get(key);
    if (!likelihood) {
      const scorer = this.options.referenceLikelihood as ReferenceLikelihood;
      likelihood = scorer.probability(this.studentMessages(task, teaching), scorer.reference(task));
      this.likelihoods.set(key, likelihood);
    }
    return likelihood;
  }

  private attempt(task: Task, teaching: string): Promise<Attempt> {
    const key = cacheKey(task, teaching);
    let attempt = this.attempts.get(key);
    if (!attempt) {
      attempt = this.options.student
        .complete(this.studentMessages(task, teaching), {
          maxTokens: this.options.maxSolutionTokens ?? 128,
          temperature: 0,
        })
        .then(async (reply) => {
          const { answer } = parseStudentOutput(reply.text);
          const verdict = await this.options.verify({ answer, text: reply.text }, task);
          return {
            score: typeof verdict === "number" ? verdict : verdict ? 1 : 0,
            tokens: reply.completionTokens,
          };
        });
      this.attempts.set(key, attempt);
    }
    return attempt;
  }
}
