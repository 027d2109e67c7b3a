import {
  type AdaptiveTeachingRewardConfigInput,
  adaptiveTeachingReward,
  adaptiveTeachingRewardConfig,
  approximateTokenCounter,
  type ChatModel,
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
  /** The teacher's stated diagnosis; `unknown` when it stated none. */
  judgement: ProbeJudgement;
}

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

  constructor(private readonly options: TeachingRewarderOptions) {
    this.templates = teachingTemplates(options.templates);
    this.counter = options.tokenCounter ?? approximateTokenCounter;
    adaptiveTeachingRewardConfig(options.reward);
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
    const teachingTokens = read.teaching ? this.counter.count(read.teaching) : 0;
    const reward = adaptiveTeachingReward(
      {
        taughtScore: taught.score,
        baselineScore: baseline.score,
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
      judgement: read.diagnosis ?? "unknown",
    };
  }

  private attempt(task: Task, teaching: string): Promise<Attempt> {
    const key = `${task.id}\u0000${teaching}`;
    let attempt = this.attempts.get(key);
    if (!attempt) {
      const content = teaching
        ? renderTemplate(this.templates.studentWithGuidance, { question: task.question, teaching })
        : renderTemplate(this.templates.baseline, { question: task.question });
      const messages: TeachMessage[] = [
        ...(this.templates.studentSystem
          ? [{ role: "system" as const, content: this.templates.studentSystem }]
          : []),
        { role: "user", content },
      ];
      attempt = this.options.student
        .complete(messages, { maxTokens: this.options.maxSolutionTokens ?? 128, temperature: 0 })
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
