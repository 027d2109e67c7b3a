import type { Detector } from "../detect/detector.ts";
import { failedVerdict, passedVerdict, unknownVerdict, type Verdict } from "../detect/verdict.ts";
import type { Trace } from "../trace/index.ts";
import { type JudgeBudget, judgeWindow, type MinuteWindow } from "./budget-window.ts";
import type { JudgeClient } from "./judge-client.ts";
import { judgeMessages } from "./judge-prompt.ts";
import { JudgeQueueRefusal } from "./judge-queue.ts";
import { type JudgeReply, judgeReplySchema, parseJudgeReply } from "./judge-reply.ts";
import type { Rubric } from "./rubric.ts";

/** Judged replies by (trace, rubric version, judge model). */
export interface JudgeCache {
  get(key: string): JudgeReply | undefined;
  set(key: string, reply: JudgeReply): void;
}

/** A cache of the most recent `limit` judgements, in memory. */
export function memoryJudgeCache(limit = 10_000): JudgeCache {
  const replies = new Map<string, JudgeReply>();
  return {
    get: (key) => replies.get(key),
    set(key, reply) {
      if (replies.size >= limit) replies.delete(replies.keys().next().value as string);
      replies.set(key, reply);
    },
  };
}

/** Options of a judge detector. */
export interface JudgeDetectorOptions {
  rubric: Rubric;
  client: JudgeClient;
  /** The judge model's name, as its endpoint knows it. */
  model: string;
  budget?: JudgeBudget;
  /** A spending window shared with the tenant's other judges (then `budget` and `now` are not read). */
  window?: MinuteWindow;
  cache?: JudgeCache;
  /** Most tokens of one reply. */
  maxTokens?: number;
  now?: () => number;
}

/** Detector id of the judge. */
export const JUDGE_DETECTOR_ID = "judge";

/** A judge as a detector, and its verdict on one trace (it reads the trace alone: no verifier, solution or feedback). */
export interface JudgeDetector extends Detector {
  /** The verdict on `trace`; `deadline` (ms since the epoch) ends the wait for the judge, the trace then unknown. */
  judge(trace: Trace, options?: { deadline?: number }): Promise<Verdict>;
}

/**
 * A detector that asks a judge model, through any OpenAI-compatible endpoint, whether a trace's last answer
 * fails the tenant's rubric, with structured output (`response_format` `json_schema`) parsed strictly. A failure is
 * `rubric_violation` with the rubric's class as its path (what clustering groups on) and the judge's quote as
 * evidence. Replies are cached by (trace, rubric version, judge model). A trace the judge could not judge — its
 * budget spent, the endpoint down or slow, a malformed reply — gets verdict `unknown` with the reason, and is judged
 * again when it is detected again; nothing is thrown.
 */
export function createJudgeDetector(options: JudgeDetectorOptions): JudgeDetector {
  const { rubric, client, model } = options;
  const cache = options.cache ?? memoryJudgeCache();
  const window = judgeWindow(options);
  const responseFormat = {
    type: "json_schema",
    json_schema: { name: "judge_verdict", strict: true, schema: judgeReplySchema(rubric) },
  };
  const verdictOf = (trace: Trace, reply: JudgeReply): Verdict => {
    if (!reply.failed)
      return passedVerdict(
        trace.id,
        JUDGE_DETECTOR_ID,
        `the judge (${model}) found no rubric failure: ${reply.evidence}`,
        reply.confidence,
      );
    const rubricClass = rubric.classes.find((c) => c.name === reply.class);
    return failedVerdict(trace.id, JUDGE_DETECTOR_ID, {
      class: "rubric_violation",
      severity: rubricClass?.severity ?? "medium",
      path: reply.class,
      message: `${reply.class}: ${rubricClass?.description ?? ""} (judge ${model}, confidence ${reply.confidence})`,
      snippet: reply.evidence,
      score: 1 - reply.confidence,
    });
  };
  const judge = async (trace: Trace, judging: { deadline?: number } = {}): Promise<Verdict> => {
    const key = `${trace.id}\u0000${rubric.version}\u0000${model}`;
    const cached = cache.get(key);
    if (cached) return verdictOf(trace, cached);
    const refusal = window.refusal();
    if (refusal) return unknownVerdict(trace.id, JUDGE_DETECTOR_ID, `not judged yet: ${refusal}`);
    const spent = window.reserve();
    let reply: JudgeReply;
    try {
      const answer = await client.complete({
        model,
        messages: judgeMessages(rubric, trace),
        responseFormat,
        maxTokens: options.maxTokens ?? 256,
        ...judging,
      });
      spent.tokens = answer.tokens ?? 0;
      reply = parseJudgeReply(answer.content, rubric);
    } catch (error) {
      if (error instanceof JudgeQueueRefusal) {
        window.cancel(spent);
        return unknownVerdict(trace.id, JUDGE_DETECTOR_ID, `not judged yet: ${error.message}`);
      }
      return unknownVerdict(
        trace.id,
        JUDGE_DETECTOR_ID,
        `the judge could not judge it: ${(error as Error).message}`,
      );
    }
    cache.set(key, reply);
    return verdictOf(trace, reply);
  };
  return {
    id: JUDGE_DETECTOR_ID,
    description: `a judge model (${model}) checks the answer against the tenant's rubric (version ${rubric.version})`,
    judge,
    detect: async (trace) => [await judge(trace)],
  };
}
